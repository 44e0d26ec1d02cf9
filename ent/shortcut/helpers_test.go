package shortcut_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// sqliteOnly skips a test of SQLite's own machinery when the suite runs on
// PostgreSQL.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if apitest.Backend() != "sqlite" {
		t.Skip("SQLite only")
	}
}

// openSQLite opens a fresh SQLite file with the counters but no searches.
func openSQLite(t *testing.T) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "writer.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), shortcut.Searches(nil)); err != nil {
		t.Fatal(err)
	}
	return db
}
