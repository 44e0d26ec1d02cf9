package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// roundRobin is a load balancer's view of several servers: each request
// goes to the next one. It counts the answers of 500 and above.
type roundRobin struct {
	urls  []string
	key   string
	hc    *http.Client
	next  atomic.Uint64
	fails atomic.Int64
	mu    sync.Mutex
	errs  []string
}

func (rr *roundRobin) do(method, path, body string, headers ...string) (int, []byte) {
	url := rr.urls[rr.next.Add(1)%uint64(len(rr.urls))]
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+rr.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := rr.hc.Do(req)
	if err != nil {
		rr.fail(fmt.Sprintf("%s %s on %s: %v", method, path, url, err))
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		rr.fail(fmt.Sprintf("%s %s on %s: %d %s", method, path, url, res.StatusCode, b))
	}
	return res.StatusCode, b
}

func (rr *roundRobin) fail(what string) {
	rr.fails.Add(1)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.errs) < 10 {
		rr.errs = append(rr.errs, what)
	}
}

// Three `serve` processes on one PostgreSQL database behind a round-robin
// client, with writers, readers and an event consumer at once: no answer
// is a 5xx; every create is stored once (its retry with the same
// Idempotency-Key, on another server, answers the same record); a record
// made on one server reads back at once on the next; the consumer paging
// with ending_before sees every event once, in sequence order; a webhook
// receiver gets each event exactly once.
func TestThreeServersOnOnePostgreSQL(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("several servers share one database on PostgreSQL; set " + apitest.PostgresEnv)
	}
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	flags := hookFlags(retries(20, 200*time.Millisecond))
	var urls []string
	for range 3 {
		urls = append(urls, startServer(t, dbURL, flags...).url)
	}
	rcv := newHookReceiver(t)
	subscribe(t, client(t, urls[0]), key, rcv, "*")
	rr := &roundRobin{urls: urls, key: key, hc: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(rr.hc.CloseIdleConnections)

	type event struct {
		ID       string
		Type     string
		Sequence int64
		Data     struct {
			Object struct{ ID string }
		}
	}
	var start event
	{
		if status, b := rr.do("POST", "/v1/clients", `{"name":"start"}`); status != http.StatusCreated {
			t.Fatalf("create: %d %s", status, b)
		}
		var p struct{ Data []event }
		status, b := rr.do("GET", "/v1/events?limit=1", "")
		if err := json.Unmarshal(b, &p); status != http.StatusOK || err != nil || len(p.Data) != 1 || p.Data[0].Type != "client.created" {
			t.Fatalf("the newest event after a create, on the next server: %d %s", status, b)
		}
		start = p.Data[0]
	}
	const writers, each = 6, 25
	var (
		mu      sync.Mutex
		created = map[string]string{} // id: name
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("rr-%d-%d", w, i)
				body := fmt.Sprintf(`{"name":%q}`, name)
				idem := []string{"Idempotency-Key", name}
				status, b := rr.do("POST", "/v1/clients", body, idem...)
				if status != http.StatusCreated {
					t.Errorf("create %s: %d %s", name, status, b)
					return
				}
				var c struct{ ID string }
				if err := json.Unmarshal(b, &c); err != nil {
					t.Error(err)
					return
				}
				// Read back on the next server, at once.
				if status, b := rr.do("GET", "/v1/clients/"+c.ID, ""); status != http.StatusOK {
					t.Errorf("read %s back on the next server: %d %s", c.ID, status, b)
				}
				if i%5 == 0 { // a client's retry, landing on another server
					status, b := rr.do("POST", "/v1/clients", body, idem...)
					var again struct{ ID string }
					_ = json.Unmarshal(b, &again)
					if status != http.StatusCreated || again.ID != c.ID {
						t.Errorf("retry of %s: %d %s, want 201 with %s", name, status, b, c.ID)
					}
				}
				mu.Lock()
				created[c.ID] = name
				mu.Unlock()
			}
		})
	}
	for range 2 { // readers of lists
		wg.Go(func() {
			for range 40 {
				if status, b := rr.do("GET", "/v1/clients?limit=10", ""); status != http.StatusOK {
					t.Errorf("list: %d %s", status, b)
				}
			}
		})
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	// The consumer, catching up from its start while the writes go on.
	var consumed []event
	seen := map[string]bool{}
	cursor, last := start.ID, start.Sequence
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		default:
		}
		for {
			status, b := rr.do("GET", "/v1/events?limit=7&ending_before="+cursor, "")
			if status != http.StatusOK {
				t.Fatalf("events: %d %s", status, b)
			}
			var p struct {
				Data []event
				Meta struct {
					HasMore bool `json:"has_more"`
				}
			}
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			for _, e := range slices.Backward(p.Data) {
				if seen[e.ID] {
					t.Fatalf("event %s seen twice", e.ID)
				}
				if e.Sequence <= last {
					t.Fatalf("event %s (sequence %d) after %s (sequence %d)", e.ID, e.Sequence, cursor, last)
				}
				seen[e.ID] = true
				consumed = append(consumed, e)
				cursor, last = e.ID, e.Sequence
			}
			if !p.Meta.HasMore {
				break
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if n := rr.fails.Load(); n > 0 {
		t.Fatalf("%d answers of 5xx or no answer, such as %v", n, rr.errs)
	}

	// Every create stored once, and listed.
	if len(created) != writers*each {
		t.Fatalf("%d clients created, want %d", len(created), writers*each)
	}
	created[start.Data.Object.ID] = "start"
	listed := map[string]int{}
	for path := "/v1/clients?limit=100"; path != ""; {
		var p struct {
			Data []struct{ ID, Name string }
			Meta struct{ Total int }
		}
		client(t, urls[2]).Get(t, path, key).WantStatus(t, 200).Decode(t, &p)
		if p.Meta.Total != len(created) {
			t.Fatalf("meta.total %d, want %d", p.Meta.Total, len(created))
		}
		for _, c := range p.Data {
			listed[c.ID]++
			if created[c.ID] != c.Name {
				t.Fatalf("listed %s %q, not as created (%q)", c.ID, c.Name, created[c.ID])
			}
		}
		path = ""
		if len(p.Data) > 0 && len(listed) < p.Meta.Total {
			path = fmt.Sprintf("/v1/clients?limit=100&offset=%d", len(listed))
		}
	}
	if len(listed) != len(created) {
		t.Fatalf("%d clients listed, %d created", len(listed), len(created))
	}

	// The consumer saw one client.created per create, and nothing else.
	madeBy := map[string]int{}
	for _, e := range consumed {
		if e.Type == "client.created" {
			madeBy[e.Data.Object.ID]++
		}
	}
	for id := range created {
		if id != start.Data.Object.ID && madeBy[id] != 1 {
			t.Fatalf("client %s has %d client.created events", id, madeBy[id])
		}
	}
	all := allEvents(t, client(t, urls[1]), key)
	if i := slices.IndexFunc(all, func(e apiEvent) bool { return e.ID == start.ID }); i != len(consumed) {
		t.Fatalf("the consumer caught up with %d events after its start, the log holds %d", len(consumed), i)
	}

	// Each event delivered once.
	waitFor(t, 60*time.Second, "every event delivered", func() bool { return len(rcv.delivered()) == len(all) })
	time.Sleep(500 * time.Millisecond) // a second send, were there one, would come within a poll
	count := map[string]int{}
	for _, c := range rcv.got() {
		count[c.id]++
	}
	for _, e := range all {
		if count[e.ID] != 1 {
			t.Errorf("the receiver got %s %d times", e.ID, count[e.ID])
		}
	}
}
