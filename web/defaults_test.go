package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestDocumentDefaults: a New invoice takes the company's currency, VAT
// rate and payment terms; a picked item its VAT rate (else the company's);
// a line at 0 % VAT is held until the form confirms it.
func TestDocumentDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	f.env.Do(t, "PATCH", "/v1/company", key, map[string]any{"legal_name": "Defaults Ltd", "default_currency": "GBP",
		"default_vat_rate_bp": 2000, "default_payment_terms_days": 30}).WantStatus(t, 200)
	book := f.env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Field guide", "unit_price_cents": 1500, "currency_code": "GBP", "vat_rate_bp": 550}).WantStatus(t, 201).JSON(t)["id"].(string)
	plain := f.env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Plain thing", "unit_price_cents": 1000, "currency_code": "GBP"}).WantStatus(t, 201).JSON(t)["id"].(string)

	newInv := w + "/records/invoices/new"
	p := c.Get(newInv)
	v := formOf(p.Body)
	due := time.Now().UTC().AddDate(0, 0, 30).Format(time.DateOnly)
	if p.Status != 200 || v.Get("currency_code") != "GBP" || v.Get("lines[0].vat_rate_bp") != "20" || v.Get("lines[2].vat_rate_bp") != "20" || v.Get("due_date") != due {
		t.Fatalf("new invoice: %d currency %q VAT %q due %q (want %s)", p.Status, v.Get("currency_code"), v.Get("lines[0].vat_rate_bp"), v.Get("due_date"), due)
	}

	// Picking an item fills its VAT rate; one without a rate, the company's.
	form := url.Values{"client_name": {"Defaults client"}, "currency_code": {"GBP"},
		"lines[0].description": {"guide"}, "lines[0].vat_rate_bp": {"20"},
		"lines[1].description": {"plain"}, "lines[1].vat_rate_bp": {""},
		"_op": {"pick:lines:0:" + book}}
	p = c.PostWithToken(newInv, w+"/records/invoices", form)
	if v = formOf(p.Body); p.Status != 200 || v.Get("lines[0].item_id") != book || v.Get("lines[0].vat_rate_bp") != "5.5" || v.Get("lines[0].unit_price_cents") != "15.00" {
		t.Fatalf("after picking the guide: %d %v", p.Status, v)
	}
	form.Set("_op", "pick:lines:1:"+plain)
	if v = formOf(c.PostWithToken(newInv, w+"/records/invoices", form).Body); v.Get("lines[1].vat_rate_bp") != "20" {
		t.Fatalf("after picking an item without a rate: %v", v)
	}

	// A line at 0 % VAT is held with a notice beside it; nothing is written.
	before := len(f.env.Get(t, "/v1/invoices?limit=100", key).JSON(t)["data"].([]any))
	send := url.Values{"client_name": {"Zero Ltd"}, "currency_code": {"GBP"},
		"lines[0].description": {"Taxed"}, "lines[0].qty_milli": {"1"}, "lines[0].unit_price_cents": {"10.00"}, "lines[0].vat_rate_bp": {"20"},
		"lines[1].description": {"Exempt"}, "lines[1].qty_milli": {"1"}, "lines[1].unit_price_cents": {"5.00"}, "lines[1].vat_rate_bp": {"0"},
		"lines[2].description": {""}, "lines[2].qty_milli": {""}, "lines[2].unit_price_cents": {""}, "lines[2].vat_rate_bp": {"20"}}
	p = c.PostWithToken(newInv, w+"/records/invoices", send)
	if p.Status != 400 || !strings.Contains(p.Body, "Line 2: VAT is 0 % — confirm to save it so.") || strings.Contains(p.Body, "Line 1: VAT") ||
		!strings.Contains(p.Body, `name="_zero_vat"`) || formOf(p.Body).Get("lines[1].description") != "Exempt" {
		t.Fatalf("a 0 %% line was not held: %d\n%s", p.Status, p.Body)
	}
	if n := len(f.env.Get(t, "/v1/invoices?limit=100", key).JSON(t)["data"].([]any)); n != before {
		t.Fatalf("a held form wrote an invoice: %d, was %d", n, before)
	}
	// Confirmed, it is saved as typed; the blank third row (its VAT prefilled) is no line.
	send.Set("_zero_vat", "1")
	p = c.PostWithToken(newInv, w+"/records/invoices", send)
	to := p.Header.Get("Location")
	if p.Status != 303 || !strings.HasSuffix(to, "?done=created") {
		t.Fatalf("confirmed: %d %q\n%s", p.Status, to, p.Body)
	}
	id := strings.TrimSuffix(to[strings.LastIndex(to, "/")+1:], "?done=created")
	inv := f.env.Get(t, "/v1/invoices/"+id, key).JSON(t)
	lines := inv["lines"].([]any)
	if len(lines) != 2 || lines[0].(map[string]any)["vat_rate_bp"] != 2000.0 || lines[1].(map[string]any)["vat_rate_bp"] != 0.0 || inv["currency_code"] != "GBP" {
		t.Fatalf("saved invoice: %v", inv)
	}
	// A client chosen after the form filled in the company's currency has its own.
	usd := f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Dollar Inc", "currency_code": "USD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	fresh := formOf(c.Get(newInv).Body)
	if fresh.Get("_cur_default") != "GBP" {
		t.Fatalf("the form does not say which currency it filled in: %v", fresh)
	}
	fresh.Set("client_id", usd)
	fresh.Set("lines[0].description", "Consulting")
	fresh.Set("lines[0].qty_milli", "1")
	fresh.Set("lines[0].unit_price_cents", "10.00")
	p = c.PostWithToken(newInv, w+"/records/invoices", fresh)
	if to := p.Header.Get("Location"); p.Status != 303 {
		t.Fatalf("the USD client's invoice: %d %q\n%s", p.Status, to, p.Body)
	} else if got := f.env.Get(t, "/v1/invoices/"+strings.TrimSuffix(to[strings.LastIndex(to, "/")+1:], "?done=created"), key).JSON(t); got["currency_code"] != "USD" || got["client_id"] != usd {
		t.Fatalf("the USD client's invoice: %v", got)
	}

	// An edit that leaves the lines alone is not held; one that sends them is.
	edit := w + "/records/invoices/" + id + "/edit"
	ev := formOf(c.Get(edit).Body)
	ev.Set("notes", "Thanks")
	if p := c.PostWithToken(edit, w+"/records/invoices/"+id, ev); p.Status != 303 {
		t.Fatalf("editing the notes: %d\n%s", p.Status, p.Body)
	}
	ev.Set("lines[1].description", "Exempt service")
	if p := c.PostWithToken(edit, w+"/records/invoices/"+id, ev); p.Status != 400 || !strings.Contains(p.Body, "Line 2: VAT is 0 %") {
		t.Fatalf("editing the lines: %d\n%s", p.Status, p.Body)
	}
	if got := f.env.Get(t, "/v1/invoices/"+id, key).JSON(t); got["notes"] != "Thanks" || got["lines"].([]any)[1].(map[string]any)["description"] != "Exempt" {
		t.Fatalf("after the edits: %v", got)
	}
}
