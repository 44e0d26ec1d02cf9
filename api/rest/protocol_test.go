package rest_test

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/rest"
)

// A burst past the plan's per-minute limit gets 429 with Retry-After; every
// answer carries RateLimit-* headers; the limit differs by plan and a key's
// own limit overrides its plan's.
func TestRateLimitsByPlan(t *testing.T) {
	t.Parallel()
	if d := rest.DefaultRateLimits(); !(d[resource.Starter] < d[resource.Growth] && d[resource.Growth] < d[resource.Business]) {
		t.Fatalf("default limits do not rise with the plan: %v", d)
	}
	limits := map[resource.Plan]int{resource.Starter: 3, resource.Growth: 5, resource.Business: 8}
	env := apitest.Start(t, apitest.WithRateLimits(limits))
	for plan, limit := range limits {
		ws := env.Workspace(t, plan.String(), false, false)
		key := ws.NewKey(t, access.KeySpec{}) // the plan's limit
		for i := 1; i <= limit; i++ {
			r := env.Get(t, "/v1/me", key).WantStatus(t, 200)
			if r.Header.Get("RateLimit-Limit") != strconv.Itoa(limit) || r.Header.Get("RateLimit-Remaining") != strconv.Itoa(limit-i) ||
				r.Header.Get("RateLimit-Reset") == "" {
				t.Fatalf("%s request %d: RateLimit-Limit %q Remaining %q Reset %q", plan, i,
					r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), r.Header.Get("RateLimit-Reset"))
			}
		}
		r := env.Get(t, "/v1/invoices", key)
		e := r.WantError(t, 429, "rate_limited")
		n, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || n < 1 || n > 60 {
			t.Fatalf("%s: Retry-After %q", plan, r.Header.Get("Retry-After"))
		}
		wantRetryMessage(t, e, n)
		if r.Header.Get("RateLimit-Remaining") != "0" || r.Header.Get("RateLimit-Limit") != strconv.Itoa(limit) {
			t.Fatalf("%s 429 headers: %v", plan, r.Header)
		}
		// Another key of the same workspace has its own bucket.
		env.Get(t, "/v1/me", ws.NewKey(t, access.KeySpec{})).WantStatus(t, 200)
		// A key with its own limit of 0 is unlimited.
		unlimited := ws.NewKey(t, access.KeySpec{RateLimit: new(int)})
		for i := 0; i < limit+2; i++ {
			if r := env.Get(t, "/v1/me", unlimited).WantStatus(t, 200); r.Header.Get("RateLimit-Limit") != "" {
				t.Fatalf("an unlimited key got RateLimit-Limit %q", r.Header.Get("RateLimit-Limit"))
			}
		}
	}
}

// A key allowed 60 a minute waits one second after its burst; the
// message says so as a person would.
func TestRateLimitedMessageSaysTheWait(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	key := ws.NewKey(t, access.KeySpec{RateLimit: new(60)})
	// The bucket holds 60 and refills one a second: on a loaded machine the
	// burst may take over a second, so the first 429 comes after 60 plus
	// one per second elapsed, not after exactly 60.
	start := time.Now()
	served := 0
	var r *apitest.Response
	for r = env.Get(t, "/v1/me", key); r.Status == 200 && served < 1000; r = env.Get(t, "/v1/me", key) {
		served++
	}
	if most := 60 + int(time.Since(start).Seconds()) + 1; served < 60 || served > most {
		t.Fatalf("%d requests served before the first 429, want 60 to %d", served, most)
	}
	e := r.WantError(t, 429, "rate_limited")
	if r.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", r.Header.Get("Retry-After"))
	}
	wantRetryMessage(t, e, 1)
}

// wantRetryMessage checks that a 429's message gives the Retry-After wait.
func wantRetryMessage(t *testing.T, e map[string]any, seconds int) {
	t.Helper()
	unit := " seconds"
	if seconds == 1 {
		unit = " second"
	}
	if msg, _ := e["message"].(string); !strings.HasSuffix(msg, "retry after "+strconv.Itoa(seconds)+unit) {
		t.Fatalf("message %q with Retry-After %d", msg, seconds)
	}
}

