package apitest

import (
	"context"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Servers starts n servers on the package's database as n `serve`
// processes would run. On PostgreSQL each after the first has a pool of its
// own (AnotherProcess), so their writes race in the database only; on
// SQLite, where a file has one writer per process, they share the DB.
func Servers(t testing.TB, n int, opts ...Option) []*Env {
	t.Helper()
	out := make([]*Env, n)
	for i := range out {
		db, _ := DB(t)
		if i > 0 {
			db = AnotherProcess(t)
		}
		out[i] = Serve(t, NewServer(t, db, opts...))
	}
	return out
}

// AnotherProcess is the package's database as another `serve` process
// opens it: on PostgreSQL pools of its own, migrated as serve does; on
// SQLite the shared DB (one writer per file and process).
func AnotherProcess(t testing.TB) *database.DB {
	t.Helper()
	shared, url := DB(t)
	if Backend() != "postgres" {
		return shared
	}
	db, err := database.Open(context.Background(), url, database.Options{})
	if err != nil {
		t.Fatalf("apitest: another process: database: %v", err)
	}
	// Registered before the server's, so it runs after its shutdown.
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), records.Searches(resource.All)); err != nil {
		t.Fatalf("apitest: another process: migrate: %v", err)
	}
	return db
}
