package main

import (
	"net/http"
	"testing"
	"time"
)

// The delivery metrics, scraped from a real server's /metrics: attempts by
// outcome and their latency, the queue's depth and its oldest pending age
// while a receiver holds a delivery, and refusals by a server that does not
// allow private networks.
func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	s := startServer(t, dbURL, hookFlags("200ms")...)
	env := client(t, s.url)

	// slow holds its first request until released, answers it 500, then 200.
	slow, release := newHookReceiver(t), make(chan struct{})
	slow.answer = func(_ string, nth int) int {
		if nth == 0 {
			<-release
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	broken := newHookReceiver(t)
	broken.answer = func(string, int) int { return http.StatusServiceUnavailable }
	slowEP := subscribe(t, env, key, slow, "client.created")
	brokenEP := subscribe(t, env, key, broken, "client.created")

	m := scrape(t, s.url+"/metrics")
	for _, o := range []string{"success", "retry", "failed", "refused"} {
		m.want(t, "ledgerbase_webhook_deliveries_total", map[string]string{"outcome": o}, 0)
	}
	m.want(t, "ledgerbase_webhook_deliveries_pending", nil, 0)
	m.want(t, "ledgerbase_webhook_oldest_pending_age_seconds", nil, 0)

	env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme"}).WantStatus(t, 201)
	waitFor(t, 10*time.Second, "the slow receiver holds the first delivery", func() bool {
		slow.mu.Lock()
		defer slow.mu.Unlock()
		return len(slow.seen) == 1
	})
	waitFor(t, 10*time.Second, "the broken receiver's first answer is recorded", func() bool {
		v, _ := scrape(t, s.url+"/metrics").value("ledgerbase_webhook_deliveries_total", map[string]string{"outcome": "retry"})
		return v == 1
	})
	time.Sleep(1100 * time.Millisecond) // the oldest pending delivery ages past a second
	m = scrape(t, s.url+"/metrics")
	m.want(t, "ledgerbase_webhook_deliveries_pending", nil, 2)
	if age, _ := m.value("ledgerbase_webhook_oldest_pending_age_seconds", nil); age < 1 || age > 60 {
		t.Errorf("oldest pending age %v s, want from 1 to 60 while the receiver holds it", age)
	}

	close(release)
	waitFor(t, 15*time.Second, "both deliveries settle", func() bool {
		return deliveriesOf(t, env, key, slowEP).settled() && deliveriesOf(t, env, key, brokenEP).settled()
	})
	m = scrape(t, s.url+"/metrics")
	outcome := func(o string) map[string]string { return map[string]string{"outcome": o} }
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("success"), 1) // slow: 500, then 200
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("retry"), 2)   // slow's 500, broken's first 503
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("failed"), 1)  // broken's second 503: the schedule is spent
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("refused"), 0)
	m.want(t, "ledgerbase_webhook_attempt_duration_seconds", nil, 4)
	m.want(t, "ledgerbase_webhook_deliveries_pending", nil, 0)
	m.want(t, "ledgerbase_webhook_oldest_pending_age_seconds", nil, 0)

	// A server that does not allow private networks refuses the loopback
	// receiver at send time, without dialing it.
	env.Do(t, "DELETE", "/v1/webhook-endpoints/"+brokenEP, key, nil).WantStatus(t, 200)
	s.stop(t)
	strict := startServer(t, dbURL, "--webhooks-allow-http", "--webhooks-retry-schedule", "200ms", "--webhooks-poll", "100ms")
	env = client(t, strict.url)
	before := len(slow.got())
	env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Bolt"}).WantStatus(t, 201)
	waitFor(t, 15*time.Second, "the refused delivery settles", func() bool {
		l := deliveriesOf(t, env, key, slowEP)
		return l.Meta.Total == 2 && l.settled()
	})
	m = scrape(t, strict.url+"/metrics")
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("refused"), 2)
	m.want(t, "ledgerbase_webhook_deliveries_total", outcome("success"), 0)
	m.want(t, "ledgerbase_webhook_attempt_duration_seconds", nil, 2)
	if after := len(slow.got()); after != before {
		t.Errorf("the refused receiver was reached %d times", after-before)
	}
}
