package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The slow-client protection of `serve`, end to end: fasthttp's read, idle
// and write timeouts reach the socket through lazyDeadlines.

// slowClient starts `serve` with the given read and idle timeouts (the
// write timeout 5 s) and dials it without an HTTP client, to be slow on purpose.
func slowClient(t *testing.T, read, idle time.Duration) (net.Conn, *bufio.Reader) {
	t.Helper()
	cfg := testConfig()
	cfg.ReadTimeout, cfg.IdleTimeout, cfg.WriteTimeout = read, idle, 5*time.Second
	r := start(t, cfg, quiet, ownDB(t))
	c, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Nothing the server does should take this long; it bounds a hung test.
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// ask sends a request and checks it is answered with 200.
func ask(t *testing.T, c net.Conn, br *bufio.Reader, what string) {
	t.Helper()
	if _, err := io.WriteString(c, healthz); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: status %d, %v", what, resp.StatusCode, err)
	}
}

const healthz = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"

// waitClosed waits for the server to end the connection and says how long that took.
func waitClosed(t *testing.T, br *bufio.Reader, from time.Time) time.Duration {
	t.Helper()
	_, err := io.ReadAll(br)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("waiting for the server to close: %v", err)
	}
	return time.Since(from)
}

func TestAClientSlowToSendItsRequestIsCutAfterTheReadTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	c, br := slowClient(t, timeout, 5*time.Second)
	began := time.Now()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: t\r\n"); err != nil { // no blank line: never finished
		t.Fatal(err)
	}
	took := waitClosed(t, br, began)
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("the connection ended after %v; read timeout %v", took, timeout)
	}
}

func TestAnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	c, br := slowClient(t, 5*time.Second, timeout)
	ask(t, c, br, "the request")
	took := waitClosed(t, br, time.Now())
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("the idle connection ended after %v; idle timeout %v", took, timeout)
	}
}

// A deadline left in force by one request must not cut the next one
// short: here the first request's read deadline (300 ms) is long past
// when the second arrives, well within the idle timeout.
func TestAKeepAliveConnectionOutlivesItsFirstRequestsReadTimeout(t *testing.T) {
	t.Parallel()
	c, br := slowClient(t, 300*time.Millisecond, 5*time.Second)
	for i, pause := range []time.Duration{0, time.Second, 50 * time.Millisecond, 50 * time.Millisecond, 700 * time.Millisecond} {
		time.Sleep(pause)
		ask(t, c, br, fmt.Sprintf("request %d", i+1))
	}
}

// lazyPair is a connected pair whose first end has lazy deadlines.
func lazyPair(t *testing.T, slack time.Duration) (*lazyConn, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &lazyConn{Conn: a, slack: int64(slack)}, b
}

func TestALazyDeadlineFiresNoEarlierThanAskedAndAtMostSlackLater(t *testing.T) {
	t.Parallel()
	const slack = 100 * time.Millisecond
	c, _ := lazyPair(t, slack)
	for i := range 3 { // the second and third re-arm a deadline already in force
		asked := 150 * time.Millisecond
		began := time.Now()
		if err := c.SetReadDeadline(began.Add(asked)); err != nil {
			t.Fatal(err)
		}
		_, err := c.Read(make([]byte, 1))
		took := time.Since(began)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read %d: %v, want a deadline error", i+1, err)
		}
		if took < asked || took > asked+slack+time.Second {
			t.Errorf("read %d failed after %v; asked %v, slack %v", i+1, took, asked, slack)
		}
	}
}

func TestALazyWriteDeadlineCutsAWriteNobodyReads(t *testing.T) {
	t.Parallel()
	c, _ := lazyPair(t, 10*time.Millisecond)
	began := time.Now()
	if err := c.SetWriteDeadline(began.Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) { // a pipe's write waits for its reader
		t.Fatalf("write: %v, want a deadline error", err)
	}
	if took := time.Since(began); took < 100*time.Millisecond {
		t.Errorf("the write failed after %v, before its deadline", took)
	}
}

func TestADeadlineSetDuringABlockedReadAbortsIt(t *testing.T) {
	t.Parallel()
	c, _ := lazyPair(t, time.Second)
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	for c.read.active.Load() == 0 { // the read has begun
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // and is blocked
	if err := c.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read: %v, want a deadline error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked read was not aborted by its new deadline")
	}
}

func TestClearingALazyDeadlineLetsAReadWait(t *testing.T) {
	t.Parallel()
	c, peer := lazyPair(t, 10*time.Millisecond)
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	go func() { time.Sleep(200 * time.Millisecond); _, _ = peer.Write([]byte("y")) }()
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil || b[0] != 'y' {
		t.Fatalf("read after clearing the deadline: %q, %v", b, err)
	}
}

func TestDeadlineSlackScalesWithTheShortestTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		timeouts []time.Duration
		want     time.Duration
	}{
		{[]time.Duration{30 * time.Second, time.Minute, 2 * time.Minute}, 30 * time.Second / 32}, // the defaults
		{[]time.Duration{time.Hour}, time.Second},
		{[]time.Duration{320 * time.Millisecond, 0, time.Minute}, 10 * time.Millisecond},
		{[]time.Duration{0, 0, 0}, 0}, // no deadlines: connections are not wrapped
	} {
		if got := deadlineSlack(tc.timeouts...); got != tc.want {
			t.Errorf("deadlineSlack(%v) = %v, want %v", tc.timeouts, got, tc.want)
		}
	}
}

// BenchmarkDeadlines: what a request's three deadlines cost on a loopback
// TCP connection, set on the socket each time (fasthttp's way) and lazily
// (the deadlines only; the reads and writes themselves are left out).
func BenchmarkDeadlines(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = io.Copy(io.Discard, c)
		}
	}()
	tcp, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer tcp.Close()
	// As fasthttp serves a small request: the read that ends the idle wait
	// brings the whole request, so the read deadline sees no read.
	request := func(b *testing.B, c net.Conn, read, write func()) {
		for b.Loop() {
			now := time.Now() // fasthttp reads the clock for each
			_ = c.SetReadDeadline(now.Add(2 * time.Minute))
			read()
			_ = c.SetReadDeadline(now.Add(30 * time.Second))
			_ = c.SetWriteDeadline(now.Add(time.Minute))
			write()
		}
	}
	b.Run("socket", func(b *testing.B) { request(b, tcp, func() {}, func() {}) })
	b.Run("lazy", func(b *testing.B) {
		lc := &lazyConn{Conn: tcp, slack: int64(deadlineSlack(30*time.Second, time.Minute, 2*time.Minute))}
		request(b, lc, func() {
			_ = lc.read.begin(lc.slack, tcp.SetReadDeadline)
			lc.read.active.Add(-1)
		}, func() {
			_ = lc.write.begin(lc.slack, tcp.SetWriteDeadline)
			lc.write.active.Add(-1)
		})
	})
}
