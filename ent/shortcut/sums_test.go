package shortcut_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// The kept sums equal the sums of the rows, after a bulk load, a load
// with per-row triggers, and updates and deletes that move rows between
// sums, into and out of them.
func TestKeptSumsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	db, url := apitest.DB(t)
	ctx := context.Background()
	// The plain path: the rows summed at every view (keptSums and
	// dashboardCache off).
	plain, err := database.Open(ctx, url, database.Options{ShortcutsOff: []string{"keptSums", "dashboardCache"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	var wss []string
	for i, rowTriggers := range []bool{false, true} {
		ws, err := access.NewWorkspace(ctx, db.Writer, fmt.Sprintf("sums %d", i), "business", true, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: 300, Seed: uint64(i + 1), RowTriggers: rowTriggers}); err != nil {
			t.Fatal(err)
		}
		wss = append(wss, ws.ID)
	}
	check := func(when string) {
		t.Helper()
		for _, ws := range wss {
			for _, s := range shortcut.Sums {
				want := rowSums(t, db, ws, s)
				if len(want) == 0 && when == "seeded" {
					t.Fatalf("%s: %s: the demo data has no rows in the sum", when, s.Name)
				}
				for _, h := range []*database.DB{db, plain} {
					got, err := shortcut.Of(h).SumsOf(ctx, ws, s.Name)
					if err != nil {
						t.Fatal(err)
					}
					slices.SortFunc(got, cmpSum)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: %s of %s (shortcuts off: %v):\nkept %v\nrows %v", when, s.Name, ws, h != db, got, want)
					}
				}
			}
		}
	}
	check("seeded")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.WritePool.ExecContext(ctx, db.Rebind(q), args...); err != nil {
			t.Fatal(err)
		}
	}
	// A payment-like change, a status leaving the sums, one entering them,
	// a moved due date and a changed currency, then deletes.
	exec("UPDATE invoices SET remaining_cents = remaining_cents - 1, paid_cents = paid_cents + 1 WHERE workspace_id = ? AND status = 'overdue'", wss[0])
	exec("UPDATE invoices SET status = 'void', remaining_cents = 0 WHERE workspace_id = ? AND status = 'sent'", wss[0])
	exec("UPDATE invoices SET status = 'sent' WHERE workspace_id = ? AND status = 'draft'", wss[1])
	exec("UPDATE invoices SET due_date = '2020-01-01' WHERE workspace_id = ? AND status = 'partially_paid'", wss[1])
	exec("UPDATE invoices SET date = '2019-12-01', currency_code = 'XXX' WHERE workspace_id = ? AND status = 'paid' AND amount_excl_vat_cents > 5000", wss[1])
	exec("UPDATE bills SET status = 'paid', remaining_cents = 0 WHERE workspace_id = ? AND status = 'partially_paid'", wss[0])
	exec("UPDATE invoices SET notes = 'only notes' WHERE workspace_id = ?", wss[0])
	check("updated")
	exec("DELETE FROM invoice_payments WHERE workspace_id = ?", wss[0])
	exec("DELETE FROM credit_notes WHERE workspace_id = ?", wss[0])
	exec("DELETE FROM quotes WHERE workspace_id = ?", wss[0])
	exec("DELETE FROM invoices WHERE workspace_id = ? AND status IN ('overdue', 'paid')", wss[0])
	check("deleted")
}

func cmpSum(a, b shortcut.SumRow) int {
	return slices.Compare([]string{a.Status, a.Currency, a.By}, []string{b.Status, b.Currency, b.By})
}

// rowSums sums the rows themselves, grouped as the kept sums are.
func rowSums(t *testing.T, db *database.DB, ws string, s shortcut.Sum) []shortcut.SumRow {
	t.Helper()
	states := ""
	for i, st := range s.States {
		if i > 0 {
			states += ", "
		}
		states += "'" + st + "'"
	}
	q := fmt.Sprintf("SELECT status, currency_code, %s, COUNT(*), CAST(SUM(%s) AS BIGINT) FROM %s WHERE workspace_id = ? AND status IN (%s) GROUP BY 1, 2, 3",
		s.By(""), s.Amount, s.Table, states)
	rows, err := db.ReadPool.Query(db.Rebind(q), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []shortcut.SumRow
	for rows.Next() {
		var r shortcut.SumRow
		if err := rows.Scan(&r.Status, &r.Currency, &r.By, &r.N, &r.Cents); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, cmpSum)
	return out
}
