package web_test

import (
	"fmt"
	"html"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
	"github.com/ledgerbase/ledgerbase/ent/giftcard"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var (
	postForm  = regexp.MustCompile(`(?s)<form\b([^>]*)>(.*?)</form>`)
	formPost  = regexp.MustCompile(`\bmethod="post"`)
	formTo    = regexp.MustCompile(`\baction="([^"]*)"`)
	formToken = regexp.MustCompile(`<input type="hidden" name="_idem" value="([^"]+)"`)
	pageLink  = regexp.MustCompile(`href="(/admin/[^"?#]*)"`)
	pathID    = regexp.MustCompile(`^[a-z]+_[0-9a-z]{8,}$`)
)

// notWriting are the admin POST routes that take no idempotency token:
// signing in and out (their state is the session, and a repeat signs in
// or out again), and a lines editor's running totals (it writes nothing).
var notWriting = []string{"/admin/setup", "/admin/login", "/admin/logout", "/admin/w/:ws/records/:res/totals"}

// TestEveryWritingFormCarriesItsToken visits the admin pages of a busy
// workspace by following their links, lists every form that posts, and
// checks each carries its idempotency token, a new one on each render; and
// every POST route the UI serves must be reached by a form found, so a new
// writing form is checked without being listed here.
func TestEveryWritingFormCarriesItsToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	// Endpoints in both states, with a delivery: the enable, disable and
	// send-again forms.
	for _, disabled := range []bool{false, true} {
		u := "https://hooks.example.com/in"
		if _, err := webhooks.CreateEndpoint(ctx, f.env.DB.Writer, f.ws.ID, webhooks.EndpointChange{URL: &u, Events: []string{"client.*"}, Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
	}
	f.env.Do(t, "POST", "/v1/clients", f.ws.Key, map[string]any{"name": "Hooked Ltd"}).WantStatus(t, 201)
	// An email waiting for SMTP on every invoice: the Try now form.
	invs, err := f.env.DB.Reader.Invoice.Query().Where(invoice.WorkspaceID(f.ws.ID)).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range invs {
		err := f.env.DB.Writer.EmailMessage.Create().SetWorkspaceID(f.ws.ID).SetResource("invoices").SetRecordID(id).SetLang("en").
			SetTo(`["ap@client.test"]`).SetMessageID(fmt.Sprintf("token-test-%d@localhost", i)).SetStatus(emailmessage.StatusNotConfigured).
			SetNextAttemptAt(time.Now().Add(time.Hour)).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	c := webtest.SignedIn(t, f.env)

	var routes []string
	for _, r := range f.env.Server.App.GetRoutes(true) {
		if r.Method == "POST" && strings.HasPrefix(r.Path, "/admin") && !slices.Contains(routes, r.Path) {
			routes = append(routes, r.Path)
		}
	}

	type found struct{ page, action string }
	var forms []found
	tokens := map[string]string{} // token → the page that showed it
	queue := []string{"/admin/w/" + f.ws.ID + "/", "/admin/"}
	seen, shapes := map[string]bool{}, map[string]int{}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		shape := idShape(path)
		if seen[path] || shapes[shape] >= 2 || strings.HasPrefix(path, "/admin/assets") || path == "/admin/docs" {
			continue
		}
		seen[path] = true
		shapes[shape]++
		p := c.Get(path)
		if p.Status != 200 {
			continue
		}
		for _, m := range postForm.FindAllStringSubmatch(p.Body, -1) {
			if !formPost.MatchString(m[1]) {
				continue
			}
			to := formTo.FindStringSubmatch(m[1])
			if to == nil {
				t.Errorf("%s: a form posts without an action", path)
				continue
			}
			action := html.UnescapeString(to[1])
			forms = append(forms, found{path, action})
			if slices.ContainsFunc(notWriting, func(r string) bool { return routeRe(r).MatchString(action) }) {
				continue
			}
			tok := formToken.FindStringSubmatch(m[2])
			switch {
			case tok == nil:
				t.Errorf("%s: the form posting to %s carries no idempotency token (_idem)", path, action)
			case tokens[tok[1]] != "":
				t.Errorf("%s: the form posting to %s carries the token %s that %s showed too", path, action, tok[1], tokens[tok[1]])
			default:
				tokens[tok[1]] = path
			}
		}
		for _, m := range pageLink.FindAllStringSubmatch(p.Body, -1) {
			queue = append(queue, html.UnescapeString(m[1]))
		}
	}
	for _, r := range routes {
		if slices.Contains(notWriting, r) {
			continue
		}
		re := routeRe(r)
		if !slices.ContainsFunc(forms, func(f found) bool { return re.MatchString(f.action) }) {
			t.Errorf("no form posting to %s was found on the %d pages visited", r, len(seen))
		}
	}
	t.Logf("%d forms that post on %d pages", len(forms), len(seen))
}

// idShape is a path with its ids blanked.
func idShape(path string) string {
	parts := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for i, p := range parts {
		if pathID.MatchString(p) {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// routeRe matches the paths a fiber route serves.
func routeRe(route string) *regexp.Regexp {
	parts := strings.Split(strings.TrimSuffix(route, "/"), "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "[^/]+"
		} else {
			parts[i] = regexp.QuoteMeta(p)
		}
	}
	return regexp.MustCompile("^" + strings.Join(parts, "/") + "$")
}

// TestAWritingFormSentTwiceWritesOnce sends each form that makes
// something twice with the same token, as a double click or a form sent
// again from the browser's history does: one record or rotation, both
// answers a redirect to the same page, the secret (the first's) shown once
// after it; the token with other values is refused and writes nothing.
func TestAWritingFormSentTwiceWritesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	db := f.env.DB.Writer
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	u := "https://9.9.9.20/in"
	ep, err := webhooks.CreateEndpoint(ctx, db, f.ws.ID, webhooks.EndpointChange{URL: &u, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	// rotated counts the rotations since ep was made: a second one would
	// have moved the first rotation's secret to previous.
	rotated := func() int {
		e := db.WebhookEndpoint.GetX(ctx, ep.ID)
		switch {
		case e.Secret == ep.Secret:
			return 0
		case e.PreviousSecret == ep.Secret:
			return 1
		}
		return 2
	}
	for _, tc := range []struct {
		name, page, action string
		form               url.Values
		count              func() int
		secret             *regexp.Regexp // shown once after the first
	}{
		{"create key", w + "/keys", w + "/keys", url.Values{"name": {"Twice"}, "role": {"admin"}},
			func() int { return db.APIKey.Query().Where(apikey.WorkspaceID(f.ws.ID)).CountX(ctx) }, regexp.MustCompile(`lb_[0-9A-Za-z]{40}`)},
		{"add endpoint", w + "/webhooks", w + "/webhooks", url.Values{"url": {"https://9.9.9.21/in"}, "enabled_events": {"*"}},
			func() int { return db.WebhookEndpoint.Query().CountX(ctx) }, whsec},
		{"rotate secret", w + "/webhooks/" + ep.ID, w + "/webhooks/" + ep.ID + "/rotate", url.Values{},
			rotated, whsec},
		{"create role", w + "/roles/new", w + "/roles", url.Values{"name": {"twice"}, "grant.clients": {"read"}},
			func() int { return db.Role.Query().Where(role.WorkspaceID(f.ws.ID)).CountX(ctx) }, nil},
		{"create workspace", "/admin/", "/admin/workspaces", url.Values{"name": {"Twice Ltd"}, "plan": {"starter"}},
			func() int { return db.Workspace.Query().CountX(ctx) }, nil},
		{"issue gift card", w + "/records/gift-cards/new", w + "/records/gift-cards", url.Values{"initial_balance_cents": {"7.00"}, "currency_code": {"EUR"}},
			func() int { return db.GiftCard.Query().Where(giftcard.WorkspaceID(f.ws.ID)).CountX(ctx) }, shownCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := c.Get(tc.page)
			form := url.Values{}
			maps.Copy(form, tc.form)
			form.Set("csrf", page.Token())
			tok := formToken.FindStringSubmatch(page.Body)
			if tok == nil {
				t.Fatalf("%s has no token", tc.page)
			}
			form.Set("_idem", tok[1])
			before := tc.count()
			first := c.Post(tc.action, form)
			second := c.Post(tc.action, form)
			if first.Status != 303 || second.Status != 303 || first.Header.Get("Location") != second.Header.Get("Location") {
				t.Fatalf("sent twice: %d to %q, then %d to %q; want the same 303", first.Status, first.Header.Get("Location"),
					second.Status, second.Header.Get("Location"))
			}
			if n := tc.count(); n != before+1 {
				t.Fatalf("sent twice: %d made, want 1", n-before)
			}
			// The browser follows the answer it got, the second: the page
			// shows the secret the first made, once; the repeat made none.
			if strings.Contains(strings.Join(second.Header.Values("Set-Cookie"), "\n"), "lb_flash=") {
				t.Error("the form sent again answers a secret to show")
			}
			if tc.secret != nil {
				if s := tc.secret.FindAllString(c.Follow(second).Body, -1); len(s) != 1 {
					t.Errorf("after the redirect the page shows %d secrets, want 1", len(s))
				}
				if tc.secret.MatchString(c.Follow(second).Body) {
					t.Error("reloading the page shows the secret again")
				}
			}
			// The same token with other values: refused, nothing written.
			form.Set("name", "Other")
			form.Set("url", "https://9.9.9.22/in")
			form.Set("initial_balance_cents", "8.00")
			if r := c.Post(tc.action, form); r.Status != 409 || tc.count() != before+1 {
				t.Errorf("the token again with other values: %d, %d made; want 409 and nothing", r.Status, tc.count()-before)
			}
		})
	}
}

// TestAFormSentAtOnceWritesOnce sends one rendered key form eight times at
// once (a burst of clicks): one key, and every answer the same redirect.
func TestAFormSentAtOnceWritesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	db := f.env.DB.Writer
	c := webtest.SignedIn(t, f.env)
	keys := "/admin/w/" + f.ws.ID + "/keys"
	page := c.Get(keys)
	tok := formToken.FindStringSubmatch(page.Body)
	if tok == nil {
		t.Fatalf("%s has no token", keys)
	}
	form := url.Values{"csrf": {page.Token()}, "_idem": {tok[1]}, "name": {"Burst"}, "role": {"admin"}}
	before := db.APIKey.Query().Where(apikey.WorkspaceID(f.ws.ID)).CountX(t.Context())
	answers := make([]*webtest.Page, 8)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = c.Post(keys, form) })
	}
	wg.Wait()
	for _, a := range answers {
		if a.Status != 303 || a.Header.Get("Location") != answers[0].Header.Get("Location") {
			t.Errorf("an answer: %d to %q, want the first's 303 to %q", a.Status, a.Header.Get("Location"), answers[0].Header.Get("Location"))
		}
	}
	if n := db.APIKey.Query().Where(apikey.WorkspaceID(f.ws.ID)).CountX(t.Context()) - before; n != 1 {
		t.Fatalf("%d keys made, want 1", n)
	}
}
