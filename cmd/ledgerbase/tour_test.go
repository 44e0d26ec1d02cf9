package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// tourBlock is a README walk-through: the shell it runs and the lines it
// must print (the "# ..." comments that follow its commands, in order).
type tourBlock struct {
	name, script string
	want         []string
}

var tourRE = regexp.MustCompile("(?s)<!-- tour: ([a-z-]+) -->\n```sh\n(.*?)```\n<!-- /tour -->")

func readTours(t *testing.T) []tourBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []tourBlock
	for _, m := range tourRE.FindAllStringSubmatch(string(b), -1) {
		tb := tourBlock{name: m[1], script: m[2]}
		for _, l := range strings.Split(m[2], "\n") {
			if strings.HasPrefix(l, "# ") {
				tb.want = append(tb.want, strings.TrimPrefix(l, "# "))
			}
		}
		out = append(out, tb)
	}
	if len(out) == 0 {
		t.Fatal("the README has no <!-- tour: ... --> blocks")
	}
	return out
}

// The README's walk-throughs run as written on a fresh `serve --demo`, in
// order, and print exactly what the README says they print.
func TestTheREADMEToursRunOnAFreshDemo(t *testing.T) {
	if apitest.Backend() == "postgres" {
		t.Skip("`serve --demo` seeds an empty database: the tour runs on the embedded default")
	}
	for _, tool := range []string{"bash", "curl", "jq", "pdftotext", "pdftoppm", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the README tour needs %s", tool)
			}
			t.Skipf("the README tour needs %s", tool)
		}
	}
	t.Parallel()
	tours := readTours(t)
	srv := startServer(t, "sqlite:"+filepath.Join(t.TempDir(), "tour.db"), "--demo")
	// The banner follows the first ready answer by a moment.
	var key string
	for deadline := time.Now().Add(10 * time.Second); key == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		key = regexp.MustCompile(`lb_[0-9A-Za-z]{40}`).FindString(srv.stdout.String())
	}
	if key == "" {
		t.Fatalf("serve --demo printed no key:\n%s", srv.stdout)
	}
	host := strings.TrimPrefix(srv.url, "http://")
	dir := t.TempDir() // where the tours write files (the documents' PDFs)
	for _, tb := range tours {
		script := strings.ReplaceAll(tb.script, "localhost:8080", host)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Env = append(os.Environ(), "KEY="+key)
		cmd.Dir = dir
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("tour %s: %v\n%s%s", tb.name, err, out.String(), errOut.String())
		}
		got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if strings.Join(got, "\n") != strings.Join(tb.want, "\n") {
			t.Fatalf("tour %s printed:\n%s\nthe README says:\n%s", tb.name, strings.Join(got, "\n"), strings.Join(tb.want, "\n"))
		}
	}
	// Page 1 of each PDF the tour fetched is the README's picture of it:
	// rendered every run, written where LEDGERBASE_SCREENSHOTS says.
	pdfs, _ := filepath.Glob(filepath.Join(dir, "invoice-*.pdf"))
	if len(pdfs) != 3 {
		t.Fatalf("the documents tour left %d invoice PDFs, want 3 (en, ar, bilingual)", len(pdfs))
	}
	for _, pdf := range pdfs {
		name := strings.TrimSuffix(filepath.Base(pdf), ".pdf")
		page := filepath.Join(dir, name)
		if out, err := exec.Command("pdftoppm", "-r", "60", "-f", "1", "-l", "1", "-singlefile", "-png", pdf, page).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm %s: %v\n%s", pdf, err, out)
		}
		png, err := os.ReadFile(page + ".png")
		if err != nil || len(png) < 10_000 {
			t.Fatalf("page 1 of %s rendered %d bytes (%v): not a page", pdf, len(png), err)
		}
		if shots := os.Getenv("LEDGERBASE_SCREENSHOTS"); shots != "" {
			if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
