package shortcut_test

import (
	"context"
	"database/sql"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
	"os"
	"os/exec"
	"testing"
)

// writeFromAnotherProcess, set to a database path, makes this test binary
// a second process that commits one change to that file and exits.
const writeFromAnotherProcess = "LEDGERBASE_TEST_DV_WRITE"

func init() {
	path := os.Getenv(writeFromAnotherProcess)
	if path == "" {
		return
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err == nil {
		_, err = db.Exec("UPDATE workspaces SET name = name || '+'")
		db.Close()
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// The data version moves on every commit, by this DB's writer, by another
// connection or by another process, and stays put while nothing is
// committed: the render cache serves a record without reading its row only
// while it stays put.
func TestDataVersionMovesOnEveryCommit(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	read := func() int64 {
		t.Helper()
		v, ok, err := shortcut.Of(db).DataVersion(ctx)
		if err != nil || !ok {
			t.Fatalf("DataVersion: %v, %v", ok, err)
		}
		return v
	}
	v0 := read()
	if _, err := db.ReadPool.QueryContext(ctx, "SELECT count(*) FROM workspaces"); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if v := read(); v != v0 {
			t.Fatalf("the data version moved from %d to %d without a commit", v0, v)
		}
	}

	seen := map[int64]string{v0: "the start"}
	moved := func(by string) {
		t.Helper()
		v := read()
		if was, ok := seen[v]; ok {
			t.Fatalf("after a commit by %s the data version is %d, as after %s", by, v, was)
		}
		seen[v] = by
		if again := read(); again != v {
			t.Fatalf("after a commit by %s: %d, then %d without a commit", by, v, again)
		}
	}
	if err := db.Writer.Workspace.Create().SetName("dv").SetPlan("starter").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	moved("the writer")
	other, err := sql.Open("sqlite3", "file:"+db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "UPDATE workspaces SET name = 'dv2'"); err != nil {
		t.Fatal(err)
	}
	moved("another connection")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writeFromAnotherProcess+"="+db.Path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	moved("another process")
	// A rolled-back transaction commits nothing.
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE; UPDATE workspaces SET name = 'gone'; ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	v := read()
	if seen[v] != "another process" {
		t.Fatalf("a rollback moved the data version to %d", v)
	}
}
