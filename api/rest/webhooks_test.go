package rest_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/clock"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// No test here sends a packet beyond the loopback interface: the resolver
// is a map, and the dialer fails the test if asked for another address.

type mapResolver map[string][]string

func (m mapResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// loopbackOnly dials loopback addresses and fails the test on any other.
func loopbackOnly(t *testing.T, calls *int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var mu sync.Mutex
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		*calls++
		mu.Unlock()
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("the webhook dialer was asked for %s, which is not loopback", addr)
			return nil, errors.New("test dialer: not loopback")
		}
		return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
	}
}

var testResolver = mapResolver{
	"hooks.test":    {"127.0.0.1"},
	"internal.test": {"10.1.2.3"},
	"public.test":   {"9.9.9.9"}, // a public address: saves only, never dialed
}

// receiver is a loopback HTTP server that records what it gets and
// answers with the statuses given, then 200.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []*http.Request
	bodies   [][]byte
	statuses []int
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, b)
		st := http.StatusOK
		if len(r.statuses) > 0 {
			st, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(st)
		fmt.Fprintf(w, "answered %d", st)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) wait(t *testing.T, n int) ([]*http.Request, [][]byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if len(r.got) >= n {
			got, bodies := append([]*http.Request(nil), r.got...), append([][]byte(nil), r.bodies...)
			r.mu.Unlock()
			return got, bodies
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the receiver got %d requests, want %d", len(r.got), n)
	return nil, nil
}

func withWebhooks(s webhooks.Settings) apitest.Option {
	return func(c *rest.Config) { c.Webhooks = s }
}

// startWorker runs a delivery worker until the test ends; the test's
// pending deliveries are then settled so the next test's worker does not
// inherit them (webhook tests run one at a time, not in parallel).
func startWorker(t *testing.T, env *apitest.Env, s webhooks.Settings) {
	ctx, cancel := context.WithCancel(context.Background())
	w := webhooks.NewWorker(env.DB, s)
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if _, err := env.DB.WritePool.Exec("UPDATE webhook_deliveries SET status = 'failed' WHERE status = 'pending'"); err != nil {
			t.Error(err)
		}
	})
}

func TestWebhookEndpointsAreManagedByAdminsOfTheWorkspace(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver}))
	ws := env.Workspace(t, "growth", false, false)
	other := env.Workspace(t, "growth", false, false)
	r := env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, map[string]any{
		"url": "https://public.test/hooks", "enabled_events": []string{"client.created", "invoice.paid"}, "description": "shop"}).WantStatus(t, 201)
	ep := r.JSON(t)
	id, _ := ep["id"].(string)
	secret, _ := ep["secret"].(string)
	if !strings.HasPrefix(id, "whe_") || !strings.HasPrefix(secret, "whsec_") || len(secret) < 6+32 {
		t.Fatalf("endpoint %v", ep)
	}
	got := env.Get(t, "/v1/webhook-endpoints/"+id, ws.Key).WantStatus(t, 200).JSON(t)
	if _, shown := got["secret"]; shown || got["url"] != "https://public.test/hooks" || got["description"] != "shop" {
		t.Fatalf("get shows %v", got)
	}
	if l := env.Get(t, "/v1/webhook-endpoints", ws.Key).WantStatus(t, 200).JSON(t); l["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("list %v", l)
	}
	up := env.Do(t, "PATCH", "/v1/webhook-endpoints/"+id, ws.Key, map[string]any{"enabled_events": []string{"*"}, "disabled": true}).WantStatus(t, 200).JSON(t)
	if up["disabled"] != true || fmt.Sprint(up["enabled_events"]) != "[*]" {
		t.Fatalf("patched %v", up)
	}
	// Bad input: 400 naming the field, nothing written.
	for _, b := range []map[string]any{
		{"url": "https://public.test/x", "enabled_events": []string{"client.exploded"}},
		{"url": "https://public.test/x", "enabled_events": []string{}},
		{"enabled_events": []string{"*"}},
		{"url": "https://public.test/x", "enabled_events": []string{"*"}, "colour": "red"},
	} {
		env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, b).WantError(t, 400, "invalid_request")
	}
	env.Do(t, "PATCH", "/v1/webhook-endpoints/"+id, ws.Key, map[string]any{"enabled_events": []string{"nope"}}).WantError(t, 400, "invalid_request")
	if l := env.Get(t, "/v1/webhook-endpoints", ws.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("a refused create wrote: %v", l)
	}
	// Only admins manage endpoints.
	ws.Role(t, "bookkeeper", "clients:write,invoices:write")
	for _, key := range []string{ws.NewKey(t, access.KeySpec{Role: access.RoleViewer}), ws.NewKey(t, access.KeySpec{Role: "bookkeeper"})} {
		env.Get(t, "/v1/webhook-endpoints", key).WantError(t, 403, "permission_denied")
		env.Get(t, "/v1/webhook-endpoints/"+id, key).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", "/v1/webhook-endpoints", key, map[string]any{"url": "https://public.test/x", "enabled_events": []string{"*"}}).WantError(t, 403, "permission_denied")
		env.Do(t, "DELETE", "/v1/webhook-endpoints/"+id, key, nil).WantError(t, 403, "permission_denied")
	}
	// Another workspace's endpoint does not exist for this one.
	env.Get(t, "/v1/webhook-endpoints/"+id, other.Key).WantError(t, 404, "not_found")
	env.Do(t, "PATCH", "/v1/webhook-endpoints/"+id, other.Key, map[string]any{"disabled": false}).WantError(t, 404, "not_found")
	env.Do(t, "DELETE", "/v1/webhook-endpoints/"+id, other.Key, nil).WantError(t, 404, "not_found")
	env.Get(t, "/v1/webhook-endpoints/"+id+"/deliveries", other.Key).WantError(t, 404, "not_found")
	if l := env.Get(t, "/v1/webhook-endpoints", other.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("other workspace lists %v", l)
	}
	env.Do(t, "DELETE", "/v1/webhook-endpoints/"+id, ws.Key, nil).WantStatus(t, 200)
	env.Get(t, "/v1/webhook-endpoints/"+id, ws.Key).WantError(t, 404, "not_found")
}

