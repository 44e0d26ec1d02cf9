package web_test

import (
	"context"
	"errors"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var whsec = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{40,}`)

// endpointsOf lists a workspace's endpoints as /v1 shows them.
func endpointsOf(t *testing.T, env *apitest.Env, key string) []map[string]any {
	t.Helper()
	var l struct{ Data []map[string]any }
	env.Get(t, "/v1/webhook-endpoints", key).WantStatus(t, 200).Decode(t, &l)
	return l.Data
}

// fieldError is the message shown by the input named name, "" when none.
func endpointFieldError(body, name string) string {
	i := strings.Index(body, `name="`+name+`"`)
	if i < 0 {
		return ""
	}
	start := max(strings.LastIndex(body[:i], `<div class="field`), strings.LastIndex(body[:i], `<fieldset class="field`))
	if start < 0 {
		return ""
	}
	m := regexp.MustCompile(`(?s)^<(?:div|fieldset) class="field[^"]*invalid[^"]*".*?<span class="error" role="alert">([^<]*)</span>`).FindStringSubmatch(body[start:])
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// The pages manage a workspace's endpoints by the rules /v1 applies: a
// refused URL is shown by its field and saves nothing, the secret shows
// once (and again once after a rotation), and every change is what the
// API then reads.
func TestWebhookEndpointPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	base := "/admin/w/" + f.ws.ID + "/webhooks"
	if p := c.Get(base); p.Status != 200 || !strings.Contains(p.Body, "No webhook endpoints yet") || !strings.Contains(c.Get("/admin/w/"+f.ws.ID).Body, `href="`+base+`"`) {
		t.Fatalf("the webhooks page (%d) or its link in the navigation is missing", p.Status)
	}

	for _, bad := range []struct {
		form        url.Values
		field, says string
	}{
		{url.Values{"url": {"http://9.9.9.10/hooks"}, "enabled_events": {"*"}}, "url", "https"},
		{url.Values{"url": {"https://127.0.0.1/hooks"}, "enabled_events": {"*"}}, "url", "loopback"},
		{url.Values{"url": {"https://10.0.0.1/hooks"}, "enabled_events": {"*"}}, "url", "private"},
		{url.Values{"url": {"https://169.254.169.254/latest"}, "enabled_events": {"*"}}, "url", "link-local"},
		{url.Values{"url": {"not a url"}, "enabled_events": {"*"}}, "url", "absolute https URL"},
		{url.Values{"url": {"https://9.9.9.10/hooks"}}, "enabled_events", "non-empty"},
		{url.Values{"url": {"https://9.9.9.10/hooks"}, "enabled_events": {"invoice.exploded"}}, "enabled_events", "nknown event type"},
	} {
		p := c.PostWithToken(base, base, bad.form)
		if msg := endpointFieldError(p.Body, bad.field); p.Status != 422 || !strings.Contains(msg, bad.says) {
			t.Errorf("%v: %d, by %s: %q; want 422 saying %q", bad.form, p.Status, bad.field, msg, bad.says)
		}
		if !strings.Contains(p.Body, `value="`+html.EscapeString(bad.form.Get("url"))+`"`) {
			t.Errorf("%v: the form does not keep what was typed", bad.form)
		}
	}
	if n := len(endpointsOf(t, f.env, f.ws.Key)); n != 0 {
		t.Fatalf("refused forms saved %d endpoints", n)
	}

	posted := c.PostWithToken(base, base, url.Values{"url": {"https://9.9.9.10/hooks"}, "description": {"Shop sync"},
		"enabled_events": {"invoice.*", "client.created"}})
	if posted.Status != 303 || whsec.MatchString(posted.Body) || whsec.MatchString(posted.Header.Get("Location")) {
		t.Fatalf("create: %d to %q, want a 303 without the secret", posted.Status, posted.Header.Get("Location"))
	}
	p := c.Follow(posted)
	secret := whsec.FindString(p.Body)
	if p.Status != 200 || secret == "" {
		t.Fatalf("after create: %d, secret %q\n%s", p.Status, secret, p.Body)
	}
	if again := c.Get(posted.Header.Get("Location")); again.Status != 200 || whsec.MatchString(again.Body) {
		t.Fatal("reloading the page after the redirect shows the secret again")
	}
	eps := endpointsOf(t, f.env, f.ws.Key)
	if len(eps) != 1 || eps[0]["url"] != "https://9.9.9.10/hooks" || eps[0]["description"] != "Shop sync" ||
		strings.Join(toStrings(eps[0]["enabled_events"]), ",") != "invoice.*,client.created" {
		t.Fatalf("the API reads %v", eps)
	}
	id := eps[0]["id"].(string)
	e, err := f.env.DB.Writer.WebhookEndpoint.Get(t.Context(), id)
	if err != nil || e.Secret != secret {
		t.Fatalf("the secret shown is not the one stored (%v)", err)
	}
	page := base + "/" + id
	if again := c.Get(page); again.Status != 200 || strings.Contains(again.Body, secret) || whsec.MatchString(again.Body) {
		t.Fatalf("the endpoint page (%d) shows a secret again", again.Status)
	}
	if l := c.Get(base); !strings.Contains(l.Body, "https://9.9.9.10/hooks") || strings.Contains(l.Body, secret) {
		t.Fatal("the list does not show the endpoint, or shows its secret")
	}

	// Edit: a refused URL is shown by its field and changes nothing.
	r := c.PostWithToken(page, page, url.Values{"url": {"https://192.168.1.5/x"}, "description": {"changed"}, "enabled_events": {"*"}})
	if r.Status != 422 || !strings.Contains(endpointFieldError(r.Body, "url"), "private") {
		t.Fatalf("edit with a private URL: %d %q", r.Status, endpointFieldError(r.Body, "url"))
	}
	if endpointsOf(t, f.env, f.ws.Key)[0]["description"] != "Shop sync" {
		t.Fatal("a refused edit changed the endpoint")
	}
	r = c.PostWithToken(page, page, url.Values{"url": {"https://9.9.9.11/in"}, "description": {"Shop"}, "enabled_events": {"*"}})
	if r.Status != 303 {
		t.Fatalf("edit: %d\n%s", r.Status, r.Body)
	}
	got := f.env.Get(t, "/v1/webhook-endpoints/"+id, f.ws.Key).WantStatus(t, 200).JSON(t)
	if got["url"] != "https://9.9.9.11/in" || got["description"] != "Shop" || strings.Join(toStrings(got["enabled_events"]), ",") != "*" {
		t.Fatalf("after the edit the API reads %v", got)
	}

	// Disable and enable.
	if r := c.PostWithToken(page, page+"/disable", nil); r.Status != 303 || f.env.Get(t, "/v1/webhook-endpoints/"+id, f.ws.Key).JSON(t)["disabled"] != true {
		t.Fatalf("disable: %d", r.Status)
	}
	if p := c.Get(page); !strings.Contains(p.Body, `<span class="badge bad">disabled</span>`) || !strings.Contains(p.Body, ">Enable</button>") {
		t.Fatal("a disabled endpoint's page does not say so")
	}
	if r := c.PostWithToken(page, page+"/enable", nil); r.Status != 303 || f.env.Get(t, "/v1/webhook-endpoints/"+id, f.ws.Key).JSON(t)["disabled"] != false {
		t.Fatalf("enable: %d", r.Status)
	}
	// An endpoint the worker disabled says why, on the list and its page.
	if err := f.env.DB.Writer.WebhookEndpoint.UpdateOneID(id).SetDisabled(true).
		SetDisabledReason("every delivery failed for 72h since 2026-11-20T10:00:00Z").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{base, page} {
		if p := c.Get(at); !strings.Contains(p.Body, "every delivery failed for 72h since 2026-11-20T10:00:00Z") {
			t.Errorf("%s does not show why the endpoint is disabled", at)
		}
	}
	c.PostWithToken(page, page+"/enable", nil)
	if p := c.Get(page); strings.Contains(p.Body, "every delivery failed") {
		t.Error("enabling again keeps the old reason")
	}

	// Rotate: a new secret, shown once; the old one keeps signing a day.
	rotated := c.PostWithToken(page, page+"/rotate", nil)
	if rotated.Status != 303 || whsec.MatchString(rotated.Body) || whsec.MatchString(rotated.Header.Get("Location")) {
		t.Fatalf("rotate: %d to %q, want a 303 without the secret", rotated.Status, rotated.Header.Get("Location"))
	}
	rot := c.Follow(rotated)
	newSecret := whsec.FindString(rot.Body)
	if rot.Status != 200 || newSecret == "" || newSecret == secret {
		t.Fatalf("rotate: %d, secret %q", rot.Status, newSecret)
	}
	if again := c.Get(rotated.Header.Get("Location")); again.Status != 200 || whsec.MatchString(again.Body) {
		t.Fatal("reloading the page after a rotation shows the secret again")
	}
	if e, err = f.env.DB.Writer.WebhookEndpoint.Get(t.Context(), id); err != nil || e.Secret != newSecret || e.PreviousSecret != secret ||
		e.PreviousSecretExpiresAt == nil || e.PreviousSecretExpiresAt.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("after rotation: %v", err)
	}

	// Another workspace's endpoint is not found, and its forms change nothing.
	other := f.env.Workspace(t, "growth", false, false)
	theirs := f.env.Do(t, "POST", "/v1/webhook-endpoints", other.Key, map[string]any{"url": "https://9.9.9.12/x", "enabled_events": []string{"*"}}).
		WantStatus(t, 201).JSON(t)["id"].(string)
	for _, p := range []string{base + "/" + theirs, base + "/" + theirs + "/delete", base + "/whe_missing"} {
		if r := c.Get(p); r.Status != 404 {
			t.Errorf("GET %s: %d, want 404", p, r.Status)
		}
	}
	for _, p := range []string{"", "/disable", "/rotate", "/delete", "/deliveries/whd_x/retry"} {
		if r := c.PostWithToken(page, base+"/"+theirs+p, url.Values{"url": {"https://9.9.9.13/y"}, "enabled_events": {"*"}}); r.Status != 404 {
			t.Errorf("POST %s on another workspace's endpoint: %d, want 404", p, r.Status)
		}
	}
	if th := f.env.Get(t, "/v1/webhook-endpoints/"+theirs, other.Key).JSON(t); th["url"] != "https://9.9.9.12/x" || th["disabled"] != false {
		t.Fatalf("another workspace's endpoint changed: %v", th)
	}

	// Without a session: the login page; without the form's token: refused.
	anon := webtest.NewClient(t, f.env)
	for _, p := range []string{base, page, page + "/delete"} {
		if r := anon.Get(p); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Errorf("GET %s without a session: %d", p, r.Status)
		}
	}
	for _, p := range []string{base, page, page + "/disable", page + "/rotate", page + "/delete"} {
		if r := anon.Post(p, url.Values{"url": {"https://9.9.9.14/z"}, "enabled_events": {"*"}}); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Errorf("POST %s without a session: %d", p, r.Status)
		}
		if r := c.Post(p, url.Values{"url": {"https://9.9.9.14/z"}, "enabled_events": {"*"}}); r.Status != 403 {
			t.Errorf("POST %s without the CSRF token: %d, want 403", p, r.Status)
		}
	}
	if eps := endpointsOf(t, f.env, f.ws.Key); len(eps) != 1 || eps[0]["url"] != "https://9.9.9.11/in" || eps[0]["disabled"] != false {
		t.Fatalf("refused posts changed the endpoints: %v", eps)
	}
	if e, _ := f.env.DB.Writer.WebhookEndpoint.Get(t.Context(), id); e.Secret != newSecret {
		t.Fatal("a refused rotation rotated")
	}

	// Delete asks first.
	if p := c.Get(page + "/delete"); p.Status != 200 || !strings.Contains(p.Body, "Delete endpoint") {
		t.Fatalf("delete confirmation: %d", p.Status)
	}
	f.env.Get(t, "/v1/webhook-endpoints/"+id, f.ws.Key).WantStatus(t, 200)
	if r := c.PostWithToken(page+"/delete", page+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	f.env.Get(t, "/v1/webhook-endpoints/"+id, f.ws.Key).WantError(t, 404, "not_found")
	if p := c.Get(base + "?deleted=" + id); !strings.Contains(p.Body, "is deleted") {
		t.Error("no confirmation after deleting")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// loopbackReceiver answers the statuses given, then 200, each with body,
// and records the requests' webhook-id.
type loopbackReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	ids []string
}

func newLoopbackReceiver(t *testing.T, body string, statuses ...int) *loopbackReceiver {
	r := &loopbackReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		n := len(r.ids)
		r.mu.Unlock()
		status := http.StatusOK
		if n <= len(statuses) {
			status = statuses[n-1]
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *loopbackReceiver) wait(t *testing.T, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		if len(r.ids) >= n {
			ids := append([]string(nil), r.ids...)
			r.mu.Unlock()
			return ids
		}
		r.mu.Unlock()
	}
	t.Fatalf("the receiver did not get %d requests", n)
	return nil
}

// startLoopbackWorker runs a delivery worker with settings s until the test
// ends; its dialer fails the test if asked for any address but loopback.
// The test's pending deliveries are then settled, so the next test's worker
// does not inherit them.
func startLoopbackWorker(t *testing.T, env *apitest.Env, s webhooks.Settings) {
	s.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("the webhook dialer was asked for %s, which is not loopback", addr)
			return nil, errors.New("test dialer: not loopback")
		}
		return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { webhooks.NewWorker(env.DB, s).Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if _, err := env.DB.WritePool.Exec("UPDATE webhook_deliveries SET status = 'failed' WHERE status = 'pending'"); err != nil {
			t.Error(err)
		}
	})
}

// The deliveries log shows each attempt (time, status, latency, the first
// KiB of the answer as escaped text), and "send again" sends the same
// event again. A real worker delivers to a loopback receiver; its dialer
// fails the test if asked for any other address. Not parallel: the worker
// serves the package's whole database.
func TestWebhookDeliveriesPageAndSendAgain(t *testing.T) {
	open := webhooks.Settings{AllowHTTP: true, AllowPrivateNetworks: true}
	env := webtest.StartWith(t, func(c *rest.Config) { c.Webhooks = open })
	ws := env.Workspace(t, "growth", false, false)
	worker := open
	worker.Schedule, worker.Poll = []time.Duration{time.Hour}, 50*time.Millisecond // no retry but the one asked for
	startLoopbackWorker(t, env, worker)

	rcv := newLoopbackReceiver(t, `<b>down</b><script>alert("x")</script>`+strings.Repeat("z", 2000), http.StatusInternalServerError)
	c := webtest.SignedIn(t, env)
	base := "/admin/w/" + ws.ID + "/webhooks"
	if p := c.PostWithToken(base, base, url.Values{"url": {rcv.URL + "/in"}, "enabled_events": {"client.*"}}); p.Status != 303 {
		t.Fatalf("create: %d\n%s", p.Status, p.Body)
	}
	id := endpointsOf(t, env, ws.Key)[0]["id"].(string)
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Acme"}).WantStatus(t, 201)
	first := rcv.wait(t, 1)
	page := base + "/" + id
	var p *webtest.Page
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if p = c.Get(page); strings.Contains(p.Body, "500 Internal Server Error") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(p.Body, "client.created") || !strings.Contains(p.Body, first[0]) || !strings.Contains(p.Body, "500 Internal Server Error") ||
		!regexp.MustCompile(`\d+ ms`).MatchString(p.Body) {
		t.Fatalf("the deliveries log does not show the attempt:\n%s", p.Body)
	}
	// The answer is shown as text, escaped, and only its first KiB.
	if strings.Contains(p.Body, `<script>alert("x")`) || strings.Contains(p.Body, "<b>down</b>") ||
		!strings.Contains(p.Body, "&lt;b&gt;down&lt;/b&gt;&lt;script&gt;") || strings.Contains(p.Body, strings.Repeat("z", 1100)) {
		t.Fatal("the receiver's answer is rendered, or shown past its first KiB")
	}
	retry := regexp.MustCompile(`action="(` + regexp.QuoteMeta(page) + `/deliveries/whd_[0-9a-z]+/retry)"`).FindStringSubmatch(p.Body)
	if retry == nil {
		t.Fatal("no send again button")
	}
	if r := c.PostWithToken(page, retry[1], nil); r.Status != 303 {
		t.Fatalf("send again: %d", r.Status)
	}
	ids := rcv.wait(t, 2)
	if ids[1] != ids[0] {
		t.Fatalf("sent again with webhook-id %s, first %s", ids[1], ids[0])
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if p = c.Get(page); strings.Contains(p.Body, "200 OK") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(p.Body, "200 OK") || !strings.Contains(p.Body, "500 Internal Server Error") || !strings.Contains(p.Body, `<span class="badge ok">succeeded</span>`) {
		t.Fatalf("the log does not show both attempts and the success:\n%s", p.Body)
	}
}

// An endpoint whose deliveries have all failed for DisableAfter (three days
// by default) is disabled by the worker's next failed attempt, the admin
// page says why, and it gets nothing more. Its failing time is set back in
// the database rather than waited for. Not parallel, as above.
func TestAnEndpointFailingForThreeDaysIsDisabled(t *testing.T) {
	open := webhooks.Settings{AllowHTTP: true, AllowPrivateNetworks: true}
	env := webtest.StartWith(t, func(c *rest.Config) { c.Webhooks = open })
	ws := env.Workspace(t, "growth", false, false)
	worker := open
	worker.Schedule, worker.Poll = []time.Duration{time.Hour}, 50*time.Millisecond // no retries in this test
	startLoopbackWorker(t, env, worker)

	rcv := newLoopbackReceiver(t, "down", 500, 500, 500, 500, 500)
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, map[string]any{"url": rcv.URL + "/in", "enabled_events": []string{"client.created"}}).WantStatus(t, 201).JSON(t)
	id := ep["id"].(string)
	failingSince := func() (since *time.Time) {
		t.Helper()
		if err := env.DB.ReadPool.QueryRow(env.DB.Rebind("SELECT failing_since FROM webhook_endpoints WHERE id = ?"), id).Scan(&since); err != nil {
			t.Fatal(err)
		}
		return since
	}
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "first"}).WantStatus(t, 201)
	rcv.wait(t, 1)
	for deadline := time.Now().Add(5 * time.Second); failingSince() == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a failed delivery did not mark the endpoint failing")
		}
	}
	if got := env.Get(t, "/v1/webhook-endpoints/"+id, ws.Key).WantStatus(t, 200).JSON(t); got["disabled"] != false {
		t.Fatalf("disabled after one failure: %v", got)
	}

	longAgo := time.Now().UTC().Add(-73 * time.Hour)
	if _, err := env.DB.WritePool.Exec(env.DB.Rebind("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?"), longAgo, id); err != nil {
		t.Fatal(err)
	}
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "second"}).WantStatus(t, 201)
	rcv.wait(t, 2)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if env.Get(t, "/v1/webhook-endpoints/"+id, ws.Key).WantStatus(t, 200).JSON(t)["disabled"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an endpoint failing for 73 hours was not disabled by its next failed attempt")
		}
	}
	c := webtest.SignedIn(t, env)
	page := c.Get("/admin/w/" + ws.ID + "/webhooks/" + id)
	if !strings.Contains(page.Body, "Delivery stopped: every delivery failed since "+longAgo.Format(time.RFC3339)) || !strings.Contains(page.Body, "answered 500") {
		t.Fatalf("the endpoint's page does not say why it stopped:\n%s", page.Body)
	}
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "third"}).WantStatus(t, 201)
	time.Sleep(300 * time.Millisecond) // six polls
	if n := len(rcv.wait(t, 2)); n != 2 {
		t.Fatalf("a disabled endpoint got %d requests, want the 2 before it was disabled", n)
	}
}
