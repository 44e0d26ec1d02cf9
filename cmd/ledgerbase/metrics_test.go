package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

type families map[string]*dto.MetricFamily

// scrape fetches url and parses it with Prometheus's own text parser.
func scrape(t *testing.T, url string) families {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %s\n%s", url, res.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the sample of name whose labels include want: a counter's or
// gauge's value, a histogram's count. ok is false when there is none.
func (f families) value(name string, want map[string]string) (v float64, ok bool) {
	fam := f[name]
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, w := range want {
			if have[k] != w {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func (f families) want(t *testing.T, name string, labels map[string]string, v float64) {
	t.Helper()
	got, ok := f.value(name, labels)
	if !ok || got != v {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, v)
	}
}

// series counts every labelled sample set of the exposition.
func (f families) series() int {
	n := 0
	for _, fam := range f {
		n += len(fam.Metric)
	}
	return n
}

func req(route, status string) map[string]string {
	return map[string]string{"route": route, "method": "GET", "status": status}
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	var logs syncBuffer
	cfg := testConfig()
	cfg.Log.Access = true
	r := start(t, cfg, slog.New(slog.NewJSONHandler(&logs, nil)), db)
	ws := r.env.Workspace(t, "business", true, true)
	limited := ws.NewKey(t, access.KeySpec{Role: access.RoleAdmin, RateLimit: intp(1)})

	r.env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, 200)
	r.env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, 200)
	r.env.Get(t, "/v1/invoices/inv_doesnotexist", ws.Key).WantError(t, 404, "not_found")
	r.env.Get(t, "/v1/invoices/inv_other", ws.Key).WantError(t, 404, "not_found")
	r.env.Get(t, "/v1/invoices", "").WantError(t, 401, "missing_api_key")
	r.env.Get(t, "/v1/clients/cli_x", "lb_notakey").WantError(t, 401, "invalid_api_key")
	r.env.Get(t, "/v1/me", limited).WantStatus(t, 200)
	r.env.Get(t, "/v1/me", limited).WantError(t, 429, "rate_limited")
	r.env.Get(t, "/no/such/route", ws.Key).WantError(t, 404, "route_not_found")
	r.env.Do(t, "GET", "/v1/invoices", ws.Key, nil, "X-Request-Id", "req-metrics-test-1").WantStatus(t, 200)

	m := scrape(t, r.url+"/metrics")
	m.want(t, "ledgerbase_http_requests_total", req("/v1/invoices", "200"), 3)
	m.want(t, "ledgerbase_http_request_duration_seconds", req("/v1/invoices", "200"), 3)
	m.want(t, "ledgerbase_http_requests_total", req("/v1/invoices/:id", "404"), 2)
	// Refused before routing, still named by the endpoint addressed.
	m.want(t, "ledgerbase_http_requests_total", req("/v1/invoices", "401"), 1)
	m.want(t, "ledgerbase_http_requests_total", req("/v1/clients/:id", "401"), 1)
	m.want(t, "ledgerbase_http_requests_total", req("/v1/me", "200"), 1)
	m.want(t, "ledgerbase_http_requests_total", req("/v1/me", "429"), 1)
	m.want(t, "ledgerbase_http_requests_total", req("unmatched", "404"), 1)
	m.want(t, "ledgerbase_auth_failures_total", map[string]string{"reason": "missing_api_key"}, 1)
	m.want(t, "ledgerbase_auth_failures_total", map[string]string{"reason": "invalid_api_key"}, 1)
	m.want(t, "ledgerbase_auth_failures_total", map[string]string{"reason": "revoked_api_key"}, 0)
	m.want(t, "ledgerbase_rate_limited_total", map[string]string{"plan": "business"}, 1)
	m.want(t, "ledgerbase_rate_limited_total", map[string]string{"plan": "starter"}, 0)
	// The scrape itself is the one request in flight.
	m.want(t, "ledgerbase_http_requests_in_flight", nil, 1)
	m.want(t, "ledgerbase_build_info", map[string]string{"version": version}, 1)
	for _, name := range []string{"go_sql_open_connections", "go_sql_max_open_connections", "go_goroutines", "go_build_info", "process_open_fds"} {
		if _, ok := m.value(name, nil); !ok {
			t.Errorf("no %s in the exposition", name)
		}
	}
	if fam := m["ledgerbase_http_requests_total"]; fam != nil {
		for _, s := range fam.Metric {
			for _, l := range s.Label {
				if l.GetName() == "route" && strings.Contains(l.GetValue(), "inv_") {
					t.Errorf("a raw path leaked into a route label: %s", l.GetValue())
				}
			}
		}
	}

	// The access log: one line per request with its id, route and key id, never the secret.
	line := logs.find(t, "request_id", "req-metrics-test-1")
	if line["route"] != "/v1/invoices" || line["method"] != "GET" || line["status"] != float64(200) || line["path"] != "/v1/invoices" {
		t.Errorf("access line %v", line)
	}
	if id, _ := line["key_id"].(string); !strings.HasPrefix(id, "key_") {
		t.Errorf("access line key_id %q", id)
	}
	if _, ok := line["duration_ms"].(float64); !ok {
		t.Errorf("access line without duration_ms: %v", line)
	}
	if strings.Contains(logs.String(), ws.Key) || strings.Contains(logs.String(), limited) {
		t.Error("a key's secret reached the log")
	}
}

func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	cfg := testConfig()
	cfg.Metrics.Addr = "127.0.0.1:0"
	r := start(t, cfg, quiet, db)
	r.env.Get(t, "/healthz", "").WantStatus(t, 200)
	r.env.Get(t, "/metrics", "").WantError(t, 404, "route_not_found")
	m := scrape(t, r.metricsURL+"/metrics")
	m.want(t, "ledgerbase_http_requests_total", req("/healthz", "200"), 1)
	m.want(t, "ledgerbase_http_requests_total", req("unmatched", "404"), 1)
}

