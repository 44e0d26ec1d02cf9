package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// formOf reads a page's form inputs and selected options, as a browser
// would send them (hidden inputs included, buttons left out).
func formOf(body string) url.Values {
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="(?:text|number|date|hidden)"[^>]*? name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	for _, m := range regexp.MustCompile(`(?s)<select[^>]*? name="([^"]+)"[^>]*>(.*?)</select>`).FindAllStringSubmatch(body, -1) {
		if o := regexp.MustCompile(`<option value="([^"]*)" selected`).FindStringSubmatch(m[2]); o != nil {
			v.Set(html.UnescapeString(m[1]), html.UnescapeString(o[1]))
		}
	}
	return v
}

// notice is a page's success message.
func notice(body string) string {
	m := regexp.MustCompile(`class="alert success" role="status">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func problem(body string) string {
	m := regexp.MustCompile(`class="alert error" role="alert">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// follow answers a form post's redirect with the page it leads to.
func follow(t *testing.T, c *webtest.Client, p *webtest.Page) *webtest.Page {
	t.Helper()
	if p.Status != 303 {
		t.Fatalf("post: %d, want 303\n%s", p.Status, p.Body)
	}
	return c.Get(p.Header.Get("Location"))
}

// TestPayAnInvoiceThroughForms records a partial payment, then the rest,
// from the invoice's page, and reads the same through /v1.
func TestPayAnInvoiceThroughForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	inv := f.env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_name": "Payer", "currency_code": "EUR",
		"lines": []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000, "vat_rate_bp": 2000}}}).JSON(t)["id"].(string)
	page := w + "/records/invoices/" + inv
	add := page + "/add/invoice-payments"
	// A draft invoice takes no payment: no button, and the form's post is refused.
	if p := c.Get(page); strings.Contains(p.Body, add) {
		t.Fatal("a draft invoice offers Record payment")
	}
	if r := c.PostWithToken(page, page+"/do/send", nil); r.Status != 303 {
		t.Fatalf("send: %d", r.Status)
	}
	p := c.Get(page)
	if !strings.Contains(p.Body, `href="`+add+`"`) {
		t.Fatalf("a sent invoice offers no Record payment\n%s", p.Body)
	}
	form := c.Get(add)
	v := formOf(form.Body)
	if !strings.HasPrefix(v.Get("id"), "ipay_") || v.Get("date") == "" || v.Get("_idem") == "" {
		t.Fatalf("payment form defaults: %v", v)
	}
	// Invalid: the API's message by the field, nothing recorded.
	v.Set("number", "PAY-1")
	v.Set("status", "completed")
	v.Set("amount_incl_vat_cents", "-1")
	bad := c.PostWithToken(add, add, v)
	if bad.Status != 400 || !regexp.MustCompile(`(?s)name="amount_incl_vat_cents".*?class="error" role="alert">`).MatchString(bad.Body) {
		t.Fatalf("bad amount: %d\n%s", bad.Status, bad.Body)
	}
	v.Set("amount_incl_vat_cents", "5000")
	got := follow(t, c, c.PostWithToken(add, add, v))
	if n := notice(got.Body); n != "The invoice payment is recorded. The invoice is now partially paid." {
		t.Fatalf("after a partial payment: %q", n)
	}
	// The same form sent again (a double submit) records nothing more.
	again := c.PostWithToken(add, add, v)
	if again.Status != 303 {
		t.Fatalf("the same payment again: %d\n%s", again.Status, again.Body)
	}
	rec := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)
	if rec["status"] != "partially_paid" || rec["remaining_cents"].(float64) != 7000 {
		t.Fatalf("after one payment through /v1: %v", rec)
	}
	// More than remains: the 409's message, on the form.
	v = formOf(c.Get(add).Body)
	v.Set("number", "PAY-2")
	v.Set("status", "completed")
	v.Set("amount_incl_vat_cents", "7001")
	over := c.PostWithToken(add, add, v)
	if over.Status != 409 || !strings.Contains(problem(over.Body), "open balance") {
		t.Fatalf("over the balance: %d %q", over.Status, problem(over.Body))
	}
	// The same form sent again with another amount: the first answer
	// stands; the form drawn after the refusal carries a new key.
	v.Set("amount_incl_vat_cents", "7000")
	if r := c.PostWithToken(add, add, v); r.Status != 409 || !strings.Contains(problem(r.Body), "already sent with other values") {
		t.Fatalf("a key reused for another amount: %d %q", r.Status, problem(r.Body))
	}
	v.Set("_idem", formOf(over.Body).Get("_idem"))
	got = follow(t, c, c.PostWithToken(add, add, v))
	if n := notice(got.Body); !strings.Contains(n, "now paid") {
		t.Fatalf("after the rest: %q", n)
	}
	rec = f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t)
	if rec["status"] != "paid" || rec["remaining_cents"].(float64) != 0 || rec["paid_cents"].(float64) != 12000 {
		t.Fatalf("paid invoice through /v1: %v", rec)
	}
	var pays struct{ Data []map[string]any }
	f.env.Get(t, "/v1/invoices/"+inv+"/payments", key).Decode(t, &pays)
	if len(pays.Data) != 2 {
		t.Fatalf("payments through /v1: %v", pays.Data)
	}
}

