package database_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// The data version moves on every commit, by this DB's writer or by any
// other connection to the file, and stays put while nothing is committed:
// the render cache serves a record without reading its row only while it
// stays put.
func TestDataVersionMovesOnEveryCommit(t *testing.T) {
	if apitest.Backend() != "sqlite" {
		t.Skip("SQLite only")
	}
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	read := func() int64 {
		t.Helper()
		v, ok, err := db.DataVersion(ctx)
		if err != nil || !ok {
			t.Fatalf("DataVersion: %v, %v", ok, err)
		}
		return v
	}
	v0 := read()
	if _, err := db.Read.QueryContext(ctx, "SELECT count(*) FROM workspaces"); err != nil {
		t.Fatal(err)
	}
	if v := read(); v != v0 {
		t.Fatalf("the data version moved from %d to %d without a commit", v0, v)
	}
	if err := db.Ent.Workspace.Create().SetName("dv").SetPlan("starter").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	v1 := read()
	if v1 == v0 {
		t.Fatal("a commit by the writer left the data version as it was")
	}
	other, err := sql.Open("sqlite3", "file:"+db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "UPDATE workspaces SET name = 'dv2'"); err != nil {
		t.Fatal(err)
	}
	if v := read(); v == v1 {
		t.Fatal("a commit by another connection left the data version as it was")
	}
}