func TestWebhookURLsRefusedAtSaveTime(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver}))
	ws := env.Workspace(t, "growth", false, false)
	for _, u := range []string{
		"https://127.0.0.1/hooks", "https://10.0.0.1/hooks", "https://169.254.169.254/latest/meta-data",
		"https://[::1]/hooks", "https://[::ffff:10.0.0.1]/hooks", "https://localhost/hooks",
		"http://public.test/hooks",    // http without webhooks.allow_http
		"https://internal.test/hooks", // a name the resolver maps to 10.1.2.3
		"https://unresolvable.test/x", // does not resolve
		"ftp://public.test/x", "https://user:pw@public.test/x", "not a url",
	} {
		e := env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, map[string]any{"url": u, "enabled_events": []string{"*"}}).WantError(t, 400, "invalid_request")
		if e["param"] != "url" {
			t.Errorf("%s: param %v, want url", u, e["param"])
		}
	}
	if l := env.Get(t, "/v1/webhook-endpoints", ws.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("refused URLs were stored: %v", l)
	}
	// The settings open what tests and private deployments need.
	open := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}))
	ws2 := open.Workspace(t, "growth", false, false)
	open.Do(t, "POST", "/v1/webhook-endpoints", ws2.Key, map[string]any{"url": "http://internal.test/hooks", "enabled_events": []string{"*"}}).WantStatus(t, 201)
}

