package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The slow-client protection of `serve`, end to end: fasthttp's read, idle
// and write timeouts reach the socket.

// slowClient starts `serve` with the given read and idle timeouts (the
// write timeout 5 s) and dials it without an HTTP client, to be slow on purpose.
// dialed is read before the dial: the server's read deadline starts when
// it accepts the connection, which may be before Dial returns here.
func slowClient(t *testing.T, read, idle time.Duration) (c net.Conn, br *bufio.Reader, dialed time.Time) {
	t.Helper()
	cfg := testConfig()
	cfg.ReadTimeout, cfg.IdleTimeout, cfg.WriteTimeout = read, idle, 5*time.Second
	r := start(t, cfg, quiet, ownDB(t))
	dialed = time.Now()
	c, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Nothing the server does should take this long; it bounds a hung test.
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c), dialed
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
	c, br, began := slowClient(t, timeout, 5*time.Second)
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
	c, br, _ := slowClient(t, 5*time.Second, timeout)
	sent := time.Now() // the idle time starts after the answer is written, so after this
	ask(t, c, br, "the request")
	took := waitClosed(t, br, sent)
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("the idle connection ended after %v; idle timeout %v", took, timeout)
	}
}

// A deadline left in force by one request must not cut the next one
// short: here the first request's read deadline (300 ms) is long past
// when the second arrives, well within the idle timeout.
func TestAKeepAliveConnectionOutlivesItsFirstRequestsReadTimeout(t *testing.T) {
	t.Parallel()
	c, br, _ := slowClient(t, 300*time.Millisecond, 5*time.Second)
	for i, pause := range []time.Duration{0, time.Second, 50 * time.Millisecond, 50 * time.Millisecond, 700 * time.Millisecond} {
		time.Sleep(pause)
		ask(t, c, br, fmt.Sprintf("request %d", i+1))
	}
}
