// Package benchdata gives benchmarks a seeded demo database. It is apart
// from apitest because the demo generator's own tests use apitest.
package benchdata

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// Seeded opens a migrated SQLite file holding a business workspace named
// name, filled by the demo generator with invoices invoices, for
// benchmarks. The file is a temporary one, or the path in the variable
// fileEnv, where a workspace an earlier run seeded is reused.
func Seeded(tb testing.TB, fileEnv, name string, invoices int) (*database.DB, string) {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "seeded.db")
	if p := os.Getenv(fileEnv); p != "" {
		path = p
	}
	db, err := database.Open(ctx, "sqlite:"+path, database.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		tb.Fatal(err)
	}
	var wsID string
	_ = db.ReadPool.QueryRowContext(ctx, "SELECT id FROM workspaces WHERE name = ?", name).Scan(&wsID)
	if wsID != "" {
		return db, wsID
	}
	ws, err := access.NewWorkspace(ctx, db.Writer, name, "business", true, true)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := demo.Run(ctx, db, ws.ID, demo.Options{Invoices: invoices, Seed: 1}); err != nil {
		tb.Fatal(err)
	}
	return db, ws.ID
}
