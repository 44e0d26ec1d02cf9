package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// Two `serve` processes on one PostgreSQL share the delivery queue without
// sending an event twice: writes go to both, each wakes its own worker and
// polls for the other's, and every event reaches each receiver exactly once
// (counted by webhook-id); both servers' metrics show they did part of it.
func TestTwoServersDeliverEachEventOnce(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("several servers share one database on PostgreSQL; set " + apitest.PostgresEnv)
	}
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	flags := hookFlags(retries(20, 200*time.Millisecond))
	servers := []*server{startServer(t, dbURL, flags...), startServer(t, dbURL, flags...)}
	env := client(t, servers[0].url)
	rcvs := []*hookReceiver{newHookReceiver(t), newHookReceiver(t)}
	for _, r := range rcvs {
		r.answer = func(string, int) int { time.Sleep(2 * time.Millisecond); return http.StatusOK }
		subscribe(t, env, key, r, "*")
	}

	const writes = 120
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range writes / 2 {
				if status, err := postJSON(s.url+"/v1/clients", key, fmt.Sprintf(`{"name":"s%d-%d"}`, i, n)); status != 201 {
					t.Errorf("server %d: create answered %d (%v)", i, status, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	events := allEvents(t, env, key)
	if len(events) != writes {
		t.Fatalf("%d events, want %d", len(events), writes)
	}
	for _, r := range rcvs {
		waitFor(t, 30*time.Second, "every event delivered", func() bool { return len(r.delivered()) == len(events) })
	}
	time.Sleep(500 * time.Millisecond) // a second send, were there one, would come within a poll
	for ri, r := range rcvs {
		got := r.got()
		count := map[string]int{}
		for _, c := range got {
			count[c.id]++
		}
		for _, e := range events {
			if count[e.ID] != 1 {
				t.Errorf("receiver %d got %s %d times", ri, e.ID, count[e.ID])
			}
		}
		if len(got) != len(events) {
			t.Errorf("receiver %d got %d requests for %d events", ri, len(got), len(events))
		}
	}
	total := 0.0
	for i, s := range servers {
		n, _ := scrape(t, s.url+"/metrics").value("ledgerbase_webhook_deliveries_total", map[string]string{"outcome": "success"})
		t.Logf("server %d delivered %v", i, n)
		if n == 0 {
			t.Errorf("server %d delivered nothing: the queue was not shared", i)
		}
		total += n
	}
	if total != float64(len(events)*len(rcvs)) {
		t.Errorf("the servers delivered %v in all, want %d", total, len(events)*len(rcvs))
	}
}