// TestShipAnOrderThroughForms confirms an order made through its form and
// ships it in two shipments: the form offers the order's lines with what
// is left of each; then moves a shipment forward and adds a tracking event.
func TestShipAnOrderThroughForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	so := created(t, c.PostWithToken(w+"/records/sales-orders/new", w+"/records/sales-orders", url.Values{
		"client_name": {"Shipper"}, "currency_code": {"EUR"},
		"lines[0].description": {"Boots"}, "lines[0].qty_milli": {"3000"}, "lines[0].unit_price_cents": {"8000"},
		"lines[1].description": {"Laces"}, "lines[1].qty_milli": {"2000"}, "lines[1].unit_price_cents": {"300"}}))
	page := w + "/records/sales-orders/" + so
	newShp := w + "/records/shipments/new?sales_order_id=" + so
	if p := c.Get(page); strings.Contains(p.Body, html.EscapeString(newShp)) {
		t.Fatal("a draft order offers New shipment")
	}
	got := follow(t, c, c.PostWithToken(page, page+"/do/confirm", nil))
	if !strings.Contains(notice(got.Body), "now confirmed") || !strings.Contains(got.Body, html.EscapeString(newShp)) {
		t.Fatalf("confirmed order page: %q\n%s", notice(got.Body), got.Body)
	}
	// The form: the order, and a row per line with all that is left.
	form := c.Get(newShp)
	v := formOf(form.Body)
	if v.Get("sales_order_id") != so || v.Get("lines[0].qty_milli") != "3000" || v.Get("lines[1].qty_milli") != "2000" ||
		!strings.HasPrefix(v.Get("lines[0].order_line_id"), "sol_") || !strings.Contains(form.Body, "Boots") {
		t.Fatalf("shipment form: %v", v)
	}
	// Chosen quantities: 1 of the boots, none of the laces.
	v.Set("lines[0].qty_milli", "1000")
	v.Del("lines[1].order_line_id")
	v.Del("lines[1].qty_milli")
	v.Set("carrier", "DHL")
	shp1 := created(t, c.PostWithToken(newShp, w+"/records/shipments", v))
	order := f.env.Get(t, "/v1/sales-orders/"+so, key).JSON(t)
	if order["status"] != "partially_shipped" {
		t.Fatalf("after the first shipment: %v", order["status"])
	}
	// The second offers what remains, and ships it all.
	v = formOf(c.Get(newShp).Body)
	if v.Get("lines[0].qty_milli") != "2000" || v.Get("lines[1].qty_milli") != "2000" {
		t.Fatalf("second shipment form: %v", v)
	}
	created(t, c.PostWithToken(newShp, w+"/records/shipments", v))
	order = f.env.Get(t, "/v1/sales-orders/"+so, key).JSON(t)
	if order["status"] != "shipped" {
		t.Fatalf("after the second shipment: %v", order["status"])
	}
	if p := c.Get(page); strings.Contains(p.Body, html.EscapeString(newShp)) {
		t.Fatal("a shipped order still offers New shipment")
	}

	// Forward only: in transit, then delivered; no way back.
	sp := w + "/records/shipments/" + shp1
	p := c.Get(sp)
	if !strings.Contains(p.Body, `action="`+sp+`/do/to-in_transit"`) || !strings.Contains(p.Body, `action="`+sp+`/do/to-delivered"`) {
		t.Fatalf("shipped shipment lacks its steps\n%s", p.Body)
	}
	got = follow(t, c, c.PostWithToken(sp, sp+"/do/to-in_transit", nil))
	if !strings.Contains(notice(got.Body), "now in transit") || strings.Contains(got.Body, "/do/to-in_transit") {
		t.Fatalf("after in transit: %q", notice(got.Body))
	}
	if r := c.PostWithToken(sp, sp+"/do/to-shipped", nil); r.Status != 409 || problem(r.Body) == "" {
		t.Fatalf("a step back: %d %q", r.Status, problem(r.Body))
	}
	// A tracking event, under the shipment.
	add := sp + "/add/shipment-events"
	if !strings.Contains(c.Get(sp).Body, `href="`+add+`"`) {
		t.Fatal("no Add tracking event")
	}
	bad := c.PostWithToken(add, add, url.Values{"status": {"in_transit"}, "occurred_at": {"yesterday"}})
	if bad.Status != 400 || !regexp.MustCompile(`(?s)name="occurred_at".*?class="error" role="alert">`).MatchString(bad.Body) {
		t.Fatalf("bad event: %d\n%s", bad.Status, bad.Body)
	}
	got = follow(t, c, c.PostWithToken(add, add, url.Values{"status": {"in_transit"}, "description": {"At the hub"}, "occurred_at": {"2026-11-03T10:00:00Z"}}))
	if !strings.HasPrefix(notice(got.Body), "The tracking event is added.") || !strings.Contains(got.Body, "At the hub") {
		t.Fatalf("after the event: %q", notice(got.Body))
	}
	got = follow(t, c, c.PostWithToken(sp, sp+"/do/to-delivered", nil))
	if !strings.Contains(notice(got.Body), "now delivered") {
		t.Fatalf("after delivered: %q", notice(got.Body))
	}
	s := f.env.Get(t, "/v1/shipments/"+shp1, key).JSON(t)
	if s["status"] != "delivered" || s["carrier"] != "DHL" || len(s["events"].([]any)) != 1 {
		t.Fatalf("shipment through /v1: %v", s)
	}
}
