package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Deliveries outlive a crash: writes keep coming while the receiver answers
// 500, so deliveries are pending and being retried when the server is
// killed with SIGKILL; after a restart every event in the database — every
// acknowledged write's among them — reaches the receiver, signed.
func TestWebhooksDeliveredAfterKill9(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	flags := hookFlags(retries(100, 200*time.Millisecond))
	s := startServer(t, dbURL, flags...)
	env := client(t, s.url)
	rcv := newHookReceiver(t)
	var failing atomic.Bool
	failing.Store(true)
	rcv.answer = func(string, int) int {
		if failing.Load() {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	subscribe(t, env, key, rcv, "*")

	// Writes until stopped; the acknowledged ones are noted.
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		hc := &http.Client{Timeout: 5 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			status, b, err := postJSONWith(hc, s.url+"/v1/clients", key, fmt.Sprintf(`{"name":"crash-%d"}`, i))
			if err != nil {
				time.Sleep(10 * time.Millisecond) // the server is gone
				continue
			}
			var c struct{ ID string }
			if status == 201 && json.Unmarshal(b, &c) == nil {
				mu.Lock()
				acked = append(acked, c.ID)
				mu.Unlock()
			}
		}
	}()
	waitFor(t, 20*time.Second, "writes acknowledged and deliveries refused by the receiver", func() bool {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		return n >= 30 && len(rcv.got()) >= 20
	})
	s.kill9(t)
	close(stop)
	<-done
	if n := len(rcv.delivered()); n != 0 {
		t.Fatalf("the receiver accepted %d deliveries while it answered 500", n)
	}

	failing.Store(false)
	s = startServer(t, dbURL, flags...)
	env = client(t, s.url)
	events := allEvents(t, env, key)
	byObject := map[string]bool{}
	for _, e := range events {
		var o struct{ ID string }
		_ = json.Unmarshal(e.Data.Object, &o)
		byObject[o.ID] = true
	}
	for _, id := range acked {
		if !byObject[id] {
			t.Errorf("acknowledged client %s has no event", id)
		}
	}
	// A send cut off by the kill holds its claim until the lease runs out
	// (the 10 s timeout and 20 s more), then is sent again.
	waitFor(t, 60*time.Second, "every event delivered", func() bool {
		got := map[string]bool{}
		for _, c := range rcv.delivered() {
			got[c.id] = true
		}
		for _, e := range events {
			if !got[e.ID] {
				return false
			}
		}
		return true
	})
	t.Logf("%d events (%d acknowledged writes), %d requests to the receiver", len(events), len(acked), len(rcv.got()))
}