// A receiver answering 500 then 200 gets the same webhook-id twice, each
// signed so the Standard Webhooks library verifies it, with the event as
// GET /v1/events/{id} shows it; the log shows both attempts.
func TestWebhookDeliveryRetriesUntilSuccess(t *testing.T) {
	open := webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}
	env := apitest.Start(t, withWebhooks(open))
	dials := 0
	ws := open
	ws.Dial, ws.Schedule, ws.Poll = loopbackOnly(t, &dials), []time.Duration{100 * time.Millisecond, 100 * time.Millisecond}, 50*time.Millisecond
	startWorker(t, env, ws)
	w := env.Workspace(t, "growth", false, false)
	rcv := newReceiver(t, 500)
	url := strings.Replace(rcv.URL, "127.0.0.1", "hooks.test", 1) + "/in"
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": url, "enabled_events": []string{"client.created"}}).WantStatus(t, 201).JSON(t)
	epID, secret := ep["id"].(string), ep["secret"].(string)
	env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201)

	got, bodies := rcv.wait(t, 2)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range got {
		if err := wh.Verify(bodies[i], req.Header); err != nil {
			t.Fatalf("attempt %d: signature does not verify: %v (%s)", i+1, err, req.Header.Get("webhook-signature"))
		}
	}
	evID := got[0].Header.Get("webhook-id")
	if !strings.HasPrefix(evID, "evt_") || got[1].Header.Get("webhook-id") != evID {
		t.Fatalf("webhook-ids %q and %q: want one event id, twice", evID, got[1].Header.Get("webhook-id"))
	}
	if want := env.Get(t, "/v1/events/"+evID, w.Key).WantStatus(t, 200).Body; string(bodies[1]) != string(want) {
		t.Fatalf("body\n%s\nis not the event as GET shows it\n%s", bodies[1], want)
	}
	var log struct {
		Data []struct {
			ID, Status, EventID string
			AttemptCount        int `json:"attempt_count"`
			Attempts            []struct {
				StatusCode int `json:"status_code"`
				Response   string
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		env.Get(t, "/v1/webhook-endpoints/"+epID+"/deliveries", w.Key).WantStatus(t, 200).Decode(t, &log)
		if len(log.Data) == 1 && log.Data[0].Status == "succeeded" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := log.Data[0]
	if len(log.Data) != 1 || d.Status != "succeeded" || d.AttemptCount != 2 || len(d.Attempts) != 2 ||
		d.Attempts[0].StatusCode != 200 || d.Attempts[1].StatusCode != 500 || d.Attempts[1].Response != "answered 500" {
		t.Fatalf("delivery log %+v", log)
	}
	// Send again, after rotating the secret: signed with both secrets.
	rot := env.Do(t, "POST", "/v1/webhook-endpoints/"+epID+"/rotate-secret", w.Key, nil).WantStatus(t, 200).JSON(t)
	env.Do(t, "POST", "/v1/webhook-endpoints/"+epID+"/deliveries/"+d.ID+"/retry", w.Key, nil).WantStatus(t, 200)
	got, bodies = rcv.wait(t, 3)
	if got[2].Header.Get("webhook-id") != evID {
		t.Fatalf("sent again with webhook-id %q", got[2].Header.Get("webhook-id"))
	}
	for _, sec := range []string{secret, rot["secret"].(string)} {
		wh, _ := standardwebhooks.NewWebhook(sec)
		if err := wh.Verify(bodies[2], got[2].Header); err != nil {
			t.Fatalf("after rotation, a secret does not verify: %v", err)
		}
	}
	if dials == 0 {
		t.Fatal("the injected dialer was not used")
	}
}

// At send time the address is checked again after resolution: an endpoint
// saved while private networks were allowed is refused by a worker that
// does not allow them, before any connection.
func TestWebhookSendRefusesPrivateAddresses(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}))
	dials := 0
	startWorker(t, env, webhooks.Settings{Resolver: testResolver, AllowHTTP: true, Dial: loopbackOnly(t, &dials),
		Schedule: []time.Duration{time.Hour}, Poll: 50 * time.Millisecond})
	w := env.Workspace(t, "growth", false, false)
	rcv := newReceiver(t)
	url := strings.Replace(rcv.URL, "127.0.0.1", "hooks.test", 1)
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": url, "enabled_events": []string{"*"}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201)
	var log struct {
		Data []struct {
			Status   string
			Attempts []struct{ Error *string }
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		env.Get(t, "/v1/webhook-endpoints/"+ep["id"].(string)+"/deliveries", w.Key).WantStatus(t, 200).Decode(t, &log)
		if len(log.Data) == 1 && len(log.Data[0].Attempts) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(log.Data) != 1 || len(log.Data[0].Attempts) != 1 || log.Data[0].Attempts[0].Error == nil ||
		!strings.Contains(*log.Data[0].Attempts[0].Error, "loopback") || log.Data[0].Status != "pending" {
		t.Fatalf("delivery log %+v", log)
	}
	if dials != 0 || len(rcv.got) != 0 {
		t.Fatalf("a refused address was dialed (%d) or reached (%d)", dials, len(rcv.got))
	}
}

// Deliveries and their attempts go with the events' retention: the
// housekeeping's pruning deletes an old event's delivery and its log, and
// keeps the newer ones.
func TestOldDeliveriesArePrunedWithTheirEvents(t *testing.T) {
	open := webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}
	env := apitest.Start(t, withWebhooks(open))
	dials := 0
	ws := open
	ws.Dial, ws.Poll = loopbackOnly(t, &dials), 50*time.Millisecond
	startWorker(t, env, ws)
	w := env.Workspace(t, "growth", false, false)
	rcv := newReceiver(t)
	url := strings.Replace(rcv.URL, "127.0.0.1", "hooks.test", 1)
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": url, "enabled_events": []string{"*"}}).WantStatus(t, 201).JSON(t)
	for _, n := range []string{"old", "new"} {
		env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": n}).WantStatus(t, 201)
	}
	got, _ := rcv.wait(t, 2)
	oldEvent, newEvent := got[0].Header.Get("webhook-id"), got[1].Header.Get("webhook-id")
	var log struct {
		Data []struct {
			ID, Status string
			EventID    string `json:"event_id"`
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		env.Get(t, "/v1/webhook-endpoints/"+ep["id"].(string)+"/deliveries", w.Key).WantStatus(t, 200).Decode(t, &log)
		if len(log.Data) == 2 && log.Data[0].Status == "succeeded" && log.Data[1].Status == "succeeded" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var oldDelivery string
	for _, d := range log.Data {
		if d.EventID == oldEvent {
			oldDelivery = d.ID
		}
	}
	if len(log.Data) != 2 || oldDelivery == "" {
		t.Fatalf("delivery log %+v", log)
	}
	// An event made 31 days ago: its id carries its time (ids.At), which
	// retention reads.
	longAgo := time.Now().UTC().Add(-31 * 24 * time.Hour)
	agedEvent := ids.At("evt", longAgo)
	for _, q := range []string{"UPDATE events SET created_at = ?, id = ? WHERE id = ?", "UPDATE webhook_deliveries SET created_at = ?, event_id = ? WHERE event_id = ?"} {
		if _, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind(q), longAgo, agedEvent, oldEvent); err != nil {
			t.Fatal(err)
		}
	}
	oldEvent = agedEvent
	if _, err := clock.PruneEvents(t.Context(), env.DB, time.Now().Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	env.Get(t, "/v1/events/"+oldEvent, w.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/events/"+newEvent, w.Key).WantStatus(t, 200)
	env.Get(t, "/v1/webhook-endpoints/"+ep["id"].(string)+"/deliveries", w.Key).WantStatus(t, 200).Decode(t, &log)
	if len(log.Data) != 1 || log.Data[0].EventID != newEvent {
		t.Fatalf("after pruning, the delivery log is %+v; want only the new event's", log)
	}
	for id, want := range map[string]int{oldDelivery: 0, log.Data[0].ID: 1} {
		var n int
		if err := env.DB.ReadPool.QueryRowContext(t.Context(), env.DB.Rebind("SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?"), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("delivery %s has %d attempts after pruning, want %d", id, n, want)
		}
	}
}

// A retried create under the same Idempotency-Key makes one endpoint and
// answers the first response again, secret included (the client that lost
// it has no other way to learn it); a retried rotation replays the first
// rotation instead of ending the old secret's overlap.
func TestWebhookEndpointWritesHonourIdempotencyKeys(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver}))
	w := env.Workspace(t, "growth", false, false)
	body := map[string]any{"url": "https://public.test/hooks", "enabled_events": []string{"*"}}
	first := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, body, "Idempotency-Key", "ep-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, body, "Idempotency-Key", "ep-1").WantStatus(t, 201)
	if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry answered %s (replayed %q), want the first answer %s", again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
	}
	ep := first.JSON(t)
	if s, _ := ep["secret"].(string); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("the first answer carries no secret: %s", first.Body)
	}
	env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": "https://public.test/other", "enabled_events": []string{"*"}},
		"Idempotency-Key", "ep-1").WantError(t, 409, "idempotency_key_reused")
	if l := env.Get(t, "/v1/webhook-endpoints", w.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("a retried create made another endpoint: %v", l)
	}
	// Without a key, a second create is a second endpoint.
	env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, body).WantStatus(t, 201)
	env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, body).WantStatus(t, 201)
	if l := env.Get(t, "/v1/webhook-endpoints", w.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(3) {
		t.Fatalf("two creates without a key: %v", l)
	}

	path := "/v1/webhook-endpoints/" + ep["id"].(string) + "/rotate-secret"
	rot := env.Do(t, "POST", path, w.Key, nil, "Idempotency-Key", "rot-1").WantStatus(t, 200)
	rot2 := env.Do(t, "POST", path, w.Key, nil, "Idempotency-Key", "rot-1").WantStatus(t, 200)
	if string(rot2.Body) != string(rot.Body) || rot.JSON(t)["secret"] == ep["secret"] {
		t.Fatalf("rotations %s and %s: want one new secret, replayed", rot.Body, rot2.Body)
	}
	var prev string
	if err := env.DB.ReadPool.QueryRowContext(t.Context(), env.DB.Rebind("SELECT previous_secret FROM webhook_endpoints WHERE id = ?"), ep["id"]).Scan(&prev); err != nil {
		t.Fatal(err)
	}
	if prev != ep["secret"] {
		t.Fatal("after a retried rotation, the first secret no longer signs")
	}
	// Another workspace's endpoint is 404 under a key too.
	other := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", path, other.Key, nil, "Idempotency-Key", "rot-x").WantError(t, 404, "not_found")
}