// Wrong methods are 405 with Allow, including every write to the read-only
// resources (returns, gift cards, payments).
func TestWrongMethodsAre405WithAllow(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	cases := []struct{ method, path, allow string }{
		{"DELETE", "/v1/invoices", "GET, HEAD, POST"},
		{"PUT", "/v1/invoices/inv_x", "DELETE, GET, HEAD, PATCH"},
		{"PUT", "/v1/clients/cli_x", "GET, HEAD, PATCH"},
		{"DELETE", "/v1/clients", "GET, HEAD, POST"},
		{"PATCH", "/v1/me", "GET, HEAD"},
	}
	for _, r := range resource.All {
		if !r.ReadOnly() || r == resource.Me {
			continue
		}
		cases = append(cases,
			struct{ method, path, allow string }{"POST", "/v1/" + r.Name, "GET, HEAD"},
			struct{ method, path, allow string }{"PATCH", "/v1/" + r.Name + "/x", "GET, HEAD"},
			struct{ method, path, allow string }{"DELETE", "/v1/" + r.Name + "/x", "GET, HEAD"})
	}
	for _, name := range []string{"returns", "gift-cards", "payments"} {
		if !resource.ByName(name).ReadOnly() {
			t.Fatalf("%s is not read-only", name)
		}
	}
	for _, c := range cases {
		r := env.Do(t, c.method, c.path, ws.Key, map[string]any{"name": "x"})
		r.WantError(t, 405, "method_not_allowed")
		if r.Header.Get("Allow") != c.allow {
			t.Fatalf("%s %s: Allow %q, want %q", c.method, c.path, r.Header.Get("Allow"), c.allow)
		}
	}
}

// Unknown routes are route_not_found, with or without a key.
func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	for _, p := range []string{"/v1/nope", "/v1/invoices/x/y/z", "/v2/invoices", "/nope"} {
		env.Get(t, p, ws.Key).WantError(t, 404, "route_not_found")
		env.Get(t, p, "").WantError(t, 404, "route_not_found")
	}
}

// A body over 1 MiB is refused with 413 before anything reads it.
func TestOversizedBodiesAre413(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	if e := env.Do(t, "POST", "/v1/clients", ws.Key, big).WantError(t, 413, "payload_too_large"); !strings.Contains(e["message"].(string), "1 MiB") {
		t.Errorf("the 413 message does not name the limit: %v", e["message"])
	}
	env.Do(t, "POST", "/v1/vendors", "", big).WantError(t, 413, "payload_too_large")
}

// A panic in a handler is a 500 with a request id and nothing internal.
func TestPanicsBecomeOpaque500s(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	srv, err := rest.New(db, rest.Config{Config: api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	// Only this test's server has the route.
	srv.Mount(func(app *fiber.App) {
		app.Get("/test/panic", func(*fiber.Ctx) error {
			panic("SELECT secret FROM api_keys WHERE secret_hash = 'abc'")
		})
	})
	env := apitest.Serve(t, srv)
	r := env.Get(t, "/test/panic", "")
	r.WantError(t, 500, "internal_error")
	for _, leak := range []string{"SELECT", "secret", "panic", "goroutine", ".go:"} {
		if strings.Contains(string(r.Body), leak) {
			t.Fatalf("500 body leaks %q: %s", leak, r.Body)
		}
	}
	// The server goes on serving.
	env.Get(t, "/v1/me", "").WantError(t, 401, "missing_api_key")
}

// Every answer, success or error, carries X-Request-Id; an error body's
// request_id is the same.
func TestEveryAnswerHasARequestID(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	ok := env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, 200)
	if ok.Header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id on a 200")
	}
	env.Get(t, "/v1/stores", ws.Key).WantError(t, 403, "plan_required")
	env.Get(t, "/v1/invoices/nope", ws.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/invoices?limit=0", ws.Key).WantError(t, 400, "invalid_request")
	// HEAD is served where GET is, without a body.
	h := env.Do(t, "HEAD", "/v1/invoices", ws.Key, nil).WantStatus(t, 200)
	if len(h.Body) != 0 || h.Header.Get("X-Request-Id") == "" {
		t.Fatalf("HEAD: %q %v", h.Body, h.Header)
	}
}
