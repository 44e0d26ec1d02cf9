package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/usage"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// fixture is a business workspace with commerce on, demo records, a key
// and a custom role: enough for every page to have something to show.
type fixture struct {
	env    *apitest.Env
	ws     *apitest.Workspace
	keyID  string
	roleID string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 10}); err != nil {
		t.Fatal(err)
	}
	webtest.Records(t, env, ws.ID)
	ws.Role(t, "bookkeeper", "invoices:write,clients:read")
	k, err := env.DB.Writer.APIKey.Query().Where(apikey.WorkspaceID(ws.ID)).First(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, err := env.DB.Writer.Role.Query().Where(role.WorkspaceID(ws.ID)).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, ws: ws, keyID: k.ID, roleID: r.ID}
}

func (f *fixture) pages() []string {
	w := "/admin/w/" + f.ws.ID
	return []string{"/admin/", w, w + "/settings", w + "/keys", w + "/keys/" + f.keyID + "/revoke",
		w + "/roles", w + "/roles/new", w + "/roles/" + f.roleID, w + "/records/invoices", w + "/records/shipments"}
}

func TestNoPageWithoutASession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	webtest.NewAdmin(t, f.env) // an admin exists, so the way in is the login page
	anon := webtest.NewClient(t, f.env)
	for _, p := range append(f.pages(), "/admin/w/"+f.ws.ID+"/records/invoices/inv_x", "/admin/no-such-page") {
		r := anon.Get(p)
		if r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Errorf("GET %s without a session: %d %q, want 303 to /admin/login", p, r.Status, r.Header.Get("Location"))
		}
	}
	w := "/admin/w/" + f.ws.ID
	for _, p := range []string{"/admin/workspaces", "/admin/logout", w + "/settings", w + "/keys", w + "/keys/" + f.keyID + "/revoke", w + "/roles"} {
		r := anon.Post(p, url.Values{"name": {"x"}})
		if r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Errorf("POST %s without a session: %d, want 303 to /admin/login", p, r.Status)
		}
	}
	// The server's root leads a browser to the UI.
	if r := anon.Get("/"); r.Status != 302 || r.Header.Get("Location") != "/admin/" {
		t.Errorf("GET /: %d to %q, want 302 to /admin/", r.Status, r.Header.Get("Location"))
	}
	// A forged cookie is no session either.
	anon.HTTP.Jar.SetCookies(mustURL(t, f.env.URL+"/admin/"), cookies("lb_admin", "forged"))
	if r := anon.Get("/admin/"); r.Status != 303 {
		t.Errorf("forged cookie: %d", r.Status)
	}
}

func TestEveryPageAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	for _, p := range f.pages() {
		r := c.Get(p)
		if r.Status != 200 {
			t.Errorf("GET %s: %d\n%s", p, r.Status, r.Body)
		}
		if !strings.Contains(r.Body, "<main") || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: not a full, uncached page", p)
		}
	}
	w := "/admin/w/" + f.ws.ID
	for p, want := range map[string]int{
		"/admin/no-such-page":                  404,
		"/admin/w/ws_nope":                     404,
		w + "/records/no-such-resource":        404,
		w + "/records/invoices/inv_missing":    404,
		w + "/keys/key_missing/revoke":         404,
		w + "/roles/rol_missing":               404,
		w + "/records/invoices?limit=1000":     400,
		w + "/records/invoices?status=unknown": 400,
		w + "/records/invoices?colour=blue":    400,
		"/admin/assets/app.css":                200,
		"/admin/assets/htmx.min.js":            200,
	} {
		if r := c.Get(p); r.Status != want {
			t.Errorf("GET %s: %d, want %d", p, r.Status, want)
		}
	}
}

var idLink = regexp.MustCompile(`href="/admin/w/[^/]+/records/[a-z-]+/([a-z]+_[0-9a-z]+)"`)

