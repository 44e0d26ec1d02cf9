package web_test

import (
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// labelOf is the field a list links, as the test reads the declaration:
// the first of number, name, code_last4 and provider_ref a record has.
func labelOf(rec map[string]any) string {
	for _, k := range []string{"number", "name", "code_last4", "provider_ref"} {
		if _, ok := rec[k]; ok {
			return k
		}
	}
	return ""
}

// Every list links each row by what people call it — an invoice's number,
// an item's SKU, a client's name — to the record's page, the id only in
// the link's title, and the id column is no second link beside it.
func TestListsLinkNumbersAndNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	cli := f.env.Do(t, "POST", "/v1/clients", f.ws.Key, map[string]any{"name": "Acme & Sons Ltd", "currency_code": "EUR"}).
		WantStatus(t, 201).JSON(t)["id"].(string)
	f.env.Do(t, "POST", "/v1/items", f.ws.Key, map[string]any{"number": "SKU-WALNUT-1", "name": "Walnut desk", "unit_price_cents": 48000}).
		WantStatus(t, 201)
	named := 0
	for _, r := range resource.All {
		if _, ok := r.Op(resource.List); !ok || r.Table == "" || r.Parent != nil {
			continue
		}
		var res struct{ Data []map[string]any }
		f.env.Get(t, "/v1/"+r.Name+"?limit=25", f.ws.Key).WantStatus(t, 200).Decode(t, &res)
		p := c.Get(w + "/records/" + r.Name)
		if p.Status != 200 {
			t.Fatalf("%s: %d", r.Name, p.Status)
		}
		for _, rec := range res.Data {
			id := rec["id"].(string)
			href := `href="` + w + "/records/" + r.Name + "/" + url.PathEscape(id) + `"`
			name, _ := rec[labelOf(rec)].(string)
			if name == "" {
				if !strings.Contains(p.Body, href+` class="mono">`+id+`</a>`) {
					t.Errorf("%s: %s has no name and its id is no link", r.Name, id)
				}
				continue
			}
			named++
			if !strings.Contains(p.Body, href+` title="`+id+`">`+html.EscapeString(name)+`</a>`) {
				t.Errorf("%s: %s is not linked by %q", r.Name, id, name)
			}
			if strings.Contains(p.Body, href+` class="mono">`) {
				t.Errorf("%s: %s is linked by its id beside its name", r.Name, id)
			}
		}
	}
	if named < 15 {
		t.Fatalf("only %d rows linked by a name", named)
	}
	for page, want := range map[string]string{
		w + "/records/clients": `title="` + cli + `">Acme &amp; Sons Ltd</a>`,
		w + "/records/items":   `>SKU-WALNUT-1</a>`,
	} {
		if !strings.Contains(c.Get(page).Body, want) {
			t.Errorf("%s does not link %s", page, want)
		}
	}
}

