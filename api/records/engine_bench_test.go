package records_test

import (
	"context"
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
	rows, err := db.Read.QueryContext(ctx, "SELECT id FROM invoices WHERE workspace_id = ? LIMIT 1000", ws.ID)
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