// Every resource of the API has a list page, and each record a page.
func TestRecordBrowserCoversEveryResource(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	lists := 0
	for _, r := range resource.All {
		if _, ok := r.Op(resource.List); !ok || r.Table == "" || r.Parent != nil {
			continue
		}
		lists++
		base := "/admin/w/" + f.ws.ID + "/records/" + r.Name
		p := c.Get(base)
		if p.Status != 200 {
			t.Errorf("%s: %d", base, p.Status)
			continue
		}
		api := f.env.Get(t, "/v1/"+r.Name+"?limit=1", f.ws.Key).JSON(t)
		total := int(api["meta"].(map[string]any)["total"].(float64))
		if total == 0 {
			if !strings.Contains(p.Body, "yet.") {
				t.Errorf("%s: no records and no empty state", base)
			}
			continue
		}
		m := idLink.FindStringSubmatch(p.Body)
		if m == nil {
			t.Errorf("%s: %d records in the API, no record link on the page", base, total)
			continue
		}
		if d := c.Get(base + "/" + m[1]); d.Status != 200 || !strings.Contains(d.Body, m[1]) {
			t.Errorf("%s/%s: %d", base, m[1], d.Status)
		}
	}
	if lists < 15 {
		t.Fatalf("only %d resources browsed", lists)
	}
}

func ids(body string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range idLink.FindAllStringSubmatch(body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// The browser's search, filters and pages are the API's.
func TestRecordBrowserListsWhatTheAPIDoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	for _, q := range []string{"limit=3", "limit=3&offset=3", "status=paid", "q=INV", "limit=5&status=sent"} {
		var res struct {
			Data []struct{ ID string } `json:"data"`
		}
		f.env.Get(t, "/v1/invoices?"+q, f.ws.Key).WantStatus(t, 200).Decode(t, &res)
		p := c.Get("/admin/w/" + f.ws.ID + "/records/invoices?" + q + "&client_id=")
		if p.Status != 200 {
			t.Fatalf("%s: %d", q, p.Status)
		}
		got := ids(p.Body)
		// Rows link to their clients too: keep the invoices' own ids.
		var inv []string
		for _, id := range got {
			if strings.HasPrefix(id, "inv_") {
				inv = append(inv, id)
			}
		}
		var want []string
		for _, d := range res.Data {
			want = append(want, d.ID)
		}
		if strings.Join(inv, ",") != strings.Join(want, ",") {
			t.Errorf("%s: page lists %v, API %v", q, inv, want)
		}
	}
}

func TestRecordBrowserRefusesWhatTheAPIRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	for _, q := range []string{"limit=1000", "offset=-1", "status=lost", "colour=blue"} {
		apiErr := f.env.Get(t, "/v1/invoices?"+q, f.ws.Key).WantError(t, 400, "invalid_request")
		p := c.Get("/admin/w/" + f.ws.ID + "/records/invoices?" + q)
		msg := html.EscapeString(apiErr["message"].(string))
		if p.Status != 400 || strings.Count(strings.ToLower(p.Body), strings.ToLower(msg)) != 1 {
			t.Errorf("%s: %d, want the API's message %q once", q, p.Status, msg)
		}
	}
}

func TestRecordPagesShowChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	first := func(name string) map[string]any {
		var res struct{ Data []map[string]any }
		f.env.Get(t, "/v1/"+name+"?limit=1", f.ws.Key).WantStatus(t, 200).Decode(t, &res)
		if len(res.Data) == 0 {
			t.Fatalf("no %s in the demo data", name)
		}
		return res.Data[0]
	}
	for name, sections := range map[string][]string{
		"shipments":  {"<h2>Packages</h2>", "<h2>Events</h2>"},
		"gift-cards": {"<h2>Ledger</h2>"},
		"invoices":   {"<h2>Payments</h2>", "<h2>Lines</h2>"},
	} {
		rec := first(name)
		p := c.Get("/admin/w/" + f.ws.ID + "/records/" + name + "/" + rec["id"].(string))
		for _, s := range sections {
			if !strings.Contains(p.Body, s) {
				t.Errorf("%s page lacks %s", name, s)
			}
		}
	}
}

func TestFormsNeedTheirCSRFToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	form := url.Values{"name": {"Forged"}, "plan": {"starter"}}
	if r := c.Post("/admin/workspaces", form); r.Status != 403 || !strings.Contains(r.Body, "Form refused") {
		t.Errorf("no token: %d", r.Status)
	}
	form.Set("csrf", "wrong")
	if r := c.Post("/admin/workspaces", form); r.Status != 403 {
		t.Errorf("wrong token: %d", r.Status)
	}
	// Another session's token is wrong too.
	other := webtest.SignedIn(t, f.env)
	form.Set("csrf", other.Get("/admin/").Token())
	if r := c.Post("/admin/workspaces", form); r.Status != 403 {
		t.Errorf("another session's token: %d", r.Status)
	}
	if n, _ := f.env.DB.Writer.Workspace.Query().Count(t.Context()); n == 0 {
		t.Fatal("no workspaces at all")
	}
	r := c.PostWithToken("/admin/", "/admin/workspaces", url.Values{"name": {"Real"}, "plan": {"starter"}})
	if r.Status != 303 || !strings.HasPrefix(r.Header.Get("Location"), "/admin/w/ws_") {
		t.Errorf("with the token: %d %s", r.Status, r.Body)
	}
	// The sign-in form needs its own (pre-session) token.
	anon := webtest.NewClient(t, f.env)
	if r := anon.Post("/admin/login", url.Values{"email": {"a@example.com"}, "password": {"x"}}); r.Status != 403 {
		t.Errorf("sign-in without token: %d", r.Status)
	}
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t, func(u *web.UI) { u.LoginsPerMinute = 3 })
	email := webtest.NewAdmin(t, env)
	c := webtest.NewClient(t, env)
	try := func(email, password string) *webtest.Page {
		c = webtest.NewClient(t, env) // a fresh browser, with only the sign-in form's cookie
		tok := c.Get("/admin/login").Token()
		return c.Post("/admin/login", url.Values{"csrf": {tok}, "email": {email}, "password": {password}})
	}
	wrongPw, wrongEmail := try(email, "not the password"), try("nobody@example.com", webtest.Password)
	for _, r := range []*webtest.Page{wrongPw, wrongEmail} {
		if r.Status != 401 || !strings.Contains(r.Body, "The email or password is not right.") {
			t.Errorf("wrong credentials: %d", r.Status)
		}
	}
	if msg := regexp.MustCompile(`role="alert">[^<]*`); msg.FindString(wrongPw.Body) != msg.FindString(wrongEmail.Body) {
		t.Error("a wrong password and a wrong email read differently")
	}
	ok := try(email, webtest.Password)
	if ok.Status != 303 {
		t.Fatalf("right password: %d", ok.Status)
	}
	set := strings.Join(ok.Header.Values("Set-Cookie"), "\n")
	if !strings.Contains(set, "lb_admin=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") {
		t.Errorf("session cookie: %s", set)
	}
	if strings.Contains(strings.ToLower(set), "secure") {
		t.Errorf("Secure cookie over plain HTTP: %s", set)
	}
	if r := c.Get("/admin/"); r.Status != 200 || !strings.Contains(r.Body, email) {
		t.Fatalf("signed in: %d", r.Status)
	}
	// Sign out: the same cookie no longer opens anything.
	cookie := c.HTTP.Jar.Cookies(mustURL(t, env.URL+"/admin/"))
	if r := c.PostWithToken("/admin/", "/admin/logout", nil); r.Status != 303 {
		t.Fatalf("sign out: %d", r.Status)
	}
	replay := webtest.NewClient(t, env)
	replay.HTTP.Jar.SetCookies(mustURL(t, env.URL+"/admin/"), cookie)
	if r := replay.Get("/admin/"); r.Status != 303 {
		t.Errorf("old cookie after sign-out: %d", r.Status)
	}
	// Three attempts a minute are allowed for an email: the fourth is
	// throttled, even with the right password.
	if r := try(email, webtest.Password); r.Status != 303 {
		t.Errorf("third attempt: %d", r.Status)
	}
	if r := try(email, webtest.Password); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("throttled sign-in: %d", r.Status)
	}
}

