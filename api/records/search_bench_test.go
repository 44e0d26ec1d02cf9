package records_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest/benchdata"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// searchBench opens (seeding it on first use) a demo workspace of
// LEDGERBASE_BENCH_INVOICES invoices (default 20,000) in the SQLite file
// LEDGERBASE_SEARCH_BENCH_DB, or in a temp file. A seeded file is reused:
// seeding 200,000 invoices takes about a minute.
//
//	LEDGERBASE_SEARCH_BENCH_DB=/tmp/q200k.db LEDGERBASE_BENCH_INVOICES=200000 \
//	  go test ./api/records -run '^$' -bench Search -benchtime 2s
func searchBench(b *testing.B) (*records.Engine, records.Workspace, [][2]string) {
	ctx := context.Background()
	n := 20000
	if s := os.Getenv("LEDGERBASE_BENCH_INVOICES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	db, wsID := benchdata.Seeded(b, "LEDGERBASE_SEARCH_BENCH_DB", "SearchBench", n)
	e, err := records.New(db, resource.All)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := db.ReadPool.QueryContext(ctx, "SELECT number, client_name FROM invoices WHERE workspace_id = ? ORDER BY random() LIMIT 500", wsID)
	if err != nil {
		b.Fatal(err)
	}
	var qs [][2]string
	for rows.Next() {
		var num, client string
		rows.Scan(&num, &client)
		qs = append(qs, [2]string{num, client})
	}
	rows.Close()
	return e, records.Workspace{ID: wsID, Commerce: true}, qs
}

func BenchmarkSearch(b *testing.B) {
	e, ws, qs := searchBench(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    func(i int) string
	}{
		{"number", func(i int) string { return qs[i%len(qs)][0] }},
		{"client", func(i int) string { return qs[i%len(qs)][1] }},
		{"client-word", func(i int) string { return "Acme" }},
		{"number-prefix", func(i int) string { return qs[i%len(qs)][0][:8] }},
		{"list-no-q", func(i int) string { return "" }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out, err := e.List(ctx, resource.Invoices, ws, records.Page{Limit: 25, Q: c.q(i)})
				if err != nil {
					b.Fatal(err)
				}
				if len(out) < 30 {
					b.Fatalf("%s", out)
				}
			}
		})
	}
}