// Behind a slow receiver, a worker does not send more of an endpoint's
// claimed deliveries than its lease covers: the rest go back to the queue,
// so a second worker never takes a delivery the first is still to send.
// (Five deliveries of 600 ms each outlast a 2 s lease.)
func TestSlowReceiverGetsEachDeliveryOnceFromTwoWorkers(t *testing.T) {
	open := webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}
	env := apitest.Start(t, withWebhooks(open))
	w := env.Workspace(t, "growth", false, false)
	var mu sync.Mutex
	got := map[string]int{}
	slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		time.Sleep(600 * time.Millisecond)
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	t.Cleanup(slow.Close)
	env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": strings.Replace(slow.URL, "127.0.0.1", "hooks.test", 1),
		"enabled_events": []string{"client.created"}}).WantStatus(t, 201)
	const n = 5
	for i := range n {
		env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": fmt.Sprintf("c%d", i)}).WantStatus(t, 201)
	}
	dials := 0
	s := open
	s.Dial, s.Poll, s.Timeout, s.LeaseMargin = loopbackOnly(t, &dials), 50*time.Millisecond, time.Second, time.Second
	startWorker(t, env, s)
	startWorker(t, env, s)
	count := func() (ids, sends int) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range got {
			ids, sends = ids+1, sends+c
		}
		return ids, sends
	}
	deadline := time.Now().Add(15 * time.Second)
	for ids, _ := count(); ids < n; ids, _ = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered", ids, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond) // a lease run out would have sent one again by now
	if ids, sends := count(); ids != n || sends != n {
		t.Fatalf("%d events got %d sends, want each once: %v", ids, sends, got)
	}
}

