package web_test

import (
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// formCase is how a resource's forms are tried: the smallest valid New
// form, one the API refuses with the param it names, and an edit (one
// field changed) with the value /v1 then reads. Every resource with a
// create must have one: a new declaration gets its forms tested.
type formCase struct {
	valid, bad url.Values
	param      string
	edit       [2]string // field, value
	check      func(t *testing.T, got map[string]any)
}

func line(party string) url.Values {
	return url.Values{party: {"Table Co"}, "currency_code": {"EUR"},
		"lines[0].description": {"Work"}, "lines[0].qty_milli": {"1"}, "lines[0].unit_price_cents": {"12.50"}}
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, x := range v {
		out[k] = append([]string(nil), x...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

func formCases(orderID, deliveredID string) map[string]formCase {
	name := url.Values{"name": {"Table Co"}}
	return map[string]formCase{
		"clients": {valid: with(name, "email", "t@example.com"), bad: url.Values{"name": {"  "}}, param: "name", edit: [2]string{"name", "Table Co 2"}},
		"vendors": {valid: name, bad: with(name, "currency_code", "euro"), param: "currency_code", edit: [2]string{"email", "v@example.com"}},
		"items":   {valid: with(name, "unit_price_cents", "9.90"), bad: with(name, "unit_price_cents", "-1"), param: "unit_price_cents", edit: [2]string{"description", "Oak"}},
		"products": {valid: with(name, "brand", "Acme", "variant_axes[0].code", "size", "variant_axes[0].values", "S, M\nL"),
			bad: with(name, "unit_price_cents", "9.999"), param: "unit_price_cents", edit: [2]string{"brand", "Other"},
			check: func(t *testing.T, got map[string]any) {
				if vs, _ := got["variants"].([]any); len(vs) != 3 {
					t.Errorf("a product with an axis of three sizes has variants %v", got["variants"])
				}
			}},
		"categories":   {valid: name, bad: with(name, "sort_order", "first"), param: "sort_order", edit: [2]string{"slug", "tables"}},
		"invoices":     {valid: line("client_name"), bad: with(line("client_name"), "lines[0].qty_milli", "-1"), param: "lines[0].qty_milli", edit: [2]string{"notes", "Edited"}},
		"quotes":       {valid: line("client_name"), bad: with(line("client_name"), "due_date", "soon"), param: "due_date", edit: [2]string{"notes", "Edited"}},
		"credit-notes": {valid: line("client_name"), bad: with(line("client_name"), "lines[0].vat_rate_bp", "100.01"), param: "lines[0].vat_rate_bp", edit: [2]string{"notes", "Edited"}},
		"bills":        {valid: line("vendor_name"), bad: with(line("vendor_name"), "date", "2026-13-01"), param: "date", edit: [2]string{"notes", "Edited"}},
		"sales-orders": {valid: line("client_name"), bad: with(line("client_name"), "lines[0].qty_milli", "0"), param: "lines[0].qty_milli", edit: [2]string{"notes", "Edited"}},
		"stores":       {valid: with(name, "free_address", "table.ledgerbase.shop"), bad: with(name, "free_address", "https://x/y"), param: "free_address", edit: [2]string{"name", "Table Store"}},
		"promotions":   {valid: with(name, "kind", "code", "discount_value", "1500"), bad: with(name, "starts_at", "tomorrow"), param: "starts_at", edit: [2]string{"name", "Table Sale"}},
		"shipments":    {valid: url.Values{"sales_order_id": {orderID}, "carrier": {"DHL"}}, bad: url.Values{"carrier": {"DHL"}}, param: "sales_order_id", edit: [2]string{"carrier", "UPS"}},
		"returns":      {valid: url.Values{"sales_order_id": {deliveredID}, "reason": {"Too big"}}, bad: url.Values{"reason": {"Too big"}}, param: "sales_order_id"},
		"gift-cards":   {valid: url.Values{"initial_balance_cents": {"25.00"}}, bad: url.Values{"initial_balance_cents": {"0"}}, param: "initial_balance_cents"},
	}
}

// elsewhere are the creates whose forms another test tries the same way,
// since their answer or their setup differs.
var elsewhere = map[string]string{
	"gift-cards": "its create answers the code once, not a redirect: TestGiftCardForms",
	"returns":    "it needs a delivered online order: TestReturnForms",
}

// inputName is the name a field's input has in a form ("" for a field
// the form leaves to the API).
func inputName(f resource.Field) string {
	switch f.Type {
	case resource.String, resource.Integer, resource.Boolean, resource.Enum, resource.Date, resource.Time:
		return f.Name
	case resource.Array:
		if len(f.Items) == 1 && f.Items[0].Name == "" {
			return f.Name
		}
		for _, it := range f.Items {
			if it.Type == resource.Array || it.Type == resource.Object || it.Type == resource.Any || it.Type == resource.Ref {
				return ""
			}
		}
		return f.Name + "[0]." + f.Items[0].Name
	}
	return ""
}

// errorBy reports whether the input named name is marked with a message.
func errorBy(body, name string) bool {
	for _, field := range strings.Split(body, `<div class="field`)[1:] {
		if strings.Contains(field, `name="`+html.EscapeString(name)+`"`) {
			return strings.HasPrefix(field, ` invalid"`) && strings.Contains(field, `class="error" role="alert">`)
		}
	}
	return false
}

func total(t *testing.T, env *apitest.Env, key, res string) any {
	t.Helper()
	return env.Get(t, "/v1/"+res+"?limit=1", key).JSON(t)["meta"].(map[string]any)["total"]
}

// TestEveryFormFromDeclarations tries the New and Edit forms of every
// resource with writes: the declared fields, a refusal by its field that
// writes nothing, a create and an edit read back through /v1, another
// workspace's record not found, no session, no CSRF token.
func TestEveryFormFromDeclarations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env, key := f.env, f.ws.Key
	c := webtest.SignedIn(t, env)
	anon := webtest.NewClient(t, env)
	w := "/admin/w/" + f.ws.ID
	other := env.Workspace(t, "business", true, true)
	ow := "/admin/w/" + other.ID
	order := func(ws *apitest.Workspace) string {
		so := env.Do(t, "POST", "/v1/sales-orders", ws.Key, map[string]any{"client_name": "Ship",
			"lines": []any{map[string]any{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}}}).WantStatus(t, 201)
		id := so.JSON(t)["id"].(string)
		env.Do(t, "POST", "/v1/sales-orders/"+id+"/confirm", ws.Key, nil).WantStatus(t, 200)
		return id
	}
	delivered := func(ws *apitest.Workspace) string {
		id, _ := deliveredOrder(t, env, ws, true)
		return id
	}
	cases, theirCases := formCases(order(f.ws), delivered(f.ws)), formCases(order(other), delivered(other))
	for _, r := range resource.All {
		create, ok := r.Op(resource.Create)
		if !ok || r.Parent != nil {
			continue
		}
		if why, ok := elsewhere[r.Name]; ok {
			t.Logf("%s: %s", r.Name, why)
			continue
		}
		tc, ok := cases[r.Name]
		if !ok {
			t.Errorf("%s declares a create but has no form case here", r.Name)
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			list := w + "/records/" + r.Name
			form := c.Get(list + "/new")
			if form.Status != 200 {
				t.Fatalf("New: %d", form.Status)
			}
			for _, fd := range create.Body {
				if n := inputName(fd); n != "" && !strings.Contains(form.Body, `name="`+html.EscapeString(n)+`"`) {
					t.Errorf("New lacks %s", n)
				}
				if fd.Required && inputName(fd) == fd.Name && !regexp.MustCompile(`(?s)for="f-`+fd.Name+`"[^>]*>[^<]*<span class="req"`).MatchString(form.Body) {
					t.Errorf("New does not mark %s required", fd.Name)
				}
			}
			// Refused: the message by its field, nothing written.
			before := total(t, env, key, r.Name)
			bad := c.PostWithToken(list+"/new", list, with(tc.bad))
			if bad.Status != 400 || !errorBy(bad.Body, tc.param) {
				t.Fatalf("bad form: %d, want 400 with the message by %s\n%s", bad.Status, tc.param, bad.Body)
			}
			if n := total(t, env, key, r.Name); n != before {
				t.Fatalf("a refused form wrote: %v then %v", before, n)
			}
			// No CSRF token, no session: refused, nothing written.
			if p := c.Post(list, with(tc.valid)); p.Status != 403 {
				t.Errorf("create without CSRF: %d", p.Status)
			}
			if p := anon.Post(list, with(tc.valid)); p.Status != 303 || p.Header.Get("Location") != "/admin/login" {
				t.Errorf("create without a session: %d %s", p.Status, p.Header.Get("Location"))
			}
			if p := anon.Get(list + "/new"); p.Status != 303 || p.Header.Get("Location") != "/admin/login" {
				t.Errorf("New without a session: %d", p.Status)
			}
			if n := total(t, env, key, r.Name); n != before {
				t.Fatalf("a refused post wrote: %v then %v", before, n)
			}
			// Created, and read back through /v1.
			id := created(t, c.PostWithToken(list+"/new", list, with(tc.valid)))
			got := env.Get(t, "/v1/"+r.Name+"/"+id, key).WantStatus(t, 200).JSON(t)
			for k := range tc.valid {
				if !strings.Contains(k, "[") && got[k] != nil && got[k] != tc.valid.Get(k) && k != "free_address" {
					if _, isNum := got[k].(float64); !isNum {
						t.Errorf("%s through /v1: %v, want %q", k, got[k], tc.valid.Get(k))
					}
				}
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			if _, ok := r.Op(resource.Update); !ok {
				return
			}
			// Edit: the form holds the record; a change reads back through /v1.
			edit := c.Get(list + "/" + id + "/edit")
			if edit.Status != 200 {
				t.Fatalf("Edit: %d", edit.Status)
			}
			v := formOf(edit.Body)
			v.Del("csrf")
			v.Set(tc.edit[0], tc.edit[1])
			if p := c.PostWithToken(list+"/"+id+"/edit", list+"/"+id, with(v)); p.Status != 303 {
				t.Fatalf("edit: %d\n%s", p.Status, p.Body)
			}
			if got := env.Get(t, "/v1/"+r.Name+"/"+id, key).JSON(t)[tc.edit[0]]; got != tc.edit[1] {
				t.Fatalf("%s after the edit: %v", tc.edit[0], got)
			}
			if p := anon.Get(list + "/" + id + "/edit"); p.Status != 303 || p.Header.Get("Location") != "/admin/login" {
				t.Errorf("Edit without a session: %d", p.Status)
			}
			if p := c.Post(list+"/"+id, with(v, tc.edit[0], "no token")); p.Status != 403 {
				t.Errorf("edit without CSRF: %d", p.Status)
			}
			// Another workspace's record: not found here, and unchanged.
			theirs := created(t, c.PostWithToken(ow+"/records/"+r.Name+"/new", ow+"/records/"+r.Name, with(theirCases[r.Name].valid)))
			if p := c.Get(list + "/" + theirs + "/edit"); p.Status != 404 {
				t.Errorf("Edit of another workspace's record: %d", p.Status)
			}
			if p := c.PostWithToken(list+"/new", list+"/"+theirs, with(v, tc.edit[0], "mine now")); p.Status != 404 {
				t.Errorf("edit of another workspace's record: %d", p.Status)
			}
			if got := env.Get(t, "/v1/"+r.Name+"/"+theirs, other.Key).JSON(t)[tc.edit[0]]; got == "mine now" {
				t.Error("another workspace's record was edited")
			}
		})
	}
}

// TestEveryActionFromDeclarations checks every declared action and delete
// against the demo's records in each state: the button shows exactly
// where the declared states allow it; from another state the post is
// the API's 409, shown on the record page, and nothing moves; another
// workspace's record is not found; no CSRF token is refused.
func TestEveryActionFromDeclarations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env, key := f.env, f.ws.Key
	if err := demo.Seed(t.Context(), env.DB, f.ws.ID, demo.Options{Invoices: 40}); err != nil {
		t.Fatal(err)
	}
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + f.ws.ID
	other := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, other.ID, demo.Options{Invoices: 10}); err != nil {
		t.Fatal(err)
	}
	for _, r := range resource.All {
		var ops []resource.Op
		for _, op := range r.Ops {
			if op.Kind == resource.Action || op.Kind == resource.Delete && len(op.From) > 0 {
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			continue
		}
		var states []string
		for _, fl := range r.Filters {
			if fl.Param == "status" {
				states = fl.Values
			}
		}
		t.Run(r.Name, func(t *testing.T) {
			tried := map[string]bool{}
			for _, st := range states {
				var recs struct{ Data []map[string]any }
				env.Get(t, "/v1/"+r.Name+"?limit=1&status="+st, key).Decode(t, &recs)
				if len(recs.Data) == 0 {
					continue
				}
				id := recs.Data[0]["id"].(string)
				page := w + "/records/" + r.Name + "/" + id
				body := c.Get(page).Body
				for _, op := range ops {
					name := op.Name
					if op.Kind == resource.Delete {
						name = "delete"
					}
					at := page + "/do/" + name
					shown := strings.Contains(body, `"`+at+`"`)
					if shown != op.Allowed(st) {
						t.Errorf("%s %s: %s shown %v, declared from %v", st, id, name, shown, op.From)
					}
					if op.Allowed(st) {
						continue
					}
					tried[name] = true
					p := c.PostWithToken(page, at, nil)
					if p.Status != 409 && p.Status != 400 || problem(p.Body) == "" || !strings.Contains(p.Body, "<h1>") {
						t.Errorf("%s from %s: %d, want the 409 on the record page\n%s", name, st, p.Status, problem(p.Body))
					}
					if got := env.Get(t, "/v1/"+r.Name+"/"+id, key).JSON(t)["status"]; got != st {
						t.Errorf("%s from %s moved it to %v", name, st, got)
					}
				}
			}
			// Another workspace's record: not found, for the page and the post.
			var theirs struct{ Data []map[string]any }
			env.Get(t, "/v1/"+r.Name+"?limit=1", other.Key).Decode(t, &theirs)
			if len(theirs.Data) == 0 {
				t.Fatalf("the other workspace has no %s", r.Name)
			}
			tid, tst := theirs.Data[0]["id"].(string), theirs.Data[0]["status"]
			for _, op := range ops {
				name := op.Name
				if op.Kind == resource.Delete {
					name = "delete"
				}
				at := w + "/records/" + r.Name + "/" + tid + "/do/" + name
				if p := c.Get(at); p.Status != 404 {
					t.Errorf("%s page of another workspace's record: %d", name, p.Status)
				}
				if p := c.PostWithToken(w+"/records/"+r.Name, at, nil); p.Status != 404 {
					t.Errorf("%s of another workspace's record: %d", name, p.Status)
				}
				if p := c.Post(at, url.Values{}); p.Status != 403 {
					t.Errorf("%s without CSRF: %d", name, p.Status)
				}
			}
			if got := env.Get(t, "/v1/"+r.Name+"/"+tid, other.Key).JSON(t)["status"]; got != tst {
				t.Errorf("another workspace's record moved from %v to %v", tst, got)
			}
			// The demo has records in enough states that each document's
			// refusals are tried (a promotion's archive is allowed from all).
			if len(states) > 0 && len(tried) == 0 && !slices.ContainsFunc(ops, func(o resource.Op) bool { return len(o.From) == len(states) }) {
				t.Errorf("no %s in a state that refuses an action", r.Name)
			}
			t.Logf("refusals tried: %v", tried)
		})
	}
}
