package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// Issue 32 item 1, as it was found: two `serve` processes on one
// PostgreSQL, 40 concurrent PATCHes split over them, each making one of a
// client's four addresses its default billing address. Every one answers
// 200 within 5 s, and one default is left (they deadlocked: 500, or hung).
func TestTwoServersMakeOneDefaultAddressAtATime(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("several servers share one database on PostgreSQL; set " + apitest.PostgresEnv)
	}
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	envs := []*apitest.Env{client(t, startServer(t, dbURL).url), client(t, startServer(t, dbURL).url)}
	cli := envs[0].Do(t, "POST", "/v1/clients", key, record{"name": "Acme"}).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
	base := "/v1/clients/" + cli + "/addresses"
	ids := make([]string, 4)
	for i := range ids {
		ids[i] = envs[i%2].Do(t, "POST", base, key, record{"name": fmt.Sprint("Address ", i)}).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
	}
	const n = 40
	status, took := make([]int, n), make([]time.Duration, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			a := i % len(ids)
			status[i] = envs[i%2].Do(t, "PATCH", base+"/"+ids[a], key, record{"name": fmt.Sprint("Address ", a), "default_billing": true}).Status
			took[i] = time.Since(t0)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if status[i] != http.StatusOK || took[i] > 5*time.Second {
			t.Errorf("request %d: status %d after %v", i, status[i], took[i].Round(time.Millisecond))
		}
	}
	var l struct{ Data []record }
	envs[1].Get(t, base, key).WantStatus(t, http.StatusOK).Decode(t, &l)
	defaults := 0
	for _, a := range l.Data {
		if a["default_billing"] == true {
			defaults++
		}
	}
	if len(l.Data) != len(ids) || defaults != 1 {
		t.Fatalf("%d addresses, %d default billing addresses; want %d and 1", len(l.Data), defaults, len(ids))
	}
}
