package demo_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// sqliteFile is a fresh, migrated SQLite database of its own: the
// comparisons below read whole tables.
func sqliteFile(t *testing.T, name string) *database.DB {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), name+".db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	return db
}

// A bulk load (triggers deferred to one pass) leaves exactly what the
// per-row triggers leave: the same counters, day counts and search index,
// also when it adds to a workspace that already has rows.
func TestBulkLoadEqualsRowTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Both databases get the same workspace id, so their rows compare as they are.
	load := func(name string, rowTriggers bool) *database.DB {
		db := sqliteFile(t, name)
		ws, err := access.NewWorkspace(ctx, db.Writer, "Bulk", "business", true, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.WritePool.ExecContext(ctx, "UPDATE workspaces SET id = 'ws_same' WHERE id = ?", ws.ID); err != nil {
			t.Fatal(err)
		}
		for _, seed := range []uint64{3, 4} {
			o := demo.Options{Invoices: 300, Clients: 40, SalesOrders: 90, Products: 30, Seed: seed, Now: now, RowTriggers: rowTriggers}
			if _, err := demo.Run(ctx, db, "ws_same", o); err != nil {
				t.Fatal(err)
			}
		}
		return db
	}
	rows, bulk := load("rows", true), load("bulk", false)

	dump := func(db *database.DB, q string) []string {
		t.Helper()
		return dumpRows(t, db.ReadPool, q)
	}
	same := func(what, q string) {
		t.Helper()
		a, b := dump(rows, q), dump(bulk, q)
		if len(a) == 0 && !strings.Contains(what, "MATCH") {
			t.Fatalf("%s: nothing to compare", what)
		}
		if !slices.Equal(a, b) {
			for i := range min(len(a), len(b)) {
				if a[i] != b[i] {
					t.Fatalf("%s: row %d: %q with row triggers, %q after a bulk load (%d and %d rows)", what, i, a[i], b[i], len(a), len(b))
				}
			}
			t.Fatalf("%s: %d rows with row triggers, %d after a bulk load", what, len(a), len(b))
		}
	}
	same("list_totals", "SELECT workspace_id, tbl, shard, n, gen FROM list_totals ORDER BY 1, 2, 3")
	same("list_days", "SELECT workspace_id, tbl, day, shard, n FROM list_days ORDER BY 1, 2, 3, 4")
	same("search workspaces", "SELECT lid, workspace_id FROM search_workspaces ORDER BY 1")
	tables := dump(rows, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%\\_fts' ESCAPE '\\' ORDER BY 1")
	if len(tables) < 10 {
		t.Fatalf("search indexes: %v", tables)
	}
	for _, fts := range tables {
		same(fts, "SELECT docid, lid, body FROM "+fts+" ORDER BY docid")
		for _, word := range []string{"acme*", "inv*", "holdings*", "shp*", "t*"} {
			for lid := range 3 {
				same(fmt.Sprintf("%s MATCH %s lid %d", fts, word, lid),
					fmt.Sprintf("SELECT docid FROM %s WHERE body MATCH '%s' AND lid = %d ORDER BY docid", fts, word, lid))
			}
		}
	}
	// The triggers and the indexes built after the load are back, as they were.
	same("triggers", "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
	same("indexes", "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
	same("index entries", "SELECT count(*) FROM invoices INDEXED BY invoices_client_name_newest WHERE workspace_id = 'ws_same' AND client_name > ''")
	// And the API's exact totals agree with the rows.
	for _, table := range []string{"invoices", "clients", "sales_orders", "order_lines", "variants", "items"} {
		n, ok := shortcut.Of(bulk).Count(ctx, "ws_same", table, "")
		var want int64
		if err := bulk.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE workspace_id = 'ws_same'").Scan(&want); err != nil {
			t.Fatal(err)
		}
		if !ok || n != want {
			t.Errorf("%s: Count %d, %v; %d rows", table, n, ok, want)
		}
	}
}

// A load that fails (or a crash, which SQLite rolls back the same way)
// leaves nothing behind: no rows, and every trigger and index still in place.
func TestFailedBulkLoadLeavesTheDatabaseAsItWas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqliteFile(t, "failed")
	triggers := func() string {
		var s string
		if err := db.ReadPool.QueryRowContext(ctx, "SELECT group_concat(name || sql, ';') FROM (SELECT name, sql FROM sqlite_master WHERE type IN ('trigger', 'index') AND sql IS NOT NULL ORDER BY name)").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := triggers()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Failed", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{}, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO vendors (id, workspace_id, created_at, updated_at, name, currency_code) VALUES ('ven_x', ?, '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00', 'Gone', 'EUR')", ws.ID); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Bulk = %v, want the load's error", err)
	}
	if after := triggers(); after != before || !strings.Contains(after, "vendors_totals_ai") || !strings.Contains(after, "vendors_fts_ai") {
		t.Fatal("the triggers or indexes changed after a failed load")
	}
	var n int
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM vendors").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d vendors after a failed load (%v)", n, err)
	}
}

// Migrate puts back insert triggers that are missing (by whatever means),
// rebuilding the search index and the totals from the rows.
func TestMigrateRestoresMissingInsertTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqliteFile(t, "restore")
	ws, err := access.NewWorkspace(ctx, db.Writer, "Restore", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TRIGGER vendors_totals_ai", "DROP TRIGGER vendors_fts_ai",
		"INSERT INTO vendors (id, workspace_id, created_at, updated_at, name, currency_code) VALUES ('ven_x', '" + ws.ID + "', '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00', 'Zanzibar Freight', 'EUR')"} {
		if _, err := db.WritePool.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('vendors_totals_ai', 'vendors_fts_ai')").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d of the 2 triggers after Migrate (%v)", n, err)
	}
	if c, ok := shortcut.Of(db).Count(ctx, ws.ID, "vendors", ""); !ok || c != 1 {
		t.Fatalf("vendors total %d, %v; want 1", c, ok)
	}
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM vendors_fts WHERE body MATCH 'zanzibar' AND lid = (SELECT lid FROM search_workspaces WHERE workspace_id = ?)", ws.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("search finds %d vendors (%v); want 1", n, err)
	}
}

// dumpRows is every row of q, each printed as one string.
func dumpRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	r, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	cols, _ := r.Columns()
	var out []string
	for r.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
