package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The load generator's client frames every kind of response a server may
// send, keeps the connection while the server does, and recovers from
// anything else by dialling again.
func TestBenchConnFramesResponsesAndReusesTheConnection(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	conns := map[string]bool{}
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.String()+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Content-Type")+" "+string(body))
		mu.Unlock()
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte(strings.Repeat("a", 100)))
			w.(http.Flusher).Flush() // no Content-Length: chunked
			w.Write([]byte(strings.Repeat("b", 70000)))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/limited":
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"rate_limited"}}`))
		default:
			w.Write([]byte(strings.Repeat("x", 50000))) // larger than the read buffer
		}
	}))
	defer srv.Close()
	c := newBenchConn(strings.TrimPrefix(srv.URL, "http://"), time.Now().Add(time.Minute))
	defer c.close()

	steps := []struct {
		r    request
		want int
	}{
		{request{method: "GET", path: "/v1/invoices?limit=25", auth: "Bearer k"}, 200},
		{request{method: "GET", path: "/chunked"}, 200},
		{request{method: "POST", path: "/v1/clients", auth: "Bearer k", body: []byte(`{"name":"A"}`)}, 200},
		{request{method: "GET", path: "/empty"}, 204},
		{request{method: "GET", path: "/limited"}, 429},
		{request{method: "GET", path: "/plain"}, 200},
	}
	for _, s := range steps {
		code, err := c.do(s.r)
		if err != nil || code != s.want {
			t.Fatalf("%s %s: got %d, %v; want %d", s.r.method, s.r.path, code, err, s.want)
		}
	}
	mu.Lock()
	if len(conns) != 1 {
		t.Errorf("%d requests went over %d connections, want 1 kept alive", len(got), len(conns))
	}
	if want := `POST /v1/clients Bearer k application/json {"name":"A"}`; got[2] != want {
		t.Errorf("server saw %q, want %q", got[2], want)
	}
	if want := "GET /v1/invoices?limit=25 Bearer k  "; got[0] != want {
		t.Errorf("server saw %q, want %q", got[0], want)
	}
	mu.Unlock()

	// Connection: close ends the connection; the next request dials again.
	for _, path := range []string{"/close", "/plain"} {
		if code, err := c.do(request{method: "GET", path: path}); err != nil || code != 200 {
			t.Fatalf("GET %s: %d, %v", path, code, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 2 {
		t.Errorf("after Connection: close the requests used %d connections, want 2", len(conns))
	}
}

func TestBenchConnReportsAMalformedResponseAndRecovers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The first connection answers garbage, later ones a proper response.
	go func() {
		for i := 0; ; i++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func(first bool) {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if first {
						nc.Write([]byte("SMTP ready\r\n\r\n"))
						continue
					}
					nc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				}
			}(i == 0)
		}
	}()
	c := newBenchConn(ln.Addr().String(), time.Now().Add(time.Minute))
	defer c.close()
	if _, err := c.do(request{method: "GET", path: "/"}); !errors.Is(err, errBadResponse) {
		t.Fatalf("garbage answered %v, want errBadResponse", err)
	}
	if code, err := c.do(request{method: "GET", path: "/"}); err != nil || code != 200 {
		t.Fatalf("after a malformed response: %d, %v; want 200 on a new connection", code, err)
	}
}
