package records_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest/benchdata"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// benchEngine seeds a small demo workspace: the read path's cost is per
// row served, not per row stored, so a small file profiles it faithfully.
func benchEngine(b *testing.B) (*records.Engine, records.Workspace, []string) {
	ctx := context.Background()
	db, wsID := benchdata.Seeded(b, "LEDGERBASE_BENCH_DB", "Bench", 12000)
	ws := struct{ ID string }{wsID}
	e, err := records.New(db, resource.All)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := db.ReadPool.QueryContext(ctx, "SELECT id FROM invoices WHERE workspace_id = ? LIMIT 1000", ws.ID)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	return e, records.Workspace{ID: ws.ID, Commerce: true}, ids
}

// salesOrderIDs are the workspace's newest 100 sales orders.
func salesOrderIDs(b *testing.B, e *records.Engine, ws records.Workspace) []string {
	out, err := e.List(context.Background(), resource.SalesOrders, ws, records.Page{Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	var page struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(out, &page); err != nil || len(page.Data) == 0 {
		b.Fatalf("no sales orders: %v %s", err, out)
	}
	ids := make([]string, len(page.Data))
	for i, o := range page.Data {
		ids[i] = o.ID
	}
	return ids
}

// go test ./api/records -run '^$' -bench . -cpuprofile /tmp/cpu.prof
func BenchmarkReads(b *testing.B) {
	e, ws, ids := benchEngine(b)
	r := resource.Invoices
	ctx := context.Background()
	for _, cache := range []int{0, records.DefaultCacheBytes} {
		e.SetCache(cache)
		name := "cached"
		if cache == 0 {
			name = "uncached"
		}
		b.Run(name+"/get", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.Get(ctx, r, ws, ids[i%len(ids)], ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/list25", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.List(ctx, r, ws, records.Page{Limit: 25, Offset: (i % 20) * 25}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/list25-offset6000", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.List(ctx, r, ws, records.Page{Limit: 25, Offset: 6000 + (i%40)*25}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Sales orders embed their lines and are never cached: every page
		// reads its orders and lines in full.
		b.Run(name+"/sales-orders-list25", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.List(ctx, resource.SalesOrders, ws, records.Page{Limit: 25, Offset: (i % 20) * 25}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// One order with its lines: what a write renders for an order's
		// event (never cached either).
		b.Run(name+"/get-sales-order", func(b *testing.B) {
			orders := salesOrderIDs(b, e, ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Get(ctx, resource.SalesOrders, ws, orders[i%len(orders)], ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/q-client", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.List(ctx, r, ws, records.Page{Limit: 25, Q: "Acme Holdings"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStrategies runs the lists each strategy serves with every
// strategy on, then with that one off, in one run (pair them with -count):
//
//	go test ./api/records -run '^$' -bench Strategies -count 5
func BenchmarkStrategies(b *testing.B) {
	e, ws, _ := benchEngine(b)
	ctx := context.Background()
	pages := func(pg records.Page, offsets ...int) []records.Page {
		var out []records.Page
		for _, o := range offsets {
			p := pg
			p.Limit, p.Offset = 25, o
			out = append(out, p)
		}
		return out
	}
	lists := map[string][]records.Page{
		"unchangedPages": pages(records.Page{}, 0, 25, 50, 75),
		"searchKeys":     append(pages(records.Page{Q: "Acme Holdings"}, 0, 25), pages(records.Page{Q: "INV-0001"}, 0)...),
		"deepSkip":       pages(records.Page{}, 6000, 7000, 8000, 9000),
		"countedTotals":  pages(records.Page{}, 0, 25, 50, 75),
	}
	var all []string
	for name := range records.Strategies {
		all = append(all, name)
	}
	slices.Sort(all)
	for _, name := range all {
		for _, off := range []bool{false, true} {
			label := name + "/on"
			on := all
			if off {
				label = name + "/off"
				on = slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == name })
			}
			b.Run(label, func(b *testing.B) {
				records.Only(e, on...)
				defer records.Only(e, all...)
				ps := lists[name]
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := e.List(ctx, resource.Invoices, ws, ps[i%len(ps)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