// A record's page is titled and headed by its number or name; the id
// stays beside, for whoever calls the API.
func TestRecordPagesNameTheRecord(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	cli := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Ltd", "currency_code": "EUR"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli,
		"lines": []map[string]any{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	for page, want := range map[string][]string{
		w + "/records/clients/" + cli: {"<title>Client Acme Ltd · ", "<h1>Client Acme Ltd</h1>", `<span class="mono">` + cli + `</span>`},
		w + "/records/invoices/" + id: {"<title>Invoice " + number + " · ", "<h1>Invoice " + number + "</h1>", `<span class="mono">` + id + `</span>`},
	} {
		p := c.Get(page)
		for _, s := range want {
			if !strings.Contains(p.Body, s) {
				t.Errorf("%s does not have %q", page, s)
			}
		}
		if strings.Contains(p.Body, "<title>Client "+cli) || strings.Contains(p.Body, "<title>Invoice "+id) {
			t.Errorf("%s is titled by its id", page)
		}
	}
	// The invoices' list names the invoice by number and the client by
	// name, each linked to its page.
	p := c.Get(w + "/records/invoices")
	if !strings.Contains(p.Body, `title="`+id+`">`+number+`</a>`) {
		t.Error("the invoices' list does not link the invoice by number")
	}
	if !strings.Contains(p.Body, `href="`+w+`/records/clients/`+cli+`" title="`+cli+`">Acme Ltd</a>`) {
		t.Error("the invoices' list does not link the client by name")
	}
}

// A paid invoice offers no "Record payment" (the API would take no
// payment above what remains), nor does a void one; a sent one does.
func TestSettledInvoiceOffersNoPayment(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	newSent := func() string {
		id := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_name": "Payer", "currency_code": "EUR",
			"lines": []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)["id"].(string)
		env.Do(t, "POST", "/v1/invoices/"+id+"/send", key, `{"email":false}`).WantStatus(t, 200)
		return id
	}
	paid, void, open := newSent(), newSent(), newSent()
	env.Do(t, "POST", "/v1/invoices/"+paid+"/payments", key, map[string]any{"id": "bank-1", "number": "RCPT-1", "status": "completed",
		"date": "2026-11-10", "amount_incl_vat_cents": 10000}).WantStatus(t, 201)
	if st := env.Get(t, "/v1/invoices/"+paid, key).JSON(t)["status"]; st != "paid" {
		t.Fatalf("paid invoice: %v", st)
	}
	env.Do(t, "POST", "/v1/invoices/"+void+"/void", key, nil).WantStatus(t, 200)
	for id, offers := range map[string]bool{paid: false, void: false, open: true} {
		page := w + "/records/invoices/" + id
		p := c.Get(page)
		has := strings.Contains(p.Body, `href="`+page+`/add/invoice-payments"`) || strings.Contains(text(p.Body), "Record invoice payment")
		if has != offers {
			t.Errorf("%s: Record payment offered %v, want %v", id, has, offers)
		}
	}
}

// Edit is offered where the declared edit allows the record's state, the
// rule /v1 refuses by: not on a void invoice or a cancelled order.
func TestEditOnlyWhereTheStateAllows(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	lines := []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}
	inv := func() string {
		return env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_name": "Payer", "lines": lines}).WantStatus(t, 201).JSON(t)["id"].(string)
	}
	sent, void := inv(), inv()
	env.Do(t, "POST", "/v1/invoices/"+sent+"/send", key, `{"email":false}`).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+void+"/void", key, nil).WantStatus(t, 200)
	so := env.Do(t, "POST", "/v1/sales-orders", key, map[string]any{"client_name": "Buyer", "lines": lines}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/sales-orders/"+so+"/cancel", key, nil).WantStatus(t, 200)
	for path, offers := range map[string]bool{"invoices/" + sent: true, "invoices/" + void: false, "sales-orders/" + so: false} {
		page := w + "/records/" + path
		if has := strings.Contains(c.Get(page).Body, `href="`+page+`/edit"`); has != offers {
			t.Errorf("%s: Edit offered %v, want %v", path, has, offers)
		}
		// /v1 answers by the same rule.
		want := 200
		if !offers {
			want = 409
		}
		env.Do(t, "PATCH", "/v1/"+path, key, map[string]any{"notes": "Later"}).WantStatus(t, want)
	}
}

// A confirmation asks about the record by its number.
func TestConfirmationNamesTheRecord(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, map[string]any{"client_name": "Payer",
		"lines": []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	c := webtest.SignedIn(t, env)
	p := c.Get("/admin/w/" + ws.ID + "/records/invoices/" + id + "/do/void")
	for _, s := range []string{"<title>Void invoice " + number + "? · ", "<h1>Void invoice " + number + "?</h1>", "← Invoice " + number + "</a>"} {
		if !strings.Contains(p.Body, s) {
			t.Errorf("the confirmation does not have %q", s)
		}
	}
}
