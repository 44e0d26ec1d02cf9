package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// BenchmarkOverhead measures the fixed cost of a /v1 request against the
// bench's bare fiber baseline, in one process and one run, without the
// network: each request goes through fasthttp's server loop on a
// connection that replays it (see replay), so what the server does between
// its reads and writes is all measured. The appliance is the production one (defaultConfig:
// metrics on, access log on) logging JSON through the batching writer into
// io.Discard. Compare the sub-benchmarks' ns/op: 429/baseline is the
// issue's 429 row, get/baseline its "read one invoice" row (minus the
// network and system calls, which both sides pay alike).
//
//	go test ./cmd/ledgerbase -run '^$' -bench Overhead -benchmem -count 6
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	db, err := openMigrated(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"), database.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ws, err := access.NewWorkspace(ctx, db.Writer, "Bench", "business", true, true)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := demo.Run(ctx, db, ws.ID, demo.Options{Invoices: 200, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	var invoice string
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT id FROM invoices WHERE workspace_id = ? LIMIT 1", ws.ID).Scan(&invoice); err != nil {
		b.Fatal(err)
	}
	secret, _, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Name: "bench", Role: access.RoleAdmin, RateLimit: new(int)})
	if err != nil {
		b.Fatal(err)
	}
	one := 1
	limited, _, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Name: "bench over limit", Role: access.RoleAdmin, RateLimit: &one})
	if err != nil {
		b.Fatal(err)
	}

	cfg := defaultConfig()
	cfg.Log.Format = "json"
	out := newLogWriter(io.Discard, 100*time.Millisecond)
	b.Cleanup(func() { out.Close() })
	a, err := newAppliance(cfg, cfg.logger(out), db)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.stopUsage(); <-a.usageDone })
	a.app.Handler() // builds the route tree, as Listen does; Server alone does not
	app := a.app.Server()

	path := "/v1/invoices/" + invoice
	getReq := rawGet(path, "Bearer "+secret)
	limitedReq := rawGet(path, "Bearer "+limited)
	body := serveOnce(b, app, getReq, 200)
	serveOnce(b, app, limitedReq, 200) // spends the key's one token
	serveOnce(b, app, limitedReq, 429)

	base := fiber.New(fiber.Config{DisableStartupMessage: true}) // as `ledgerbase-bench baseline`
	base.Get("/v1/invoices/:id", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
	base.Handler()
	serveOnce(b, base.Server(), rawGet(path, ""), 200)

	for _, bc := range []struct {
		name   string
		srv    *fasthttp.Server
		req    []byte
		status int
	}{
		{"baseline", base.Server(), rawGet(path, ""), 200},
		{"429", app, limitedReq, 429},
		{"get", app, getReq, 200},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			n := 0
			replay(b, bc.srv, bc.req, bc.status, func() bool { n++; return n <= b.N })
			// The process's CPU time (GC included) is steadier than ns/op on a
			// machine shared with other work.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
		// The same on every core at once, as a loaded server runs it: what
		// the requests share (locks, counters, the log's buffer) costs here.
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) { replay(b, bc.srv, bc.req, bc.status, pb.Next) })
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// replay serves raw on one keep-alive "connection" of srv for as long as
// next says, through fasthttp's own server loop (its clock readings and
// buffers included), without the network: the connection hands over raw
// at every read and checks the status of every response written.
func replay(b *testing.B, srv *fasthttp.Server, raw []byte, status int, next func() bool) *replayConn {
	c := &replayConn{raw: raw, next: next, want: []byte(fmt.Sprintf("HTTP/1.1 %d ", status))}
	if err := srv.ServeConn(c); err != nil {
		b.Error(err)
	}
	if c.bad != nil {
		b.Errorf("want status %d: %q", status, c.bad)
	}
	return c
}

// serveOnce serves raw once and returns the response's body.
func serveOnce(b *testing.B, srv *fasthttp.Server, raw []byte, status int) []byte {
	served := false
	c := replay(b, srv, raw, status, func() bool { first := !served; served = true; return first })
	if b.Failed() {
		b.FailNow()
	}
	_, body, _ := bytes.Cut(c.first, []byte("\r\n\r\n"))
	return body
}

var (
	replayLocal  = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	replayRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
)

type replayConn struct {
	raw, want, bad []byte
	first          []byte // the first response, whole (one write: fasthttp flushes a response at once)
	next           func() bool
}

func (c *replayConn) Read(p []byte) (int, error) {
	if !c.next() {
		return 0, io.EOF
	}
	return copy(p, c.raw), nil
}

func (c *replayConn) Write(p []byte) (int, error) {
	if c.first == nil {
		c.first = append([]byte(nil), p...)
	}
	if c.bad == nil && !bytes.HasPrefix(p, c.want) {
		c.bad = append([]byte(nil), p...)
	}
	return len(p), nil
}

func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) LocalAddr() net.Addr              { return replayLocal }
func (c *replayConn) RemoteAddr() net.Addr             { return replayRemote }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rawGet(path, auth string) []byte {
	var b bytes.Buffer
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ledgerbase-bench\r\nAccept: */*\r\n")
	if auth != "" {
		b.WriteString("Authorization: " + auth + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}
