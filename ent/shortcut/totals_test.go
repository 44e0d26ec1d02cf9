package shortcut_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
	"github.com/ledgerbase/ledgerbase/ent/vendor"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// Vendors over three days, several a day, some at the same instant.
func TestSkipLandsDeepOffsetsOnTheRightRow(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "skip test", "starter", false, false)
	if err != nil {
		t.Fatal(err)
	}
	var bulk []*ent.VendorCreate
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for d, n := range []int{5, 7, 4} {
		for i := 0; i < n; i++ {
			at := day.AddDate(0, 0, d).Add(time.Duration(i/2) * 7 * time.Hour) // pairs share a time
			bulk = append(bulk, db.Writer.Vendor.Create().SetID(ids.At("ven", at)).SetWorkspaceID(ws.ID).
				SetName(fmt.Sprintf("V %d-%d", d, i)).SetCreatedAt(at).SetUpdatedAt(at))
		}
	}
	if err := db.Writer.Vendor.CreateBulk(bulk...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// One deleted: counts follow deletes too.
	if _, err := db.Writer.Vendor.Delete().Where(vendor.Name("V 1-3")).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	page := func(cond string, arg any, offset, limit int) []string {
		q := "SELECT t.id FROM vendors t WHERE t.workspace_id = ?"
		args := []any{ws.ID}
		if cond != "" {
			q += " AND " + cond
			args = append(args, arg)
		}
		rows, err := db.ReadPool.QueryContext(ctx, db.Rebind(q+" ORDER BY t.created_at DESC, t.id DESC LIMIT ? OFFSET ?"), append(args, limit, offset)...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	all := page("", nil, 0, 100)
	if n, ok := shortcut.Of(db).Count(ctx, ws.ID, "vendors", ""); !ok || n != int64(len(all)) || n != 15 {
		t.Fatalf("Count = %d, %v; want %d", n, ok, len(all))
	}
	for off := 0; off < len(all); off++ {
		cond, arg, rest, ok := shortcut.Of(db).Skip(ctx, ws.ID, "vendors", off)
		if !ok {
			t.Fatalf("offset %d: no skip", off)
		}
		// Newest first: 4 on the third day, 6 on the second, 5 on the first;
		// the offset left is counted from the start of its day.
		dayStart := 0
		if off >= 10 {
			dayStart = 10
		} else if off >= 4 {
			dayStart = 4
		}
		if rest != off-dayStart {
			t.Fatalf("offset %d: rest %d, want %d", off, rest, off-dayStart)
		}
		if got, want := page(cond, arg, rest, 3), all[off:min(off+3, len(all))]; !slices.Equal(got, want) {
			t.Fatalf("offset %d (%s %v, rest %d): %v, want %v", off, cond, arg, rest, got, want)
		}
	}
	// A new day's vendor shifts every offset by one: nothing stale is kept.
	at := day.AddDate(0, 0, 5)
	if err := db.Writer.Vendor.Create().SetID(ids.At("ven", at)).SetWorkspaceID(ws.ID).SetName("newest").
		SetCreatedAt(at).SetUpdatedAt(at).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, rest, _ := shortcut.Of(db).Skip(ctx, ws.ID, "vendors", 11); rest != 0 {
		t.Fatalf("after an insert, offset 11 starts the first day: rest %d, want 0", rest)
	}
}

// Only the values lists filter on are counted (each counter is a write in
// every insert): sales orders by status and online, never clients by
// their active flag, which no list filters on.
func TestOnlyDeclaredFiltersAreCountedPerValue(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "counted values", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Writer.Customer.Create().SetWorkspaceID(ws.ID).SetName("Acme").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Writer.SalesOrder.Create().SetWorkspaceID(ws.ID).SetNumber("SO-1").SetDate("2026-01-05").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.ReadPool.QueryContext(ctx, db.Rebind("SELECT DISTINCT tbl FROM list_totals WHERE workspace_id = ? ORDER BY tbl"), ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	want := []string{"clients", "sales_orders"}
	for _, k := range got {
		if slices.Contains(want, k) {
			continue
		}
		if !slices.Contains([]string{"sales_orders:status", "sales_orders:online", "sales_orders:payment_status", "sales_orders:shipping_status"}, k[:max(0, strings.Index(k, "="))]) {
			t.Errorf("counter %q: no list filters on it", k)
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("no total for %s in %v", k, got)
		}
	}
	if !slices.ContainsFunc(got, func(k string) bool { return strings.HasPrefix(k, "sales_orders:status=") }) {
		t.Errorf("sales orders are not counted by status: %v", got)
	}
}

// Updates that keep a counted value touch no counter, and those that move
// one take the counters' rows in one order: concurrent updates on
// PostgreSQL (where writers run at once) never deadlock on the counters.
// Each update here once took two random shards of each counter, -1 then
// +1, and two of them could take the same two in opposite orders.
func TestValueCountersDoNotDeadlockConcurrentUpdates(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("PostgreSQL only: SQLite runs one writer at a time")
	}
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "counter locks", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	const orders, writers, each = 16, 8, 60
	var ids []string
	for i := range orders {
		so, err := db.Writer.SalesOrder.Create().SetWorkspaceID(ws.ID).SetNumber(fmt.Sprintf("SO-%d", i)).SetDate("2026-01-05").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, so.ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Every other update moves the order to another status and back.
				status := []string{"draft", "confirmed"}[(w+i)%2]
				if _, err := db.WritePool.ExecContext(ctx, db.Rebind("UPDATE sales_orders SET status = ? WHERE id = ?"),
					status, ids[(w*7+i)%orders]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent update failed: %v", err)
	}
	var counted, actual int64
	if err := db.ReadPool.QueryRowContext(ctx, db.Rebind("SELECT COALESCE(SUM(n), 0) FROM list_totals WHERE workspace_id = ? AND tbl = ?"),
		ws.ID, "sales_orders:status=confirmed").Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadPool.QueryRowContext(ctx, db.Rebind("SELECT COUNT(*) FROM sales_orders WHERE workspace_id = ? AND status = 'confirmed'"),
		ws.ID).Scan(&actual); err != nil {
		t.Fatal(err)
	}
	if counted != actual {
		t.Fatalf("the counter says %d confirmed orders, the table holds %d", counted, actual)
	}
}
