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
// own, migrated as serve does, so their writes race in the database only;
// on SQLite, where a file has one writer per process, they share the DB.
func Servers(t testing.TB, n int, opts ...Option) []*Env {
	t.Helper()
	shared, url := DB(t)
	out := make([]*Env, n)
	for i := range out {
		db := shared
		if i > 0 && Backend() == "postgres" {
			var err error
			if db, err = database.Open(context.Background(), url, database.Options{}); err != nil {
				t.Fatalf("apitest: server %d: database: %v", i, err)
			}
			// Registered before the server's, so it runs after its shutdown.
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(context.Background(), records.Searches(resource.All)); err != nil {
				t.Fatalf("apitest: server %d: migrate: %v", i, err)
			}
		}
		out[i] = Serve(t, NewServer(t, db, opts...))
	}
	return out
}
