package writes_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest/benchdata"
	"github.com/ledgerbase/ledgerbase/api/rest"
)

// benchApp seeds a demo workspace into a SQLite file and builds the real
// fiber app on it (every middleware but the appliance's telemetry). It
// returns the handler, an admin key without a rate limit, and the ids of
// invoices with an open balance. Writes cost per row written, so a small
// file profiles them faithfully.
func benchApp(b *testing.B) (fasthttp.RequestHandler, string, []string, [][2]string) {
	ctx := context.Background()
	db, wsID := benchdata.Seeded(b, "LEDGERBASE_BENCH_DB", "Bench", 5000)
	ws := struct{ ID string }{wsID}
	unlimited := 0
	key, _, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Role: access.RoleAdmin, RateLimit: &unlimited})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := rest.New(db, rest.Config{Config: api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		b.Fatal(err)
	}
	app := srv.Finish()
	b.Cleanup(func() { _ = app.Shutdown() })
	rows, err := db.ReadPool.QueryContext(ctx, "SELECT id FROM invoices WHERE workspace_id = ? AND status IN ('sent', 'partially_paid', 'overdue') AND remaining_cents > 1000 LIMIT 1000", ws.ID)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) == 0 {
		b.Fatal("no payable invoice in the demo data")
	}
	// Order lines with room to ship a thousandth of a unit many times, as
	// ledgerbase-bench's "create shipment" ships them.
	rows, err = db.ReadPool.QueryContext(ctx, `SELECT l.sales_order_id, l.id FROM order_lines l JOIN sales_orders o ON o.id = l.sales_order_id
		WHERE o.workspace_id = ? AND o.status IN ('confirmed', 'partially_shipped') AND l.qty_milli - l.shipped_qty_milli >= 500 LIMIT 1000`, ws.ID)
	if err != nil {
		b.Fatal(err)
	}
	var lines [][2]string
	for rows.Next() {
		var l [2]string
		if err := rows.Scan(&l[0], &l[1]); err != nil {
			b.Fatal(err)
		}
		lines = append(lines, l)
	}
	rows.Close()
	if len(lines) == 0 {
		b.Fatal("no shippable order line in the demo data")
	}
	return app.Handler(), key, ids, lines
}

// post runs one request through the handler as fasthttp would.
func post(b *testing.B, h fasthttp.RequestHandler, rc *fasthttp.RequestCtx, path, key string, body []byte, want ...int) {
	rc.Request.Reset()
	rc.Response.Reset()
	rc.Request.Header.SetMethod(fiber.MethodPost)
	rc.Request.SetRequestURI(path)
	rc.Request.Header.Set(fiber.HeaderAuthorization, "Bearer "+key)
	rc.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
	rc.Request.SetBody(body)
	h(rc)
	got := rc.Response.StatusCode()
	for _, w := range want {
		if got == w {
			return
		}
	}
	b.Fatalf("POST %s: %d %s", path, got, rc.Response.Body())
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the process's CPU time per operation (cpu-ns/op): on a
// shared machine wall time per operation also counts other processes.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWrites measures the server's CPU per write of the two write
// scenarios of `ledgerbase-bench`, one request at a time:
//
//	go test ./api/writes -run '^$' -bench Writes -benchtime 5000x -count 6 -cpuprofile /tmp/cpu.prof
func BenchmarkWrites(b *testing.B) {
	h, key, ids, _ := benchApp(b)
	rc := &fasthttp.RequestCtx{}
	rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4000}, nil)
	n := 0
	b.Run("create-client", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime(b))
		for i := 0; i < b.N; i++ {
			n++
			post(b, h, rc, "/v1/clients", key,
				fmt.Appendf(nil, `{"name":"Bench Client %x","email":"bench-%x@example.com"}`, n, n), fiber.StatusCreated)
		}
	})
	b.Run("record-payment", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime(b))
		for i := 0; i < b.N; i++ {
			n++
			post(b, h, rc, "/v1/invoices/"+ids[n%len(ids)]+"/payments", key,
				fmt.Appendf(nil, `{"id":"bench-%x","number":"PAY-%x","status":"completed","date":"2026-01-15","amount_incl_vat_cents":1}`, n, n),
				fiber.StatusCreated)
		}
	})
}

// BenchmarkWritesParallel runs the writes of ledgerbase-bench's write rows
// from 32 goroutines, as concurrent clients queue on SQLite's single writer.
func BenchmarkWritesParallel(b *testing.B) {
	h, key, ids, lines := benchApp(b)
	var n atomic.Int64
	run := func(b *testing.B, path func(int64) string, body func(int64) []byte) {
		b.ReportAllocs()
		b.SetParallelism(16)
		defer reportCPU(b, cpuTime(b))
		b.RunParallel(func(pb *testing.PB) {
			rc := &fasthttp.RequestCtx{}
			rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4000}, nil)
			for pb.Next() {
				i := n.Add(1)
				post(b, h, rc, path(i), key, body(i), fiber.StatusCreated)
			}
		})
	}
	b.Run("create-client", func(b *testing.B) {
		run(b, func(int64) string { return "/v1/clients" }, func(i int64) []byte {
			return fmt.Appendf(nil, `{"name":"Bench Client %x","email":"bench-%x@example.com"}`, i, i)
		})
	})
	b.Run("record-payment", func(b *testing.B) {
		run(b, func(i int64) string { return "/v1/invoices/" + ids[i%int64(len(ids))] + "/payments" }, func(i int64) []byte {
			return fmt.Appendf(nil, `{"id":"bench-%x","number":"PAY-%x","status":"completed","date":"2026-01-15","amount_incl_vat_cents":1}`, i, i)
		})
	})
	b.Run("create-shipment", func(b *testing.B) {
		run(b, func(int64) string { return "/v1/shipments" }, func(i int64) []byte {
			l := lines[i%int64(len(lines))]
			return fmt.Appendf(nil, `{"sales_order_id":%q,"lines":[{"order_line_id":%q,"qty_milli":1}]}`, l[0], l[1])
		})
	})
}
