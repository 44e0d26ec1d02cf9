package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestPickersWithoutScript picks records by name through the forms as a
// browser without script does: Find answers the matches, a match picks
// the record and fills what it has (the client's currency), a name typed
// and not picked names the one record called so, else is refused by its
// field with the matches offered; the id shows only under Every field.
func TestPickersWithoutScript(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	acme := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Outfitters", "currency_code": "USD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Holdings", "currency_code": "GBP"}).WantStatus(t, 201)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	newInv, list := w+"/records/invoices/new", w+"/records/invoices"

	form := c.Get(newInv)
	for _, want := range []string{`id="f-client_id-q" name="_q.client_id"`, `name="_was.client_id"`, `value="findref:client_id"`,
		`hx-vals="{&#34;_op&#34;:&#34;findref:client_id&#34;}"`, `<summary>Every field</summary>`} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("the New invoice form lacks %s", want)
		}
	}
	if i, j := strings.Index(form.Body, `name="client_id"`), strings.Index(form.Body, `<summary>Every field</summary>`); i < j {
		t.Errorf("the client's id input is not under Every field")
	}
	if strings.Contains(form.Body, `name="lines[0].item_id"`) && strings.Index(form.Body, `name="lines[0].item_id"`) < strings.Index(form.Body, `Every field of the lines`) {
		t.Errorf("a line's item id is in the table, not under Every field")
	}

	// Find: the matches, each a button that picks it.
	found := c.PostWithToken(newInv, list, url.Values{"_q.client_id": {"acme"}, "_was.client_id": {""}, "client_id": {""}, "_op": {"findref:client_id"}})
	if found.Status != 200 || !strings.Contains(found.Body, `value="pickref:client_id:`+acme+`"`) || !strings.Contains(found.Body, "Acme Holdings") {
		t.Fatalf("Find: %d\n%s", found.Status, found.Body)
	}
	if !regexp.MustCompile(`value="pickref:client_id:[^"]+" formnovalidate autofocus`).MatchString(found.Body) {
		t.Error("the first match does not take the focus")
	}
	// Pick: the id, the name in the picker, the client's currency; the
	// focus goes on past the client's name and the currency filled.
	picked := c.PostWithToken(newInv, list, url.Values{"_q.client_id": {"acme"}, "_was.client_id": {""}, "client_id": {""}, "currency_code": {""},
		"_op": {"pickref:client_id:" + acme}})
	v := formOf(picked.Body)
	if picked.Status != 200 || v.Get("client_id") != acme || v.Get("_q.client_id") != "Acme Outfitters" || v.Get("currency_code") != "USD" || v.Get("_was.client_id") != acme {
		t.Fatalf("pick: %d %v", picked.Status, v)
	}
	if !regexp.MustCompile(`id="f-date" name="date" value="[^"]*" autofocus`).MatchString(picked.Body) {
		t.Errorf("after the pick the date does not take the focus")
	}

	// A name typed without picking: the one client called so is taken.
	line := url.Values{"lines[0].description": {"Work"}, "lines[0].qty_milli": {"1"}, "lines[0].unit_price_cents": {"10.00"}}
	typed := with(line, "_q.client_id", "acme outfitters", "_was.client_id", "", "client_id", "")
	id := created(t, c.PostWithToken(newInv, list, typed))
	if got := env.Get(t, "/v1/invoices/"+id, key).JSON(t); got["client_id"] != acme || got["currency_code"] != "USD" {
		t.Fatalf("the typed client's invoice: %v", got)
	}
	// Several or none: refused by the picker, the matches offered, all kept.
	for q, words := range map[string]string{"Acme": "Client: pick the client from the list below.", "Zenith": "Client: no client is called “Zenith”"} {
		r := c.PostWithToken(newInv, list, with(line, "_q.client_id", q, "_was.client_id", "", "client_id", ""))
		if r.Status != 400 || !strings.Contains(html.UnescapeString(r.Body), words) || valueOf(r.Body, "_q.client_id") != q || valueOf(r.Body, "lines[0].description") != "Work" {
			t.Fatalf("%q: %d, want 400 saying %q\n%s", q, r.Status, words, r.Body)
		}
		if q == "Acme" && !strings.Contains(r.Body, `value="pickref:client_id:`+acme+`"`) {
			t.Errorf("the ambiguous name offers no matches")
		}
	}
	// The picker's text cleared: no client (the id it held is dropped).
	edit := w + "/records/invoices/" + id + "/edit"
	ev := formOf(c.Get(edit).Body)
	if ev.Get("_q.client_id") != "Acme Outfitters" || ev.Get("_was.client_id") != acme {
		t.Fatalf("the edit form's picker: %v", ev)
	}
	// On an edit too a pick answers the form with the record picked.
	other := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Bolt Ltd"}).WantStatus(t, 201).JSON(t)["id"].(string)
	if p := formOf(c.PostWithToken(edit, w+"/records/invoices/"+id, with(ev, "_op", "pickref:client_id:"+other)).Body); p.Get("client_id") != other || p.Get("_q.client_id") != "Bolt Ltd" {
		t.Fatalf("a pick on the edit form: %v", p)
	}
	ev.Set("_q.client_id", "")
	ev.Set("client_name", "Walk-in")
	if r := c.PostWithToken(edit, w+"/records/invoices/"+id, ev); r.Status != 303 {
		t.Fatalf("clearing the client: %d\n%s", r.Status, r.Body)
	}
	if got := env.Get(t, "/v1/invoices/"+id, key).JSON(t); got["client_id"] != nil {
		t.Fatalf("the cleared client: %v", got["client_id"])
	}

	// A New shipment's order picked: its lines left to ship become the rows.
	so := env.Do(t, "POST", "/v1/sales-orders", key, map[string]any{"client_id": acme, "lines": []any{
		map[string]any{"description": "Desk", "qty_milli": 3000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/sales-orders/"+so+"/confirm", key, nil).WantStatus(t, 200)
	shps := w + "/records/shipments"
	sp := formOf(c.PostWithToken(shps+"/new", shps, url.Values{"_q.sales_order_id": {""}, "_was.sales_order_id": {""}, "sales_order_id": {""},
		"_op": {"pickref:sales_order_id:" + so}}).Body)
	if sp.Get("sales_order_id") != so || sp.Get("lines[0].qty_milli") != "3" || !strings.HasPrefix(sp.Get("_q.sales_order_id"), "SO-") {
		t.Fatalf("the shipment of the picked order: %v", sp)
	}

	// A category's parent is picked by name too (its declaration names categories).
	root := env.Do(t, "POST", "/v1/categories", key, map[string]any{"name": "Furniture"}).WantStatus(t, 201).JSON(t)["id"].(string)
	cats := w + "/records/categories"
	cat := created(t, c.PostWithToken(cats+"/new", cats, url.Values{"name": {"Desks"}, "_q.parent_id": {"furniture"}, "_was.parent_id": {""}, "parent_id": {""}}))
	if got := env.Get(t, "/v1/categories/"+cat, key).JSON(t); got["parent_id"] != root {
		t.Fatalf("the category's parent: %v", got)
	}
}

// TestCreditNoteOfAnInvoice opens the credit note a "Credit this invoice"
// link opens: the invoice's client, currency and lines, editable.
func TestCreditNoteOfAnInvoice(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	cli := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Kuwait Co", "currency_code": "KWD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	item := env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Dates box", "unit_price_cents": 1250}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli, "lines": []any{
		map[string]any{"item_id": item, "description": "Dates box", "qty_milli": 2500, "unit_price_cents": 1250, "vat_rate_bp": 500, "discount_bp": 1000},
		map[string]any{"description": "Delivery", "qty_milli": 1000, "unit_price_cents": 3000}}}).WantStatus(t, 201).JSON(t)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	crn := w + "/records/credit-notes"

	form := c.Get(crn + "/new?invoice_id=" + inv["id"].(string))
	v := formOf(form.Body)
	for k, want := range map[string]string{"invoice_id": inv["id"].(string), "_q.invoice_id": inv["number"].(string), "client_id": cli, "_q.client_id": "Kuwait Co",
		"currency_code": "KWD", "lines[0].item_id": item, "lines[0].description": "Dates box", "lines[0].qty_milli": "2.5", "lines[0].unit_price_cents": "1.250",
		"lines[0].vat_rate_bp": "5", "lines[0].discount_bp": "10", "lines[1].description": "Delivery", "lines[1].unit_price_cents": "3.000"} {
		if got := v.Get(k); got != want {
			t.Errorf("the credit note's %s = %q, want %q", k, got, want)
		}
	}
	if t.Failed() {
		t.Fatalf("%s", form.Body)
	}
	// Sent as drawn, with the second line lowered: the note of the invoice.
	v.Set("lines[1].unit_price_cents", "1.500")
	id := created(t, c.PostWithToken(crn+"/new?invoice_id="+inv["id"].(string), crn, v))
	got := env.Get(t, "/v1/credit-notes/"+id, key).JSON(t)
	lines := got["lines"].([]any)
	if got["invoice_id"] != inv["id"] || got["client_id"] != cli || got["currency_code"] != "KWD" || len(lines) != 2 ||
		lines[0].(map[string]any)["qty_milli"] != 2500.0 || lines[0].(map[string]any)["unit_price_cents"] != 1250.0 ||
		lines[0].(map[string]any)["discount_bp"] != 1000.0 || lines[1].(map[string]any)["unit_price_cents"] != 1500.0 {
		t.Fatalf("the credit note through /v1: %v", got)
	}
}

