package mcpbridge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// toolsnapsDir keeps every tool as MCP lists it (name, title, description,
// input and output schemas, annotations), one file per tool, so a change to
// what models see shows up in review as a diff of these files.
const toolsnapsDir = "testdata/toolsnaps"

const updateToolsnaps = "UPDATE_TOOLSNAPS=true go test ./mcpbridge -run TestToolSnapshots"

func toolSnap(t *testing.T, tl Tool) []byte {
	t.Helper()
	raw, err := json.Marshal(tl.mcpTool())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// Every tool matches its snapshot, and every snapshot is a tool. After an
// intended change (a new resource, a reworded doc), regenerate them with
// UPDATE_TOOLSNAPS=true and review the diff as part of the change.
func TestToolSnapshots(t *testing.T) {
	t.Parallel()
	update := os.Getenv("UPDATE_TOOLSNAPS") == "true"
	if update {
		if err := os.MkdirAll(toolsnapsDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, tl := range Tools() {
		names = append(names, tl.Name+".json")
		path := filepath.Join(toolsnapsDir, tl.Name+".json")
		got := toolSnap(t, tl)
		want, err := os.ReadFile(path)
		switch {
		case update:
			if !bytes.Equal(got, want) {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("updated %s", path)
			}
		case err != nil:
			t.Errorf("tool %s has no snapshot %s: what models see must be reviewed.\nRun `%s` and commit the new file.", tl.Name, path, updateToolsnaps)
		case !bytes.Equal(got, want):
			t.Errorf("tool %s differs from its snapshot %s: what models see changed.\nIf intended, run `%s` and commit the diff.\n%s",
				tl.Name, path, updateToolsnaps, firstDifference(want, got))
		}
	}
	files, err := os.ReadDir(toolsnapsDir)
	if err != nil && !update {
		t.Fatal(err)
	}
	for _, f := range files {
		if slices.Contains(names, f.Name()) {
			continue
		}
		path := filepath.Join(toolsnapsDir, f.Name())
		if update {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			t.Logf("removed %s", path)
			continue
		}
		t.Errorf("snapshot %s is of no tool (renamed or removed?).\nRun `%s` and commit the removal.", path, updateToolsnaps)
	}
}

// firstDifference shows the first line where the snapshot and the tool differ.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  snapshot: " + wl + "\n  now:      " + gl
		}
	}
	return ""
}