func TestSecureCookieBehindTLS(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	email := webtest.NewAdmin(t, env)
	c := webtest.NewClient(t, env)
	tok := c.Get("/admin/login").Token()
	req := mustRequest(t, env.URL+"/admin/login", url.Values{"csrf": {tok}, "email": {email}, "password": {webtest.Password}})
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if set := strings.Join(res.Header.Values("Set-Cookie"), "\n"); res.StatusCode != 303 || !strings.Contains(set, "secure") {
		t.Errorf("%d, cookie over TLS: %s", res.StatusCode, set)
	}
}

func TestSetupOnlyWhileNoAdminExists(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	webtest.NewAdmin(t, env)
	c := webtest.NewClient(t, env)
	if r := c.Get("/admin/setup"); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
		t.Errorf("setup page with an admin: %d %s", r.Status, r.Header.Get("Location"))
	}
	tok := c.Get("/admin/login").Token()
	r := c.Post("/admin/setup", url.Values{"csrf": {tok}, "email": {"intruder@example.com"},
		"password": {"long enough password"}, "password_again": {"long enough password"}})
	if r.Status != 422 {
		t.Errorf("setup with an admin: %d", r.Status)
	}
	for _, a := range env.DB.Writer.AdminUser.Query().AllX(t.Context()) {
		if a.Email == "intruder@example.com" {
			t.Fatal("setup created a second admin")
		}
	}
}

func TestKeySecretIsShownOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	keys := "/admin/w/" + f.ws.ID + "/keys"
	posted := c.PostWithToken(keys, keys, url.Values{"name": {"Shop sync"}, "role": {"bookkeeper"}, "expires_in": {"720h"}})
	keySecret := regexp.MustCompile(`lb_[0-9A-Za-z]{40}`)
	if posted.Status != 303 || keySecret.MatchString(posted.Body) || keySecret.MatchString(posted.Header.Get("Location")) {
		t.Fatalf("create key: %d to %q, want a 303 without the secret\n%s", posted.Status, posted.Header.Get("Location"), posted.Body)
	}
	r := c.Follow(posted)
	secret := keySecret.FindString(r.Body)
	if r.Status != 200 || secret == "" {
		t.Fatalf("no secret shown after the redirect: %d\n%s", r.Status, r.Body)
	}
	if again := c.Get(posted.Header.Get("Location")); again.Status != 200 || strings.Contains(again.Body, secret) {
		t.Error("reloading the page after the redirect shows the secret again")
	}
	var me struct {
		Data []struct {
			Key struct {
				Role      string
				ExpiresAt *string `json:"expires_at"`
			}
		}
	}
	f.env.Get(t, "/v1/me", secret).WantStatus(t, 200).Decode(t, &me)
	if len(me.Data) != 1 || me.Data[0].Key.Role != "bookkeeper" || me.Data[0].Key.ExpiresAt == nil {
		t.Errorf("/v1/me: %+v", me)
	}
	if again := c.Get(keys); strings.Contains(again.Body, secret) || !strings.Contains(again.Body, "Shop sync") {
		t.Error("the secret is shown again, or the key is not listed")
	}
	for _, bad := range []url.Values{{"name": {""}, "role": {"admin"}}, {"name": {"x"}, "role": {"superuser"}}, {"name": {"x"}, "role": {"admin"}, "expires_in": {"1s"}}} {
		if r := c.PostWithToken(keys, keys, bad); r.Status != 422 || !strings.Contains(r.Body, `role="alert"`) {
			t.Errorf("bad key form %v: %d", bad, r.Status)
		}
	}
}

func TestRevokeAsksFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	secret := f.ws.NewKey(t, access.KeySpec{Name: "doomed"})
	k, err := f.env.DB.Writer.APIKey.Query().Where(apikey.WorkspaceID(f.ws.ID), apikey.Name("doomed")).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	f.env.Get(t, "/v1/me", secret).WantStatus(t, 200)
	path := "/admin/w/" + f.ws.ID + "/keys/" + k.ID + "/revoke"
	if p := c.Get(path); p.Status != 200 || !strings.Contains(p.Body, "Revoke key") {
		t.Fatalf("confirmation: %d", p.Status)
	}
	f.env.Get(t, "/v1/me", secret).WantStatus(t, 200) // asking revokes nothing
	if r := c.PostWithToken(path, path, nil); r.Status != 303 {
		t.Fatalf("revoke: %d", r.Status)
	}
	f.env.Get(t, "/v1/me", secret).WantError(t, 401, "revoked_api_key")
	if p := c.Get("/admin/w/" + f.ws.ID + "/keys?revoked=" + k.ID); !strings.Contains(p.Body, "is revoked") {
		t.Error("no confirmation message")
	}
}

func TestKeyStates(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	c := webtest.SignedIn(t, env)
	ws := env.Workspace(t, "starter", false, false)
	expired := ws.NewKey(t, access.KeySpec{Name: "short-lived", ExpiresIn: time.Millisecond})
	time.Sleep(5 * time.Millisecond)
	env.Get(t, "/v1/me", expired).WantError(t, 401, "expired_api_key")
	p := c.Get("/admin/w/" + ws.ID + "/keys")
	for _, want := range []string{`<td data-label="Name">short-lived</td>`, `<span class="badge warn">expired</span>`, `<span class="badge ok">active</span>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("keys page lacks %s", want)
		}
	}
	if strings.Contains(p.Body, `aria-label="Revoke short-lived"`) {
		t.Error("an expired key offers a revoke")
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	roles := "/admin/w/" + f.ws.ID + "/roles"
	form := url.Values{"name": {"orders only"}, "grant.sales-orders": {"write"}, "grant.invoices": {"read"}}
	if r := c.PostWithToken(roles+"/new", roles, form); r.Status != 303 {
		t.Fatalf("create role: %d\n%s", r.Status, r.Body)
	}
	if r := c.PostWithToken(roles+"/new", roles, form); r.Status != 422 || !strings.Contains(r.Body, "exists already") {
		t.Errorf("duplicate role: %d", r.Status)
	}
	if r := c.PostWithToken(roles+"/new", roles, url.Values{"name": {"admin"}}); r.Status != 422 {
		t.Errorf("a role named admin: %d", r.Status)
	}
	secret := f.ws.NewKey(t, access.KeySpec{Role: "orders only"})
	f.env.Get(t, "/v1/sales-orders", secret).WantStatus(t, 200)
	f.env.Get(t, "/v1/vendors", secret).WantError(t, 403, "permission_denied")
	// Editing the matrix reaches the key at once.
	id := regexp.MustCompile(`/roles/(rol_[0-9a-z]+)">orders only`).FindStringSubmatch(c.Get(roles).Body)
	if id == nil {
		t.Fatal("role not listed")
	}
	edit := roles + "/" + id[1]
	if r := c.PostWithToken(edit, edit, url.Values{"grant.vendors": {"read"}}); r.Status != 303 {
		t.Fatalf("save role: %d", r.Status)
	}
	f.env.Get(t, "/v1/vendors", secret).WantStatus(t, 200)
	f.env.Get(t, "/v1/sales-orders", secret).WantError(t, 403, "permission_denied")
	// Built-ins are shown, not editable.
	p := c.Get(roles)
	if !strings.Contains(p.Body, "admin <span class=\"muted\">(built-in)") || strings.Contains(p.Body, "/roles/admin") {
		t.Error("built-in roles are not shown read-only")
	}
}

func TestDashboardCountsRecordsAndTraffic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	one := 1
	secret := f.ws.NewKey(t, access.KeySpec{Name: "tight", RateLimit: &one})
	f.env.Get(t, "/v1/me", secret).WantStatus(t, 200)
	f.env.Get(t, "/v1/me", secret).WantError(t, 429, "rate_limited")
	f.env.Get(t, "/v1/invoices/inv_missing", f.ws.Key).WantError(t, 404, "not_found")
	f.env.Get(t, "/v1/invoices", f.ws.Key).WantStatus(t, 200)
	p := c.Get("/admin/w/" + f.ws.ID)
	if p.Status != 200 {
		t.Fatalf("dashboard: %d", p.Status)
	}
	// The counts are the API's totals.
	var inv struct{ Meta struct{ Total int } }
	f.env.Get(t, "/v1/invoices?limit=1", f.ws.Key).Decode(t, &inv)
	card := regexp.MustCompile(`records/invoices"><div class="n">(\d+)</div>`).FindStringSubmatch(p.Body)
	if card == nil || card[1] != itoa(inv.Meta.Total) {
		t.Errorf("invoice card %v, API total %d", card, inv.Meta.Total)
	}
	row := func(name string) []string {
		re := regexp.MustCompile(`<td>` + regexp.QuoteMeta(name) + `</td>.*?<td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>`)
		return re.FindStringSubmatch(p.Body)
	}
	if r := row("tight"); r == nil || r[1] != "2" || r[2] != "1" || r[3] != "1" {
		t.Errorf("traffic of the rate-limited key: %v", r)
	}
	if r := row("(no name)"); r == nil || r[1] != "2" || r[2] != "1" {
		t.Errorf("traffic of the admin key: %v", r)
	}
	got, err := usage.Since(context.Background(), f.env.DB.Writer, f.ws.ID, f.env.DB.Writer.APIKey.Query().FirstX(t.Context()).CreatedAt)
	if err != nil || len(got) < 2 {
		t.Errorf("stored usage: %v %v", got, err)
	}
}