// The webhook endpoints' actions and DELETE read their body as every
// declared action and DELETE does (POST /v1/invoices/{id}/send and DELETE
// /v1/invoices/{id} are the yardsticks): none, or a JSON object of the
// fields, of which these have none. Anything else is the same 400 or 415,
// and nothing is rotated, sent again or deleted.
func TestWebhookActionsReadTheirBodyLikeEveryAction(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver}))
	w := env.Workspace(t, "growth", false, false)
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": "https://public.test/hooks", "enabled_events": []string{"client.created"}}).WantStatus(t, 201).JSON(t)
	epID := ep["id"].(string)
	cli := env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201).JSON(t)["id"].(string)
	var log struct{ Data []struct{ ID string } }
	env.Get(t, "/v1/webhook-endpoints/"+epID+"/deliveries", w.Key).WantStatus(t, 200).Decode(t, &log)
	if len(log.Data) != 1 {
		t.Fatalf("deliveries %+v, want the client's one", log)
	}
	delivery := log.Data[0].ID
	if _, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind("UPDATE webhook_deliveries SET status = 'failed' WHERE id = ?"), delivery); err != nil {
		t.Fatal(err)
	}
	draft := env.Do(t, "POST", "/v1/invoices", w.Key, obj{"client_id": cli, "currency_code": "USD", "lines": []obj{line("Work", 1000, 500, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	state := func() (secret, status string) {
		t.Helper()
		q := "SELECT e.secret, d.status FROM webhook_endpoints e, webhook_deliveries d WHERE e.id = ? AND d.id = ?"
		if err := env.DB.ReadPool.QueryRowContext(t.Context(), env.DB.Rebind(q), epID, delivery).Scan(&secret, &status); err != nil {
			t.Fatal(err)
		}
		return secret, status
	}
	secret, _ := state()
	actions := []string{"/v1/webhook-endpoints/" + epID + "/rotate-secret", "/v1/webhook-endpoints/" + epID + "/deliveries/" + delivery + "/retry"}
	for _, c := range []struct {
		body, contentType string
		status            int
		code              string
	}{
		{`{"colour":"red"}`, "application/json", 400, "invalid_request"},
		{`{"colour":`, "application/json", 400, "invalid_json"},
		{`[]`, "application/json", 400, "invalid_json"},
		{`{} {}`, "application/json", 400, "invalid_json"},
		{`{}`, "text/plain", 415, "unsupported_media_type"},
		{`{}`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
	} {
		yardstick := env.Do(t, "POST", "/v1/invoices/"+draft+"/send", w.Key, c.body, "Content-Type", c.contentType)
		yardstick.WantError(t, c.status, c.code)
		for _, path := range actions {
			e := env.Do(t, "POST", path, w.Key, c.body, "Content-Type", c.contentType).WantError(t, c.status, c.code)
			if want := yardstick.JSON(t)["error"].(map[string]any)["param"]; e["param"] != want {
				t.Errorf("%s with %s (%s): param %v, want %v as the invoice's send answers", path, c.body, c.contentType, e["param"], want)
			}
		}
		if s, st := state(); s != secret || st != "failed" {
			t.Fatalf("a refused body (%s, %s) rotated the secret (%v) or sent the delivery again (%s)", c.body, c.contentType, s != secret, st)
		}
		// A DELETE's body likewise, against a declared DELETE's.
		yardstick = env.Do(t, "DELETE", "/v1/invoices/"+draft, w.Key, c.body, "Content-Type", c.contentType)
		yardstick.WantError(t, c.status, c.code)
		env.Do(t, "DELETE", "/v1/webhook-endpoints/"+epID, w.Key, c.body, "Content-Type", c.contentType).WantError(t, c.status, c.code)
		env.Get(t, "/v1/webhook-endpoints/"+epID, w.Key).WantStatus(t, 200)
	}
	// No body, or an empty object, is still an action's body.
	for i, path := range actions {
		env.Do(t, "POST", path, w.Key, nil, "Content-Type", "text/plain").WantStatus(t, 200)
		env.Do(t, "POST", path, w.Key, `{}`, "Idempotency-Key", fmt.Sprintf("ok-%d", i)).WantStatus(t, 200)
	}
	if s, st := state(); s == secret || st != "pending" {
		t.Fatalf("accepted actions: secret rotated %v, delivery %s (want pending)", s != secret, st)
	}
}

// hostileAddrs are addresses no webhook may reach with default settings,
// and a word of why the guard refuses each: every IPv4 kind, and the
// IPv6 spellings of them (embedded IPv4 in every scheme) and of IPv6's own
// reserved space.
var hostileAddrs = []struct{ addr, why string }{
	{"127.0.0.1", "loopback"}, {"127.1.2.3", "loopback"}, {"10.0.0.1", "private"}, {"172.16.0.1", "private"},
	{"192.168.1.1", "private"}, {"169.254.169.254", "link-local"}, {"0.0.0.0", "not a unicast"}, {"0.1.2.3", "this-network"},
	{"100.64.0.1", "carrier-grade NAT"}, {"192.0.0.170", "IETF protocol assignment"}, {"192.0.2.1", "documentation"},
	{"198.51.100.1", "documentation"}, {"203.0.113.1", "documentation"}, {"192.88.99.1", "6to4 relay"},
	{"198.18.0.1", "benchmarking"}, {"240.0.0.1", "reserved"}, {"255.255.255.255", "not a unicast"}, {"224.0.0.1", "not a unicast"},
	{"::1", "loopback"}, {"::", "not a unicast"}, {"::ffff:127.0.0.1", "loopback"}, {"::ffff:10.0.0.1", "private"},
	{"::ffff:a9fe:a9fe", "link-local"}, {"fe80::1", "link-local"}, {"fc00::1", "private"}, {"fd00:ec2::254", "private"},
	{"ff02::1", "not a unicast"}, {"64:ff9b::7f00:1", "embedding 127.0.0.1"}, {"64:ff9b::a9fe:a9fe", "embedding 169.254.169.254"},
	{"2002:a9fe:a9fe::1", "embedding 169.254.169.254"}, {"2002:808:808::1", "6to4 tunnel"},
	// The eleven spellings issue 32 found passing.
	{"::127.0.0.1", "IPv4-compatible address embedding 127.0.0.1"}, {"::7f00:1", "embedding 127.0.0.1"},
	{"::a9fe:a9fe", "embedding 169.254.169.254"}, {"::a00:1", "embedding 10.0.0.1"},
	{"::ffff:0:7f00:1", "IPv4-translated address embedding 127.0.0.1"}, {"::ffff:0:a9fe:a9fe", "embedding 169.254.169.254"},
	{"64:ff9b:1::a9fe:a9fe", "local-use NAT64 address embedding 169.254.169.254"}, {"fec0::1", "site-local"},
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo address embedding 127.0.0.1"}, {"100::1", "discard-only"},
	{"2001:db8::1", "documentation"},
	// What else the registry reserves, or leaves outside 2000::/3.
	{"::8.8.8.8", "outside the global unicast space"}, {"::ffff:0:808:808", "outside the global unicast space"},
	{"64:ff9b:1::808:808", "local-use NAT64"}, {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "Teredo tunnel"},
	{"2001:2::1", "IETF protocol assignment"}, {"3fff::1", "documentation"}, {"5f00::1", "SRv6"}, {"4000::1", "outside the global unicast space"},
}

// publicAddrs are globally routable: saved, and handed to the dialer.
var publicAddrs = []string{"9.9.9.9", "::ffff:9.9.9.9", "2620:fe::fe", "64:ff9b::909:909"}

func hostPart(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + addr + "]"
	}
	return addr
}

// guardResolver maps h<i>.test to hostileAddrs[i] and p<i>.test to
// publicAddrs[i], beside testResolver's names.
func guardResolver() mapResolver {
	r := mapResolver{}
	for k, v := range testResolver {
		r[k] = v
	}
	for i, h := range hostileAddrs {
		r[fmt.Sprintf("h%d.test", i)] = []string{h.addr}
	}
	for i, a := range publicAddrs {
		r[fmt.Sprintf("p%d.test", i)] = []string{a}
	}
	return r
}

// With default settings, every hostile address is refused when an
// endpoint is saved, written as the URL's host or answered for its name:
// a 400 naming url and saying why; the public ones are saved.
func TestWebhookGuardRefusesEverySpellingAtSaveTime(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: guardResolver()}))
	w := env.Workspace(t, "growth", false, false)
	for i, h := range hostileAddrs {
		for _, host := range []string{hostPart(h.addr), fmt.Sprintf("h%d.test", i)} {
			u := "https://" + host + "/hooks"
			e := env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": u, "enabled_events": []string{"*"}}).WantError(t, 400, "invalid_request")
			if msg, _ := e["message"].(string); e["param"] != "url" || !strings.Contains(msg, h.why) {
				t.Errorf("%s: param %v, message %q; want url, saying %q", u, e["param"], msg, h.why)
			}
		}
	}
	if l := env.Get(t, "/v1/webhook-endpoints", w.Key).JSON(t); l["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("refused URLs were stored: %v", l)
	}
	for i, a := range publicAddrs {
		for _, host := range []string{hostPart(a), fmt.Sprintf("p%d.test", i)} {
			env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": "https://" + host + "/hooks", "enabled_events": []string{"*"}}).WantStatus(t, 201)
		}
	}
}

