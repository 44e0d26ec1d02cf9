package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// traffic keeps requests going against a server: each worker creates clients
// (remembering every one the server acknowledged) and lists them, and any
// answer but a success is a failure.
type traffic struct {
	url, key string
	hc       *http.Client
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	acked    []string // names of the clients answered 201
	failures []string
	requests int
}

func startTraffic(url, key string, workers int) *traffic {
	hc := &http.Client{Timeout: 30 * time.Second}
	l := &traffic{url: url, key: key, hc: hc, stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				name := fmt.Sprintf("load-%d-%d", w, n)
				status, err := l.do(hc, "POST", "/v1/clients", `{"name":"`+name+`"}`)
				l.note("POST "+name, status, err, http.StatusCreated)
				if err == nil && status == http.StatusCreated {
					l.mu.Lock()
					l.acked = append(l.acked, name)
					l.mu.Unlock()
				}
				status, err = l.do(hc, "GET", "/v1/clients?limit=5", "")
				l.note("GET", status, err, http.StatusOK)
				time.Sleep(5 * time.Millisecond) // ~100 requests/s per worker
			}
		}()
	}
	return l
}

func (l *traffic) do(hc *http.Client, method, path, body string) (int, error) {
	req, err := http.NewRequest(method, l.url+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

func (l *traffic) note(what string, status int, err error, want int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	if err != nil || status != want {
		l.failures = append(l.failures, fmt.Sprintf("%s: status %d, %v", what, status, err))
	}
}

func (l *traffic) finish() {
	close(l.stop)
	l.wg.Wait()
	// A connection the client dialled and never used would hold the
	// server's graceful shutdown until its grace runs out.
	l.hc.CloseIdleConnections()
}

// Every other process the README lets a user run beside a live SQLite
// server — the CLI's key create, backup, migrate and demo, and a second
// serve — while the server is under load: the server never dies, answers
// every request, and loses no acknowledged write. (Closing a descriptor of
// SQLite's -shm file behind SQLite's back once dropped its locks, and the
// next process to open the file reset the shared memory under the live
// server, which died with SIGBUS.)
func TestProcessesBesideALiveSQLiteServer(t *testing.T) {
	if apitest.Backend() == "postgres" {
		t.Skip("guards SQLite's own files; the SQLite run of the suite runs it")
	}
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "live.db")
	ws := mustCLI(t, dbURL, "workspace", "create", "--name", "Live", "--plan", "business", "--commerce-mode", "--commerce-module")
	key := mustCLI(t, dbURL, "key", "create", "--workspace", ws, "--rate-limit", "0")
	srv := startServer(t, dbURL)
	l := startTraffic(srv.url, key, 3)

	neighbours := []struct {
		name string
		run  func(i int) error
	}{
		{"key create", func(int) error {
			_, err := cliRun(t, dbURL, "key", "create", "--workspace", ws, "--name", "beside")
			return err
		}},
		{"backup", func(i int) error {
			_, err := cliRun(t, dbURL, "backup", "--out", filepath.Join(dir, fmt.Sprintf("backup-%d.db", i)))
			return err
		}},
		{"migrate", func(int) error { _, err := cliRun(t, dbURL, "migrate"); return err }},
		{"demo", func(i int) error {
			_, err := cliRun(t, dbURL, "demo", "--workspace", ws, "--records", "5", "--seed", fmt.Sprint(i+1))
			return err
		}},
		{"second serve", func(int) error {
			second := startServer(t, dbURL)
			second.stop(t)
			return nil
		}},
	}
	const rounds = 6
	for i := range rounds * len(neighbours) {
		nb := neighbours[i%len(neighbours)]
		if err := nb.run(i); err != nil {
			t.Errorf("%s beside the live server: %v", nb.name, err)
		}
		if !srv.alive() {
			l.finish()
			t.Fatalf("the server died after %s (round %d): %v\n%s", nb.name, i/len(neighbours), srv.err, tail(srv.stderr.String()))
		}
	}
	l.finish()
	if !srv.alive() {
		t.Fatalf("the server died: %v\n%s", srv.err, tail(srv.stderr.String()))
	}
	if len(l.failures) > 0 {
		t.Fatalf("%d of %d requests failed, first: %s", len(l.failures), l.requests, l.failures[0])
	}
	if len(l.acked) < 50 {
		t.Fatalf("only %d creates were acknowledged: the load did not run", len(l.acked))
	}
	srv.stop(t)

	// Every acknowledged client is there, once.
	db, err := database.Open(context.Background(), dbURL, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	have := map[string]int{}
	rows, err := db.ReadPool.Query("SELECT name FROM clients WHERE workspace_id = ? AND name LIKE 'load-%'", ws)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		have[n]++
	}
	rows.Close()
	for _, n := range l.acked {
		if have[n] != 1 {
			t.Fatalf("acknowledged client %s is stored %d times", n, have[n])
		}
	}
	t.Logf("%d requests, %d acknowledged creates, %d neighbour runs", l.requests, len(l.acked), rounds*len(neighbours))
}

// tail is the end of a process's output, enough to see why it died.
func tail(s string) string {
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}