// TestEveryRefusalAtOnce sends an invoice wrong in four places: each is
// named by its field, by the label and line a person sees, in one answer,
// with everything typed kept. (The declaration's refusals come at once;
// a rule of the write itself, checked past them, comes on its own.)
func TestEveryRefusalAtOnce(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	newInv, list := w+"/records/invoices/new", w+"/records/invoices"
	r := c.PostWithToken(newInv, list, url.Values{"client_name": {"Units Ltd"}, "date": {"next friday"},
		"lines[0].qty_milli": {"3"}, "lines[0].unit_price_cents": {"120.00"},
		"lines[1].description": {"Hosting"}, "lines[1].qty_milli": {"2.5555"}, "lines[1].unit_price_cents": {"10"},
		"lines[2].description": {"Support"}, "lines[2].qty_milli": {"1"}})
	if r.Status != 400 {
		t.Fatalf("%d, want 400\n%s", r.Status, r.Body)
	}
	for input, want := range map[string]string{
		"date":                      "Date must be a date YYYY-MM-DD.",
		"lines[0].description":      "Line 1: Description is required.",
		"lines[1].qty_milli":        "Line 2: Quantity must be a number with at most 3 decimals.",
		"lines[2].unit_price_cents": "Line 3: Unit price is required.",
	} {
		if got := messageBy(r.Body, input); got != want {
			t.Errorf("by %s: %q, want %q", input, got, want)
		}
	}
	if got := problem(r.Body); got != "The invoice was not saved; see the fields marked below." {
		t.Errorf("the banner: %q", got)
	}
	if !regexp.MustCompile(`id="f-date" name="date" value="next friday" autofocus`).MatchString(r.Body) {
		t.Errorf("the first field refused does not take the focus")
	}
	if valueOf(r.Body, "lines[1].qty_milli") != "2.5555" || valueOf(r.Body, "date") != "next friday" || valueOf(r.Body, "client_name") != "Units Ltd" {
		t.Errorf("the refused form lost what was typed")
	}
}