func TestWorkspaceSettingsReachTheAPI(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	c := webtest.SignedIn(t, env)
	ws := env.Workspace(t, "starter", false, true)
	env.Get(t, "/v1/clients", ws.Key).WantError(t, 403, "plan_required")
	env.Get(t, "/v1/products", ws.Key).WantError(t, 403, "commerce_mode_required")
	settings := "/admin/w/" + ws.ID + "/settings"
	r := c.PostWithToken(settings, settings, url.Values{"name": {"Renamed"}, "plan": {"growth"}, "commerce_mode": {"on"}, "commerce_module": {"on"}})
	if r.Status != 303 {
		t.Fatalf("save: %d\n%s", r.Status, r.Body)
	}
	env.Get(t, "/v1/clients", ws.Key).WantStatus(t, 200)
	env.Get(t, "/v1/products", ws.Key).WantStatus(t, 200)
	var me struct{ Data []map[string]any }
	if err := json.Unmarshal(env.Get(t, "/v1/me", ws.Key).Body, &me); err != nil || len(me.Data) != 1 || me.Data[0]["workspace_name"] != "Renamed" {
		t.Errorf("/v1/me after rename: %v %v", me, err)
	}
	if r := c.PostWithToken(settings, settings, url.Values{"name": {" "}, "plan": {"growth"}}); r.Status != 422 {
		t.Errorf("blank name: %d", r.Status)
	}
	if r := c.PostWithToken(settings, settings, url.Values{"name": {"x"}, "plan": {"platinum"}}); r.Status != 422 {
		t.Errorf("unknown plan: %d", r.Status)
	}
}
