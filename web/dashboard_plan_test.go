package web_test

import (
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// The dashboard's reads and the counts of the lists it links to are
// answered from indexes, never a scan of the invoices: each query below
// has the shape the page (database.SumsOf) or the list engine (a filter
// per declared parameter, AND-ed) sends. PostgreSQL plans with statistics
// and picks a scan on small tables; with scans priced out it must still
// find an index.
func TestDashboardQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	db := env.DB
	pg := apitest.Backend() == "postgres"
	// Rows to plan over.
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), db, ws.ID, demo.Options{Invoices: 400}); err != nil {
		t.Fatal(err)
	}
	// Both databases plan with statistics, as they run.
	for _, tbl := range []string{"invoices", "bills", "credit_notes", "list_sums"} {
		if _, err := db.WritePool.ExecContext(t.Context(), "ANALYZE "+tbl); err != nil {
			t.Fatal(err)
		}
	}
	queries := []struct {
		sql, index string
		args       []any
	}{
		{"SELECT k, CAST(SUM(n) AS BIGINT), CAST(SUM(cents) AS BIGINT) FROM list_sums WHERE workspace_id = ? AND k >= ? AND k < ? GROUP BY k",
			"list_sums", []any{ws.ID, "invoices.open:", "invoices.open;"}},
		// Overdue by age: status=overdue&due_date_from=…&due_date_to=…
		{"SELECT COUNT(*) FROM invoices t WHERE t.workspace_id = ? AND t.status = ? AND t.due_date >= ? AND t.due_date <= ?",
			"invoice_workspace_id_status_due_date", []any{ws.ID, "overdue", "2026-01-01", "2026-01-31"}},
		// A month of sales: status=sent,partially_paid,paid,overdue&date_from=…&date_to=…
		{"SELECT COUNT(*) FROM invoices t WHERE t.workspace_id = ? AND t.status IN (?,?,?,?) AND t.date >= ? AND t.date <= ?",
			"invoice_workspace_id_status_date", []any{ws.ID, "sent", "partially_paid", "paid", "overdue", "2026-01-01", "2026-01-31"}},
		// Bills past due: status=open,partially_paid&due_date_to=…
		{"SELECT COUNT(*) FROM bills t WHERE t.workspace_id = ? AND t.status IN (?,?) AND t.due_date <= ?",
			"bill_workspace_id_status_due_date", []any{ws.ID, "open", "partially_paid", "2026-01-01"}},
		// An invoice's page: the credit notes made against it.
		{"SELECT id FROM credit_notes WHERE workspace_id = ? AND invoice_id = ?",
			"creditnote_workspace_id_invoice_id", []any{ws.ID, "inv_x"}},
	}
	conn, err := db.ReadPool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if pg {
		if _, err := conn.ExecContext(t.Context(), "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(t.Context(), "RESET enable_seqscan")
	}
	for _, q := range queries {
		explain := "EXPLAIN QUERY PLAN "
		if pg {
			explain = "EXPLAIN "
		}
		rows, err := conn.QueryContext(t.Context(), db.Rebind(explain+q.sql), q.args...)
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		cols, _ := rows.Columns()
		var plan []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				if s, ok := v.(string); ok {
					plan = append(plan, s)
				}
			}
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		uses := strings.Contains(text, q.index) || (q.index == "list_sums" && (strings.Contains(text, "sqlite_autoindex_list_sums") || strings.Contains(text, "list_sums_pkey")))
		if !uses || strings.Contains(text, "SCAN t\n") || strings.HasSuffix(text, "SCAN t") || strings.Contains(text, "Seq Scan") {
			t.Errorf("%s\ndoes not use %s:\n%s", q.sql, q.index, text)
		}
	}
}