func TestMetricsSeriesStayBoundedUnderRandomPaths(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	r := start(t, testConfig(), quiet, db)
	ws := r.env.Workspace(t, "business", true, true)

	// Every kind of request below, once, so each series exists.
	kinds := []struct {
		method, key string
		path        func(string) string
	}{
		{"GET", "", func(x string) string { return "/" + x }},
		{"GET", ws.Key, func(x string) string { return "/v1/" + x }},
		{"GET", ws.Key, func(x string) string { return "/v1/" + x + "/" + x + "/" + x }},
		{"GET", ws.Key, func(x string) string { return "/v1/invoices/inv_" + x }},
		{"GET", ws.Key, func(x string) string { return "/v1/clients/cli_" + x + "/addresses" }},
		{"GET", "", func(x string) string { return "/v1/invoices/inv_" + x }},
		{"GET", "lb_" + "bogus", func(x string) string { return "/v1/items/itm_" + x }},
		{"DELETE", ws.Key, func(x string) string { return "/v1/invoices/" + x }},
		{"POST", "", func(x string) string { return "/assets/" + x + ".css" }},
	}
	// send may run on other goroutines: it reports with Errorf only.
	send := func(i int, x string) {
		k := kinds[i%len(kinds)]
		q, _ := http.NewRequest(k.method, r.url+k.path(x), nil)
		if k.key != "" {
			q.Header.Set("Authorization", "Bearer "+k.key)
		}
		res, err := r.env.Client.Do(q)
		if err != nil {
			t.Errorf("%s %s: %v", k.method, k.path(x), err)
			return
		}
		res.Body.Close()
		if res.StatusCode < 400 {
			t.Errorf("%s %s answered %d", k.method, k.path(x), res.StatusCode)
		}
	}
	for i := range kinds {
		send(i, "warmup")
	}
	scrape(t, r.url+"/metrics") // so the scrape's own series exist too
	before := scrape(t, r.url+"/metrics")
	total := func(f families) float64 {
		n := 0.0
		for _, s := range f["ledgerbase_http_requests_total"].Metric {
			n += s.Counter.GetValue()
		}
		return n
	}

	const n = 1000
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				b := make([]byte, 8)
				_, _ = rand.Read(b)
				send(i, hex.EncodeToString(b))
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()

	after := scrape(t, r.url+"/metrics")
	if got := total(after) - total(before); got != n+1 { // + the first scrape
		t.Errorf("requests counted %v, want %d", got, n+1)
	}
	if b, a := before.series(), after.series(); a != b {
		t.Errorf("series grew from %d to %d under %d random requests", b, a, n)
	}
}

func intp(n int) *int { return &n }

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// find returns the JSON log line whose key has value.
func (s *syncBuffer) find(t *testing.T, key, value string) map[string]any {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && fmt.Sprint(m[key]) == value {
			return m
		}
	}
	t.Fatalf("no log line with %s=%s in:\n%s", key, value, s.String())
	return nil
}
