package demo_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// postgresSchema is a fresh, migrated schema of its own on the PostgreSQL
// of apitest.PostgresEnv (the comparisons read whole tables, and a bulk
// load defers indexes only on empty ones), dropped after the test, and its
// name.
func postgresSchema(t *testing.T) (*database.DB, string) {
	t.Helper()
	pg := os.Getenv(apitest.PostgresEnv)
	if pg == "" {
		// The suite's SQLite pass; .ci/run's PostgreSQL pass runs it.
		t.Skipf("%s is not set", apitest.PostgresEnv)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "lbbulk_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := database.Open(ctx, u.String(), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	return db, schema
}

// On PostgreSQL a bulk load (Alone: triggers, indexes and foreign keys
// deferred to one pass) leaves what the statement triggers leave, load by
// load: the same counters, day counts, kept sums, values, search answers,
// indexes and triggers, also when it adds to tables that already have rows.
// Shards and gens follow the transactions and statements, so counts are
// compared summed over shards.
func TestPostgresBulkLoadEqualsRowTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type side struct {
		db     *database.DB
		schema string
	}
	load := func(rowTriggers bool) side {
		db, schema := postgresSchema(t)
		ws, err := access.NewWorkspace(ctx, db.Writer, "Bulk", "business", true, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.WritePool.ExecContext(ctx, "UPDATE workspaces SET id = 'ws_same' WHERE id = $1", ws.ID); err != nil {
			t.Fatal(err)
		}
		// The second load finds rows in every table: indexes stay, and only
		// the rows it adds are counted.
		for _, seed := range []uint64{3, 4} {
			o := demo.Options{Invoices: 300, Clients: 40, SalesOrders: 90, Products: 30, Seed: seed, Now: now, RowTriggers: rowTriggers, Alone: true}
			if _, err := demo.Run(ctx, db, "ws_same", o); err != nil {
				t.Fatal(err)
			}
		}
		return side{db, schema}
	}
	rows, bulk := load(true), load(false)

	same := func(what, q string) {
		t.Helper()
		a := dumpRows(t, rows.db.ReadPool, strings.ReplaceAll(q, "$schema", rows.schema))
		b := dumpRows(t, bulk.db.ReadPool, strings.ReplaceAll(q, "$schema", bulk.schema))
		for i := range a {
			a[i] = strings.ReplaceAll(a[i], rows.schema, "$schema")
		}
		for i := range b {
			b[i] = strings.ReplaceAll(b[i], bulk.schema, "$schema")
		}
		if len(a) == 0 {
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
	same("list_totals", "SELECT workspace_id, tbl, SUM(n), bool_and(gen > 0) FROM list_totals GROUP BY 1, 2 ORDER BY 1, 2")
	same("list_days", "SELECT workspace_id, tbl, day, SUM(n) FROM list_days GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
	same("list_sums", "SELECT workspace_id, k, SUM(n), SUM(cents) FROM list_sums GROUP BY 1, 2 ORDER BY 1, 2")
	same("search_values", "SELECT workspace_id, tbl, value, SUM(n) FROM search_values GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
	same("search_values_log", "SELECT DISTINCT workspace_id, tbl, value FROM search_values_log ORDER BY 1, 2, 3")
	same("search_values_gen", "SELECT workspace_id, tbl, gen > 0 FROM search_values_gen ORDER BY 1, 2")
	same("sequences", "SELECT workspace_id, name, value FROM sequences ORDER BY 1, 2")
	for _, table := range []string{"invoices", "clients", "sales_orders", "order_lines", "variants", "items", "invoice_payments", "bills", "shipment_events"} {
		same(table, "SELECT workspace_id, COUNT(*) FROM "+table+" GROUP BY 1")
	}
	same("invoice contents", "SELECT number, status, client_name, due_date, remaining_cents, amount_excl_vat_cents FROM invoices ORDER BY number")
	// The triggers, foreign keys and indexes rebuilt after the load are
	// back as they were, and the word indexes answer alike.
	same("triggers", "SELECT c.relname, g.tgname, pg_get_triggerdef(g.oid), g.tgenabled FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "+
		"WHERE c.relnamespace = '$schema'::regnamespace AND NOT g.tgisinternal ORDER BY 1, 2")
	same("constraints", "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "+
		"WHERE connamespace = '$schema'::regnamespace ORDER BY 1, 2")
	same("indexes", "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = '$schema' ORDER BY 1, 2")
	same("index validity", "SELECT indexrelid::regclass::text, indisvalid, indisready FROM pg_index WHERE indrelid IN "+
		"(SELECT oid FROM pg_class WHERE relnamespace = '$schema'::regnamespace) ORDER BY 1")
	for _, table := range []string{"invoices", "clients", "sales_orders", "items"} {
		// By access method, not by the definition's text: a filter on
		// pg_get_indexdef may run on other tests' indexes as they are dropped.
		def := dumpRows(t, bulk.db.ReadPool, fmt.Sprintf("SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "+
			"JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = '%s.%s'::regclass AND a.amname = 'gin'", bulk.schema, table))
		if len(def) != 1 {
			t.Fatalf("%s: %d word indexes", table, len(def))
		}
		_, expr, _ := strings.Cut(def[0], " USING gin (")
		if i := strings.LastIndex(expr, ") WITH"); i > 0 {
			expr = expr[:i]
		}
		for _, word := range []string{"acme:*", "inv:*", "holdings:*", "so:*", "t:*"} {
			// Through the index: a search finds by it.
			same(fmt.Sprintf("%s %s", table, word), fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE %s @@ to_tsquery('simple', '%s') OFFSET 0) x", table, expr, word))
		}
	}
	for _, table := range []string{"invoices", "clients", "sales_orders", "order_lines", "variants", "items"} {
		n, ok := shortcut.Of(bulk.db).Count(ctx, "ws_same", table, "")
		var want int64
		if err := bulk.db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE workspace_id = 'ws_same'").Scan(&want); err != nil {
			t.Fatal(err)
		}
		if !ok || n != want || n == 0 {
			t.Errorf("%s: Count %d, %v; %d rows", table, n, ok, want)
		}
	}
}

// A PostgreSQL bulk load that fails leaves nothing behind: no rows, and
// every trigger, index and foreign key in place.
func TestPostgresFailedBulkLoadLeavesTheDatabaseAsItWas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := postgresSchema(t)
	schema := func() []string {
		return dumpRows(t, db.ReadPool, `SELECT 'trigger', tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = CAST(current_schema() AS regnamespace))
			UNION ALL SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL SELECT 'constraint', conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = CAST(current_schema() AS regnamespace)
			ORDER BY 1, 2, 3`)
	}
	ws, err := access.NewWorkspace(ctx, db.Writer, "Failed", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	// A table with rows keeps its indexes through a load.
	if _, err := db.WritePool.ExecContext(ctx, "INSERT INTO bills (id, workspace_id, created_at, updated_at, number, date, lines, currency_code, vendor_name, status) "+
		"VALUES ('bill_x', $1, now(), now(), 'B-1', '2026-01-01', '[]', 'EUR', 'Kept', 'open')", ws.ID); err != nil {
		t.Fatal(err)
	}
	before := schema()
	boom := errors.New("boom")
	o := shortcut.BulkOptions{Alone: true, Tables: []string{"vendors", "bills", "bill_payments", "invoices"}}
	err = shortcut.Of(db).Bulk(ctx, o, func(tx *sql.Tx) error {
		// The deferred triggers, indexes and foreign keys are gone meanwhile.
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_trigger WHERE tgname IN ('vendors_totals_ai', 'invoices_sums_ai', 'invoices_values_ai', 'bills_totals_ai') AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = CAST(current_schema() AS regnamespace))").Scan(&n); err != nil || n != 0 {
			t.Errorf("%d deferred triggers still there during the load (%v)", n, err)
		}
		plain := func(table string) int {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_index WHERE indrelid = CAST($1 AS regclass) AND NOT indisunique", table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if plain("invoices") != 0 || plain("bills") == 0 {
			t.Errorf("during the load: %d plain indexes on the empty invoices, %d on bills, which has a row", plain("invoices"), plain("bills"))
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO vendors (id, workspace_id, created_at, updated_at, name, currency_code) VALUES ('ven_x', $1, now(), now(), 'Gone', 'EUR')", ws.ID); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Bulk = %v, want the load's error", err)
	}
	after := schema()
	if !slices.Equal(before, after) || !slices.ContainsFunc(after, func(s string) bool { return strings.Contains(s, "vendors_totals_ai") }) {
		t.Fatalf("the triggers, indexes or constraints changed after a failed load:\n%v\n%v", before, after)
	}
	var n int
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM vendors").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d vendors after a failed load (%v)", n, err)
	}
	if c, ok := shortcut.Of(db).Count(ctx, ws.ID, "bills", ""); !ok || c != 1 {
		t.Fatalf("bills total %d, %v after a failed load; want 1", c, ok)
	}
}
