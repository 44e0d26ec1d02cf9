package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// What the webhook tests through real `serve` processes share: a receiver
// on a loopback port that verifies every request with the Standard
// Webhooks reference library, and servers configured to reach it.

// hookCall is one request the receiver got, signature verified.
type hookCall struct {
	id, typ string // webhook-id, the event's type
	created time.Time
	body    []byte
	status  int // what the receiver answered
}

// hookReceiver is a webhook receiver on a fixed loopback address that can
// go down (connections refused) and come back on the same address.
type hookReceiver struct {
	t    *testing.T
	addr string
	// answer picks the status for a request: nth is how many times its
	// webhook-id came before. It may block (a slow receiver).
	answer func(id string, nth int) int

	mu    sync.Mutex
	srv   *http.Server
	wh    *standardwebhooks.Webhook
	calls []hookCall
	seen  map[string]int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{t: t, addr: ln.Addr().String(), seen: map[string]int{},
		answer: func(string, int) int { return http.StatusOK }}
	r.serve(ln)
	t.Cleanup(r.down)
	return r
}

func (r *hookReceiver) url() string { return "http://" + r.addr + "/hooks" }

func (r *hookReceiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// down stops the receiver: connections to its address are refused.
func (r *hookReceiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up brings it back on the same address.
func (r *hookReceiver) up() {
	r.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port was just ours; another process may hold it a moment
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("receiver back on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

// verify sets the endpoint's secret; from now on every request must verify.
func (r *hookReceiver) verify(secret string) {
	r.t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.wh = wh
	r.mu.Unlock()
}

func (r *hookReceiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	wh := r.wh
	r.mu.Unlock()
	if wh == nil {
		r.t.Errorf("receiver: a request came before the endpoint's secret was known")
		http.Error(w, "no secret", http.StatusBadRequest)
		return
	}
	if err := wh.Verify(body, req.Header); err != nil {
		r.t.Errorf("receiver: signature does not verify: %v (webhook-id %s)", err, req.Header.Get("webhook-id"))
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get("webhook-id") {
		r.t.Errorf("receiver: body %s does not carry the event %s (%v)", body, req.Header.Get("webhook-id"), err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	nth := r.seen[ev.ID]
	r.seen[ev.ID]++
	r.mu.Unlock()
	status := r.answer(ev.ID, nth)
	r.mu.Lock()
	r.calls = append(r.calls, hookCall{id: ev.ID, typ: ev.Type, created: ev.CreatedAt, body: body, status: status})
	r.mu.Unlock()
	w.WriteHeader(status)
}

// got is every request so far, in arrival order.
func (r *hookReceiver) got() []hookCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookCall(nil), r.calls...)
}

// delivered is the events the receiver accepted (2xx), each once, in the
// order of their first acceptance.
func (r *hookReceiver) delivered() []hookCall {
	var out []hookCall
	ok := map[string]bool{}
	for _, c := range r.got() {
		if c.status/100 == 2 && !ok[c.id] {
			ok[c.id] = true
			out = append(out, c)
		}
	}
	return out
}

// waitFor polls check until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hookFlags let a server reach a loopback receiver over http and retry on
// schedule (a comma list of durations).
func hookFlags(schedule string) []string {
	return []string{"--webhooks-allow-http", "--webhooks-allow-private-networks",
		"--webhooks-retry-schedule", schedule, "--webhooks-poll", "100ms"}
}

// client is an API client of a server process.
func client(t *testing.T, url string) *apitest.Env {
	env := &apitest.Env{URL: url, Client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(env.Client.CloseIdleConnections)
	return env
}

// hookWorkspace makes a workspace on a fresh database and its admin key.
func hookWorkspace(t *testing.T, dbURL string) (ws, key string) {
	t.Helper()
	mustCLI(t, dbURL, "migrate")
	ws = mustCLI(t, dbURL, "workspace", "create", "--name", "Hooks", "--plan", "business", "--commerce-mode", "--commerce-module")
	return ws, mustCLI(t, dbURL, "key", "create", "--workspace", ws, "--rate-limit", "0")
}

// subscribe registers r for types and tells r the secret to verify with.
func subscribe(t *testing.T, env *apitest.Env, key string, r *hookReceiver, types ...string) string {
	t.Helper()
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", key, map[string]any{"url": r.url(), "enabled_events": types}).WantStatus(t, 201).JSON(t)
	r.verify(ep["secret"].(string))
	return ep["id"].(string)
}

// deliveriesOf reads an endpoint's delivery log (its newest 100).
type deliveryLog struct {
	Data []struct {
		ID           string
		EventID      string `json:"event_id"`
		Status       string
		AttemptCount int `json:"attempt_count"`
		Attempts     []struct {
			StatusCode *int `json:"status_code"`
			Error      *string
		}
	}
	Meta struct{ Total int }
}

func deliveriesOf(t *testing.T, env *apitest.Env, key, endpoint string) deliveryLog {
	t.Helper()
	var l deliveryLog
	env.Get(t, "/v1/webhook-endpoints/"+endpoint+"/deliveries?limit=100", key).WantStatus(t, 200).Decode(t, &l)
	return l
}

// settled reports whether none of the log's deliveries is pending.
func (l deliveryLog) settled() bool {
	for _, d := range l.Data {
		if d.Status == "pending" {
			return false
		}
	}
	return true
}

// apiEvent is an event as GET /v1/events shows it.
type apiEvent struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// allEvents walks GET /v1/events from the newest to the oldest with
// starting_after, as a consumer catching up does.
func allEvents(t *testing.T, env *apitest.Env, key string) []apiEvent {
	t.Helper()
	var out []apiEvent
	path := "/v1/events?limit=100"
	for {
		var page struct {
			Data []apiEvent
			Meta struct {
				HasMore bool `json:"has_more"`
			}
		}
		env.Get(t, path, key).WantStatus(t, 200).Decode(t, &page)
		out = append(out, page.Data...)
		if !page.Meta.HasMore || len(page.Data) == 0 {
			return out
		}
		path = "/v1/events?limit=100&starting_after=" + page.Data[len(page.Data)-1].ID
	}
}

// retries is a retry schedule of n equal delays.
func retries(n int, d time.Duration) string {
	s := make([]string, n)
	for i := range s {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

// postJSON posts body to url with key; safe from any goroutine.
func postJSON(url, key, body string) (int, error) {
	status, _, err := postJSONWith(http.DefaultClient, url, key, body)
	return status, err
}

func postJSONWith(hc *http.Client, url, key, body string) (int, []byte, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}