// TestGiftCardAdjustmentKeepsWhatWasTyped takes off more than a card
// holds: the form answers again with the amount and reason typed and the
// refusal beside the amount (or above the form), not the card's page.
func TestGiftCardAdjustmentKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	cards := w + "/records/gift-cards"
	card := created(t, c.PostWithToken(cards+"/new", cards, url.Values{"initial_balance_cents": {"5.00"}, "currency_code": {"EUR"}}))
	adjust := cards + "/" + card + "/do/adjust"
	r := c.PostWithToken(adjust, adjust, url.Values{"amount_cents": {"-10.00"}, "reason": {"Broken card"}})
	if r.Status != 409 || valueOf(r.Body, "amount_cents") != "-10.00" || valueOf(r.Body, "reason") != "Broken card" || !strings.Contains(r.Body, `action="`+adjust+`"`) {
		t.Fatalf("over the balance: %d\n%s", r.Status, r.Body)
	}
	if msg := messageBy(r.Body, "amount_cents") + problem(r.Body); !strings.Contains(msg, "balance") {
		t.Errorf("the refusal reads %q", msg)
	}
	// Both fields missing: both named at once.
	r = c.PostWithToken(adjust, adjust, url.Values{"amount_cents": {""}, "reason": {""}})
	if r.Status != 400 || messageBy(r.Body, "amount_cents") != "Amount is required." || messageBy(r.Body, "reason") != "Reason is required." {
		t.Fatalf("nothing typed: %d %q %q", r.Status, messageBy(r.Body, "amount_cents"), messageBy(r.Body, "reason"))
	}
}
