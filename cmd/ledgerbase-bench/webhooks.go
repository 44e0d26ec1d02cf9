package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Issue 20's delivery targets, measured through the real server: clients
// created over /v1 are delivered to a receiver in this process.
const (
	deliveryBacklog = 2000 // deliveries queued before the receiver lets them through
	delayProbes     = 100  // creates, one at a time, for the delay
)

// receiver answers deliveries with 204 and notes when each event's object
// arrived; while gated it holds them.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time // object id → first arrival
	count   atomic.Int64
	gate    chan struct{} // closed: deliveries pass
	srv     *http.Server
	url     string
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{arrived: map[string]time.Time{}, gate: make(chan struct{})}
	close(r.gate)
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	r.url = "http://" + ln.Addr().String() + "/hook"
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	<-gate
	var ev struct {
		Data struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	b, _ := io.ReadAll(req.Body)
	at := time.Now()
	if json.Unmarshal(b, &ev) == nil {
		r.mu.Lock()
		if _, seen := r.arrived[ev.Data.Object.ID]; !seen {
			r.arrived[ev.Data.Object.ID] = at
			r.count.Add(1)
		}
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// hold makes deliveries wait until the returned func lets them through.
func (r *receiver) hold() (release func()) {
	g := make(chan struct{})
	r.mu.Lock()
	r.gate = g
	r.mu.Unlock()
	return sync.OnceFunc(func() { close(g) })
}

func (r *receiver) arrival(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[id]
	return t, ok
}

// api is a small /v1 client of the measured server; an empty auth sends none.
func (c *child) api(ctx context.Context, method, path, auth string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.addr+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// createClient creates one client and answers its id.
func (env *benchEnv) createClient(ctx context.Context, n int) (string, error) {
	status, b, err := env.app.api(ctx, "POST", "/v1/clients", env.auth, map[string]string{
		"name": fmt.Sprintf("Hook Client %s-%d", env.nonce, n), "email": fmt.Sprintf("hook-%s-%d@example.com", env.nonce, n)})
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated {
		return "", fmt.Errorf("POST /v1/clients: %d %s", status, b)
	}
	var c struct{ ID string }
	err = json.Unmarshal(b, &c)
	return c.ID, err
}

// webhookRows are the delivery rows: the delay from a create to its
// delivery with the queue idle, and the rate a backlog drains at.
func webhookRows(ctx context.Context, env *benchEnv) []result {
	delay := result{name: fmt.Sprintf("webhook: create → delivery, queue idle (%d creates, one at a time)", delayProbes),
		target: "p99 ≤ 1 s"}
	rate := result{name: fmt.Sprintf("webhook: deliveries/s draining a backlog of %d to one local receiver", deliveryBacklog),
		target: "≥ 1,000/s"}
	fail := func(err error) []result {
		delay.note, rate.note = "failed: "+err.Error(), "failed"
		delay.met, rate.met = verdict(false, false), verdict(false, false)
		return []result{delay, rate}
	}
	rc, err := startReceiver()
	if err != nil {
		return fail(err)
	}
	defer rc.srv.Close()
	status, b, err := env.app.api(ctx, "POST", "/v1/webhook-endpoints", env.auth, map[string]any{
		"url": rc.url, "enabled_events": []string{"client.created"}, "description": "ledgerbase-bench " + env.nonce})
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("POST /v1/webhook-endpoints: %d %s", status, b)
	}
	if err != nil {
		return fail(err)
	}
	var ep struct{ ID string }
	if err := json.Unmarshal(b, &ep); err != nil {
		return fail(err)
	}
	defer env.app.api(context.WithoutCancel(ctx), "DELETE", "/v1/webhook-endpoints/"+ep.ID, env.auth, nil)

	// Delay: each create waits for its delivery before the next, so the
	// queue holds nothing else. Measured from before the POST: an upper
	// bound of commit → first attempt.
	var lat []float64
	for i := 0; i < delayProbes && ctx.Err() == nil; i++ {
		t0 := time.Now()
		id, err := env.createClient(ctx, i)
		if err != nil {
			return fail(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if at, ok := rc.arrival(id); ok {
				lat = append(lat, float64(at.Sub(t0).Microseconds())/1000)
				break
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("client %s was not delivered within 10 s", id))
			}
		}
	}
	slices.Sort(lat)
	pct := func(q float64) float64 { return lat[int(q*float64(len(lat)-1))] }
	delay.conns = 1
	delay.p50, delay.p90, delay.p99 = pct(.5), pct(.9), pct(.99)
	delay.met = verdict(false, delay.p99 <= 1000)

	// Rate: the receiver holds the first attempt while the backlog is
	// created (16 writers at once), then lets everything through.
	release := rc.hold()
	defer release()
	before := rc.count.Load()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for n := next.Add(1); n <= deliveryBacklog; n = next.Add(1) {
				if _, err := env.createClient(ctx, delayProbes+int(n)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fail(err)
	}
	t0 := time.Now()
	release()
	want := before + deliveryBacklog
	for deadline := t0.Add(2 * time.Minute); rc.count.Load() < want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fail(fmt.Errorf("%d of %d deliveries within 2 minutes", rc.count.Load()-before, deliveryBacklog))
		}
	}
	took := time.Since(t0)
	rate.conns = 1
	rate.rps = float64(deliveryBacklog) / took.Seconds()
	rate.met = verdict(false, rate.rps >= 1000)
	return []result{delay, rate}
}