// At send time the worker's dial refuses every hostile address, written
// or resolved, before any connection (the endpoints were saved while
// private networks were allowed); public ones reach the dialer, which
// connects to nothing.
func TestWebhookGuardRefusesEverySpellingAtSendTime(t *testing.T) {
	resolver := guardResolver()
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: resolver, AllowPrivateNetworks: true}))
	var mu sync.Mutex
	var dialed []string
	startWorker(t, env, webhooks.Settings{Resolver: resolver, Schedule: []time.Duration{time.Hour}, Poll: 50 * time.Millisecond,
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return nil, errors.New("test dialer: connects to nothing")
		}})
	w := env.Workspace(t, "growth", false, false)
	why := map[string]string{} // endpoint URL: the refusal expected, "" for public
	for i, h := range hostileAddrs {
		why["https://"+hostPart(h.addr)+"/hooks"] = h.why
		why[fmt.Sprintf("https://h%d.test/hooks", i)] = h.why
	}
	for i, a := range publicAddrs {
		why["https://"+hostPart(a)+"/hooks"] = ""
		why[fmt.Sprintf("https://p%d.test/hooks", i)] = ""
	}
	for u := range why {
		env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": u, "enabled_events": []string{"client.created"}}).WantStatus(t, 201)
	}
	env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201)

	attempts := map[string]string{}
	deadline := time.Now().Add(15 * time.Second)
	for len(attempts) < len(why) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		rs, err := env.DB.ReadPool.QueryContext(t.Context(), env.DB.Rebind("SELECT e.url, a.error FROM webhook_attempts a "+
			"JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.workspace_id = ?"), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var u, e string
			if err := rs.Scan(&u, &e); err != nil {
				t.Fatal(err)
			}
			attempts[u] = e
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(attempts) != len(why) {
		t.Fatalf("%d of %d deliveries attempted", len(attempts), len(why))
	}
	for u, want := range why {
		got := attempts[u]
		switch {
		case want == "" && !strings.Contains(got, "connects to nothing"):
			t.Errorf("%s is public, yet its attempt says %q", u, got)
		case want != "" && !strings.Contains(got, want):
			t.Errorf("%s: attempt says %q; want it refused as %q", u, got, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	public := map[string]bool{}
	for _, a := range publicAddrs {
		public[net.JoinHostPort(netip.MustParseAddr(a).Unmap().String(), "443")] = true
	}
	for _, addr := range dialed {
		if !public[addr] {
			t.Errorf("the worker dialed %s, which is not one of the public addresses", addr)
		}
	}
	if len(dialed) < 2*len(publicAddrs) {
		t.Errorf("the dialer got %d calls, want one per public endpoint (%d): %v", len(dialed), 2*len(publicAddrs), dialed)
	}
}

// Deliveries may arrive out of commit order once one is retried, so every
// payload carries its event's sequence: a receiver whose first answer is
// a 500 still rebuilds GET /v1/events' order by sorting on sequence and
// deduplicating on id, and each payload's sequence is the one GET shows.
func TestWebhookPayloadsCarryTheirSequenceThroughARetry(t *testing.T) {
	open := webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}
	env := apitest.Start(t, withWebhooks(open))
	dials := 0
	s := open
	s.Dial, s.Schedule, s.Poll = loopbackOnly(t, &dials), []time.Duration{300 * time.Millisecond}, 20*time.Millisecond
	startWorker(t, env, s)
	w := env.Workspace(t, "growth", false, false)
	rcv := newReceiver(t, 500)
	env.Do(t, "POST", "/v1/webhook-endpoints", w.Key, map[string]any{"url": strings.Replace(rcv.URL, "127.0.0.1", "hooks.test", 1),
		"enabled_events": []string{"client.*"}}).WantStatus(t, 201)
	client := env.Do(t, "POST", "/v1/clients", w.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201).JSON(t)["id"].(string)
	const updates = 4
	for i := range updates {
		env.Do(t, "PATCH", "/v1/clients/"+client, w.Key, map[string]any{"name": fmt.Sprintf("Acme %d", i)}).WantStatus(t, 200)
	}
	got, bodies := rcv.wait(t, 1+updates+1) // every event, and the first once more

	var listed struct {
		Data []struct {
			ID       string
			Sequence *int64
		}
	}
	env.Get(t, "/v1/events?limit=100", w.Key).WantStatus(t, 200).Decode(t, &listed)
	if len(listed.Data) != 1+updates {
		t.Fatalf("GET /v1/events lists %d events, want %d", len(listed.Data), 1+updates)
	}
	seqOf := map[string]int64{}
	for i, e := range listed.Data {
		if e.Sequence == nil {
			t.Fatalf("GET /v1/events shows event %s without a sequence", e.ID)
		}
		if i > 0 && *e.Sequence >= *listed.Data[i-1].Sequence {
			t.Fatalf("GET /v1/events, newest first, has sequence %d after %d", *e.Sequence, *listed.Data[i-1].Sequence)
		}
		seqOf[e.ID] = *e.Sequence
	}
	type delivered struct {
		id  string
		seq int64
	}
	var arrived []delivered
	for i, b := range bodies {
		var e struct {
			ID       string
			Sequence *int64
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Sequence == nil {
			t.Fatalf("payload %d carries no sequence (%v): %s", i, err, b)
		}
		if want, ok := seqOf[e.ID]; !ok || *e.Sequence != want || got[i].Header.Get("webhook-id") != e.ID {
			t.Fatalf("payload %d: event %s (webhook-id %s) with sequence %d; GET /v1/events shows %d (listed %v)",
				i, e.ID, got[i].Header.Get("webhook-id"), *e.Sequence, want, ok)
		}
		if one := env.Get(t, "/v1/events/"+e.ID, w.Key).WantStatus(t, 200).Body; string(one) != string(b) {
			t.Fatalf("payload\n%s\nis not the event as GET shows it\n%s", b, one)
		}
		arrived = append(arrived, delivered{e.ID, *e.Sequence})
	}
	// The receiver's way: dedupe on id, order on sequence.
	seen := map[string]bool{}
	var rebuilt []delivered
	for _, d := range arrived {
		if !seen[d.id] {
			seen[d.id] = true
			rebuilt = append(rebuilt, d)
		}
	}
	slices.SortFunc(rebuilt, func(a, b delivered) int { return cmp.Compare(b.seq, a.seq) })
	if len(rebuilt) != len(listed.Data) {
		t.Fatalf("the receiver got %d distinct events, want %d", len(rebuilt), len(listed.Data))
	}
	for i, d := range rebuilt {
		if d.id != listed.Data[i].ID {
			t.Fatalf("ordered by sequence, the deliveries %v are not GET /v1/events' order %+v", rebuilt, listed.Data)
		}
	}
}
