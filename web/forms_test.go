package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var locationID = regexp.MustCompile(`/records/[a-z-]+/([a-z]+_[0-9a-z]+)\?done=`)

// secretPage is the answer of a create that shows a secret once (a gift
// card's code): 201, linking the record's page.
var secretPage = regexp.MustCompile(`(?s)id="new-secret".*class="button" href="[^"]*/records/[a-z-]+/([a-z]+_[0-9a-z]+)"`)

// created follows a create's redirect and returns the record's id.
func created(t *testing.T, p *webtest.Page) string {
	t.Helper()
	if m := secretPage.FindStringSubmatch(p.Body); p.Status == 201 && m != nil {
		return m[1]
	}
	if p.Status != 303 {
		t.Fatalf("create: %d, want 303\n%s", p.Status, p.Body)
	}
	m := locationID.FindStringSubmatch(p.Header.Get("Location"))
	if m == nil {
		t.Fatalf("create redirected to %q", p.Header.Get("Location"))
	}
	return m[1]
}

func TestRecordForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key

	// The list offers New; the form has the declared fields, enums, the
	// required mark and the help text.
	if p := c.Get(w + "/records/clients"); !strings.Contains(p.Body, `href="`+w+`/records/clients/new"`) {
		t.Fatalf("clients list has no New link")
	}
	form := c.Get(w + "/records/clients/new")
	for _, want := range []string{`name="name"`, `name="email"`, `name="currency_code"`, `<option value="fr"`,
		`title="required">*`, "Display name of the client.", `name="active"`} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("client form lacks %s", want)
		}
	}

	// Invalid: the API's message next to the field, nothing written.
	before := f.env.Get(t, "/v1/clients?limit=1", key).JSON(t)["meta"].(map[string]any)["total"]
	bad := c.PostWithToken(w+"/records/clients/new", w+"/records/clients", url.Values{"name": {"Zed"}, "currency_code": {"euro"}})
	if bad.Status != 400 || !regexp.MustCompile(`(?s)name="currency_code".*?class="error" role="alert">[^<]*ISO 4217`).MatchString(bad.Body) {
		t.Fatalf("invalid client: %d, want 400 with the currency's message by its field\n%s", bad.Status, bad.Body)
	}
	if n := f.env.Get(t, "/v1/clients?limit=1", key).JSON(t)["meta"].(map[string]any)["total"]; n != before {
		t.Fatalf("an invalid form wrote a client: %v then %v", before, n)
	}

	// Valid: created through the same operation, read back through /v1.
	cli := created(t, c.PostWithToken(w+"/records/clients/new", w+"/records/clients",
		url.Values{"name": {"Zed & Co"}, "email": {"zed@example.com"}, "currency_code": {"EUR"}, "preferred_language": {"fr"}, "active": {""}}))
	got := f.env.Get(t, "/v1/clients/"+cli, key).JSON(t)
	if got["name"] != "Zed & Co" || got["preferred_language"] != "fr" || got["currency_code"] != "EUR" {
		t.Fatalf("client through /v1: %v", got)
	}
	// The event says an admin made it, not an API key.
	var evs struct {
		Data []struct {
			Type  string
			Actor struct{ Type, ID string }
			Data  struct{ Object struct{ ID string } }
		}
	}
	f.env.Get(t, "/v1/events?limit=100", key).Decode(t, &evs)
	found := false
	for _, e := range evs.Data {
		if e.Type == "client.created" && e.Data.Object.ID == cli {
			found = true
			if e.Actor.Type != "admin" || !strings.HasPrefix(e.Actor.ID, "adm") {
				t.Errorf("client.created by %+v, want the admin", e.Actor)
			}
		}
	}
	if !found {
		t.Errorf("no client.created event for %s", cli)
	}
	if p := c.Get(w + "/records/clients/" + cli + "?done=created"); !strings.Contains(p.Body, "The client is created.") ||
		!strings.Contains(p.Body, `href="`+w+`/records/clients/`+cli+`/edit"`) {
		t.Fatalf("client page after create lacks the notice or Edit\n%s", p.Body)
	}

	// Edit: the form shows the values; a change is saved, a cleared
	// nullable field becomes null.
	edit := c.Get(w + "/records/clients/" + cli + "/edit")
	if !strings.Contains(edit.Body, `value="zed@example.com"`) {
		t.Fatalf("edit form lacks the current email\n%s", edit.Body)
	}
	r := c.PostWithToken(w+"/records/clients/"+cli+"/edit", w+"/records/clients/"+cli,
		url.Values{"name": {"Zed & Co"}, "email": {"billing@zed.example"}, "currency_code": {"EUR"}, "preferred_language": {""}})
	if r.Status != 303 {
		t.Fatalf("edit: %d\n%s", r.Status, r.Body)
	}
	got = f.env.Get(t, "/v1/clients/"+cli, key).JSON(t)
	if got["email"] != "billing@zed.example" || got["preferred_language"] != nil {
		t.Fatalf("edited client through /v1: %v", got)
	}

	// An invoice with two lines, then sent, through the forms.
	if p := c.Get(w + "/records/invoices/new"); !strings.Contains(p.Body, `name="lines[2].qty_milli"`) || !strings.Contains(p.Body, `name="due_date"`) {
		t.Fatalf("invoice form lacks the line editor or the due date")
	}
	more := c.PostWithToken(w+"/records/invoices/new", w+"/records/invoices", url.Values{"_more": {"1"}, "lines[0].description": {"kept"}})
	if more.Status != 200 || !strings.Contains(more.Body, `name="lines[3].description"`) || !strings.Contains(more.Body, `value="kept"`) {
		t.Fatalf("Add lines: %d, want the form with more rows and the typed values", more.Status)
	}
	line := url.Values{"client_id": {cli}, "date": {"2026-11-02"},
		"lines[0].description": {"Design"}, "lines[0].qty_milli": {"2"}, "lines[0].unit_price_cents": {"50.00"}, "lines[0].vat_rate_bp": {"20"},
		"lines[1].description": {"Hosting"}, "lines[1].qty_milli": {"1"}, "lines[1].unit_price_cents": {"15"},
		"lines[2].description": {""}}
	// A bad line: the message sits by that line's field.
	badLine := url.Values{}
	for k, v := range line {
		badLine[k] = v
	}
	badLine.Set("lines[1].qty_milli", "-5")
	bad = c.PostWithToken(w+"/records/invoices/new", w+"/records/invoices", badLine)
	if bad.Status != 400 || !regexp.MustCompile(`(?s)name="lines\[1\]\.qty_milli".*?class="error" role="alert">`).MatchString(bad.Body) {
		t.Fatalf("bad line: %d, want 400 with the message by lines[1].qty_milli\n%s", bad.Status, bad.Body)
	}
	inv := created(t, c.PostWithToken(w+"/records/invoices/new", w+"/records/invoices", line))
	got = f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)
	if got["status"] != "draft" || len(got["lines"].([]any)) != 2 || got["amount_incl_vat_cents"].(float64) != 13500 {
		t.Fatalf("invoice through /v1: %v", got)
	}
	page := c.Get(w + "/records/invoices/" + inv)
	send := w + "/records/invoices/" + inv + "/do/send"
	// Send asks first: whom to email, and whether to.
	if !strings.Contains(page.Body, `href="`+send+`"`) || !strings.Contains(page.Body, `href="`+w+`/records/invoices/`+inv+`/do/void"`) {
		t.Fatalf("draft invoice page lacks Send or Void\n%s", page.Body)
	}
	if strings.Contains(page.Body, "/do/apply") {
		t.Fatal("an invoice shows another resource's action")
	}

	// Without the CSRF token: refused, nothing sent.
	if r := c.Post(send, url.Values{}); r.Status != 403 {
		t.Fatalf("send without CSRF: %d, want 403", r.Status)
	}
	if s := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)["status"]; s != "draft" {
		t.Fatalf("refused send changed the invoice: %v", s)
	}
	r = c.PostWithToken(w+"/records/invoices/"+inv, send, url.Values{"email": {"false"}}) // the client has no address
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "?done=send") {
		t.Fatalf("send: %d %s\n%s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if s := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)["status"]; s != "sent" {
		t.Fatalf("sent invoice through /v1: %v", s)
	}
	page = c.Get(w + "/records/invoices/" + inv + "?done=send")
	if strings.Contains(page.Body, `href="`+send+`"`) || !strings.Contains(page.Body, "The invoice is now sent.") {
		t.Fatalf("sent invoice page still offers Send or lacks the notice\n%s", page.Body)
	}
	// A state the action is not allowed from: the 409's message on the record page.
	r = c.PostWithToken(w+"/records/invoices/"+inv, send, nil)
	if r.Status != 409 || !strings.Contains(html.UnescapeString(r.Body), `class="alert error"`) || !strings.Contains(r.Body, "<h1>") {
		t.Fatalf("send twice: %d, want 409 on the record page\n%s", r.Status, r.Body)
	}
	// A sent invoice still takes notes (only what changed is sent).
	r = c.PostWithToken(w+"/records/invoices/"+inv+"/edit", w+"/records/invoices/"+inv, withValues(valuesOfForm(c.Get(w+"/records/invoices/"+inv+"/edit").Body), "notes", "Thanks!"))
	if r.Status != 303 {
		t.Fatalf("notes on a sent invoice: %d\n%s", r.Status, r.Body)
	}
	if n := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)["notes"]; n != "Thanks!" {
		t.Fatalf("notes through /v1: %v", n)
	}
	// Void asks first, then voids.
	if p := c.Get(w + "/records/invoices/" + inv + "/do/void"); p.Status != 200 || !strings.Contains(p.Body, "cannot be undone") {
		t.Fatalf("void confirmation: %d", p.Status)
	}
	if r := c.PostWithToken(w+"/records/invoices/"+inv+"/do/void", w+"/records/invoices/"+inv+"/do/void", nil); r.Status != 303 {
		t.Fatalf("void: %d\n%s", r.Status, r.Body)
	}
	if s := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)["status"]; s != "void" {
		t.Fatalf("voided invoice through /v1: %v", s)
	}
	if p := c.Get(w + "/records/invoices/" + inv); strings.Contains(p.Body, "/do/") {
		t.Fatal("a void invoice still offers actions")
	}
}

// valuesOfForm reads the inputs of a page's form (text values only).
func valuesOfForm(body string) url.Values {
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="(?:text|number|date)"[^>]*? name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

func withValues(v url.Values, kv ...string) url.Values {
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestRecordFormsRefuse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	other := f.env.Workspace(t, "business", true, true)
	theirs := f.env.Do(t, "POST", "/v1/invoices", other.Key, map[string]any{"client_name": "Theirs",
		"lines": []any{map[string]any{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}}})
	if theirs.Status != 201 {
		t.Fatalf("their invoice: %d %s", theirs.Status, theirs.Body)
	}
	id := theirs.JSON(t)["id"].(string)

	// Another workspace's record is not found here, for reads and writes.
	for _, p := range []string{"/records/invoices/" + id + "/edit", "/records/invoices/" + id + "/do/void"} {
		if r := c.Get(w + p); r.Status != 404 {
			t.Errorf("GET %s of another workspace: %d, want 404", p, r.Status)
		}
	}
	for _, p := range []string{"/records/invoices/" + id, "/records/invoices/" + id + "/do/send", "/records/invoices/" + id + "/do/delete"} {
		if r := c.PostWithToken(w+"/records/invoices", w+p, url.Values{"notes": {"mine now"}}); r.Status != 404 {
			t.Errorf("POST %s of another workspace: %d, want 404\n%s", p, r.Status, r.Body)
		}
	}
	if got := f.env.Get(t, "/v1/invoices/"+id, other.Key).JSON(t); got["status"] != "draft" || got["notes"] == "mine now" {
		t.Fatalf("their invoice changed: %v", got)
	}

	// No session: the way in; no CSRF token: refused.
	anon := webtest.NewClient(t, f.env)
	for _, p := range []string{"/records/invoices/new", "/records/invoices/" + id + "/edit"} {
		if r := anon.Get(w + p); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Errorf("GET %s without a session: %d", p, r.Status)
		}
	}
	if r := anon.Post(w+"/records/clients", url.Values{"name": {"x"}}); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
		t.Errorf("POST without a session: %d", r.Status)
	}
	if r := c.Post(w+"/records/clients", url.Values{"name": {"No token"}}); r.Status != 403 {
		t.Errorf("create without CSRF: %d, want 403", r.Status)
	}
	if n := f.env.Get(t, "/v1/clients?q=No+token", f.ws.Key).JSON(t)["meta"].(map[string]any)["total"]; n != float64(0) {
		t.Errorf("a refused form wrote: %v", n)
	}

	// A resource without writes has no New and no form; a gated one neither.
	if p := c.Get(w + "/records/payments"); strings.Contains(p.Body, "/records/payments/new") {
		t.Error("online payments (read-only) offer New")
	}
	if r := c.Get(w + "/records/payments/new"); r.Status != 404 {
		t.Errorf("payments/new: %d, want 404", r.Status)
	}
	starter := f.env.Workspace(t, "starter", false, false)
	if r := c.Get("/admin/w/" + starter.ID + "/records/clients/new"); r.Status != 404 {
		t.Errorf("clients/new on a starter workspace: %d, want 404", r.Status)
	}
	// Deleting a draft goes through a confirmation and lands on the list.
	mine := f.env.Do(t, "POST", "/v1/invoices", f.ws.Key, map[string]any{"client_name": "Mine",
		"lines": []any{map[string]any{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}}}).JSON(t)["id"].(string)
	del := w + "/records/invoices/" + mine + "/do/delete"
	if p := c.Get(w + "/records/invoices/" + mine); !strings.Contains(p.Body, `href="`+del+`"`) {
		t.Fatal("a draft invoice offers no Delete")
	}
	if r := c.PostWithToken(del, del, nil); r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "/records/invoices?done=deleted") {
		t.Fatalf("delete: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := f.env.Get(t, "/v1/invoices/"+mine, f.ws.Key); r.Status != 404 {
		t.Fatalf("deleted invoice through /v1: %d", r.Status)
	}
}
