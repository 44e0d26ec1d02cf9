package web_test

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// formOf reads a page's form inputs, text areas and selected options, as a browser
// would send them (hidden inputs included, buttons left out).
func formOf(body string) url.Values {
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="(?:text|number|date|hidden)"[^>]*? name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	for _, m := range regexp.MustCompile(`(?s)<textarea[^>]*? name="([^"]+)"[^>]*>(.*?)</textarea>`).FindAllStringSubmatch(body, -1) {
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
	if r := c.PostWithToken(page, page+"/do/send", url.Values{"email": {"false"}}); r.Status != 303 { // a client_name has no address
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
	v.Set("amount_incl_vat_cents", "50.00")
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
	// More than remains: the 409's message, on the form beside the amount.
	v = formOf(c.Get(add).Body)
	v.Set("number", "PAY-2")
	v.Set("status", "completed")
	v.Set("amount_incl_vat_cents", "70.01")
	over := c.PostWithToken(add, add, v)
	if over.Status != 409 || !fieldError("amount_incl_vat_cents", "open balance of €70.00").MatchString(html.UnescapeString(over.Body)) {
		t.Fatalf("over the balance: %d %q\n%s", over.Status, problem(over.Body), over.Body)
	}
	// The same form sent again with another amount: the first answer
	// stands; the form drawn after the refusal carries a new key.
	v.Set("amount_incl_vat_cents", "70.00")
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
		"lines[0].description": {"Boots"}, "lines[0].qty_milli": {"3"}, "lines[0].unit_price_cents": {"80.00"},
		"lines[1].description": {"Laces"}, "lines[1].qty_milli": {"2"}, "lines[1].unit_price_cents": {"3.00"}}))
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
	if v.Get("sales_order_id") != so || v.Get("lines[0].qty_milli") != "3" || v.Get("lines[1].qty_milli") != "2" ||
		!strings.HasPrefix(v.Get("lines[0].order_line_id"), "sol_") || !strings.Contains(form.Body, "Boots · 3 left") {
		t.Fatalf("shipment form: %v", v)
	}
	// Chosen quantities: 1 of the boots, none of the laces.
	v.Set("lines[0].qty_milli", "1")
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
	if v.Get("lines[0].qty_milli") != "2" || v.Get("lines[1].qty_milli") != "2" {
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

// amountsOf reads the amounts a totals answer or a form shows.
func amountsOf(body string) (rows map[string]string, excl, vat, incl string) {
	rows = map[string]string{}
	for _, m := range regexp.MustCompile(`<output id="amount-lines-(\d+)"[^>]*>([^<]*)</output>`).FindAllStringSubmatch(body, -1) {
		rows[m[1]] = m[2]
	}
	get := func(id string) string {
		m := regexp.MustCompile(`id="` + id + `"[^>]*>(?:<strong>)?([^<]*)`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return strings.TrimSpace(m[1])
	}
	return rows, get("total-excl-lines"), get("total-vat-lines"), get("total-incl-lines")
}

// TestLineEditor moves and removes rows, picks items and variants by
// typing, and prices the lines as the API then stores them.
func TestLineEditor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	item := f.env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Walnut desk", "number": "DESK-7", "unit_price_cents": 45000}).JSON(t)["id"].(string)
	prod := f.env.Do(t, "POST", "/v1/products", key, map[string]any{"name": "Linen shirt", "sku": "SHIRT-7", "unit_price_cents": 3900,
		"variant_axes": []any{map[string]any{"code": "size", "values": []string{"S", "M"}}}}).WantStatus(t, 201).JSON(t)
	variant := prod["variants"].([]any)[1].(map[string]any)

	// Typing in a description searches the items and their variants.
	pickURL := w + "/records/sales-orders/pick?field=lines&row=1&" + url.Values{"lines[1].description": {"linen"}}.Encode()
	p := c.Get(pickURL)
	if p.Status != 200 || !strings.Contains(p.Body, `value="pick:lines:1:`+prod["id"].(string)+`:`+variant["id"].(string)+`"`) {
		t.Fatalf("search for linen: %d\n%s", p.Status, p.Body)
	}
	if p := c.Get(w + "/records/invoices/pick?field=lines&row=0&" + url.Values{"lines[0].description": {"walnut"}}.Encode()); !strings.Contains(p.Body, "Walnut desk") {
		t.Fatalf("search for walnut:\n%s", p.Body)
	}
	if p := c.Get(w + "/records/invoices/pick?field=notes&row=0"); p.Status != 400 {
		t.Fatalf("search on a field without items: %d", p.Status)
	}

	// Picking fills the row: item, description, price, a quantity of one
	// and the VAT rate of the line above.
	newInv := w + "/records/invoices/new"
	form := url.Values{"client_name": {"Lines Ltd"}, "currency_code": {"EUR"},
		"lines[0].description": {"Setup"}, "lines[0].qty_milli": {"1"}, "lines[0].unit_price_cents": {"10.00"}, "lines[0].vat_rate_bp": {"20"},
		"lines[1].description": {"walnut"}, "lines[1].qty_milli": {""}, "lines[1].unit_price_cents": {""}, "lines[1].vat_rate_bp": {""},
		"_op": {"pick:lines:1:" + item}}
	p = c.PostWithToken(newInv, w+"/records/invoices", form)
	v := formOf(p.Body)
	if p.Status != 200 || v.Get("lines[1].item_id") != item || v.Get("lines[1].description") != "Walnut desk" ||
		v.Get("lines[1].unit_price_cents") != "450.00" || v.Get("lines[1].qty_milli") != "1" || v.Get("lines[1].vat_rate_bp") != "20" {
		t.Fatalf("after picking the desk: %d %v", p.Status, v)
	}
	if rows, excl, _, incl := amountsOf(p.Body); rows["1"] != "€450.00" || excl != "€460.00" || incl != "€552.00" {
		t.Fatalf("amounts after the pick: %v %s %s", rows, excl, incl)
	}
	// A variant on an order line: its id, SKU and options.
	p = c.PostWithToken(newInv, w+"/records/sales-orders", url.Values{"lines[0].description": {"linen"},
		"_op": {"pick:lines:0:" + prod["id"].(string) + ":" + variant["id"].(string)}})
	v = formOf(p.Body)
	if v.Get("lines[0].variant_id") != variant["id"] || v.Get("lines[0].sku") != variant["sku"] || !strings.HasPrefix(v.Get("lines[0].description"), "Linen shirt – ") ||
		v.Get("lines[0].unit_price_cents") != "39.00" {
		t.Fatalf("after picking a variant: %v", v)
	}
	// Without script: Find shows the matches under the row.
	p = c.PostWithToken(newInv, w+"/records/invoices", url.Values{"lines[0].description": {"walnut"}, "_op": {"find:lines:0"}})
	if !regexp.MustCompile(`(?s)id="picks-lines-0".*?value="pick:lines:0:` + item + `"`).MatchString(p.Body) {
		t.Fatalf("Find without script:\n%s", p.Body)
	}

	// Move and remove rows; nothing is saved meanwhile.
	before := f.env.Get(t, "/v1/invoices?limit=1", key).JSON(t)["meta"].(map[string]any)["total"]
	three := url.Values{"lines[0].description": {"A"}, "lines[1].description": {"B"}, "lines[2].description": {"C"}}
	descs := func(p *webtest.Page) string {
		v := formOf(p.Body)
		var out []string
		for i := 0; v.Has("lines[" + itoa(i) + "].description"); i++ {
			if d := v.Get("lines[" + itoa(i) + "].description"); d != "" {
				out = append(out, d)
			}
		}
		return strings.Join(out, "")
	}
	for _, step := range []struct{ op, want string }{{"up:lines:2", "ACB"}, {"down:lines:0", "BAC"}, {"remove:lines:1", "AC"}, {"up:lines:0", "ABC"}} {
		form := url.Values{}
		for k, x := range three {
			form[k] = x
		}
		form.Set("_op", step.op)
		if got := descs(c.PostWithToken(newInv, w+"/records/invoices", form)); got != step.want {
			t.Errorf("%s: %s, want %s", step.op, got, step.want)
		}
	}
	if n := f.env.Get(t, "/v1/invoices?limit=1", key).JSON(t)["meta"].(map[string]any)["total"]; n != before {
		t.Fatalf("the rows buttons wrote an invoice: %v then %v", before, n)
	}

	// Totals as one types: the API's rounding, then the same numbers stored.
	lines := url.Values{"currency_code": {"EUR"}, "client_name": {"Rounding"},
		"lines[0].description": {"Odd"}, "lines[0].qty_milli": {"1.333"}, "lines[0].unit_price_cents": {"9.99"}, "lines[0].vat_rate_bp": {"5.5"}, "lines[0].discount_bp": {"12.5"},
		"lines[1].description": {""},
		"lines[2].description": {"Even"}, "lines[2].qty_milli": {"2.5"}, "lines[2].unit_price_cents": {"19.99"}, "lines[2].vat_rate_bp": {"20"}}
	tot := c.PostWithToken(newInv, w+"/records/invoices/totals?field=lines", lines)
	rows, excl, vat, incl := amountsOf(tot.Body)
	if tot.Status != 200 || rows["0"] == "" || rows["2"] == "" || rows["1"] != "" {
		t.Fatalf("totals: %d %v\n%s", tot.Status, rows, tot.Body)
	}
	inv := created(t, c.PostWithToken(newInv, w+"/records/invoices", lines))
	var got struct {
		Lines []struct {
			AmountExclVATCents int64 `json:"amount_excl_vat_cents"`
		}
		Excl int64 `json:"amount_excl_vat_cents"`
		VAT  int64 `json:"vat_amount_cents"`
		Incl int64 `json:"amount_incl_vat_cents"`
	}
	f.env.Get(t, "/v1/invoices/"+inv, key).Decode(t, &got)
	money := func(n int64) string { return "€" + webFixed(n) }
	if len(got.Lines) != 2 || rows["0"] != money(got.Lines[0].AmountExclVATCents) || rows["2"] != money(got.Lines[1].AmountExclVATCents) ||
		excl != money(got.Excl) || vat != money(got.VAT) || incl != money(got.Incl) {
		t.Fatalf("the editor said %v %s %s %s; /v1 stored %+v", rows, excl, vat, incl, got)
	}
	// A line the API would refuse: its message, naming the form's row.
	lines.Set("lines[2].qty_milli", "-1")
	tot = c.PostWithToken(newInv, w+"/records/invoices/totals?field=lines", lines)
	if !strings.Contains(tot.Body, "Line 3: ") {
		t.Fatalf("totals of a bad line:\n%s", tot.Body)
	}
	lines.Del("csrf")
	if r := c.Post(w+"/records/invoices/totals?field=lines", lines); r.Status != 403 {
		t.Fatalf("totals without CSRF: %d", r.Status)
	}
}

// webFixed writes cents as the admin pages do in English: 1234567 is 12,345.67.
func webFixed(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n/100, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	s += "." + fmt.Sprintf("%02d", n%100)
	if neg {
		s = "-" + s
	}
	return s
}

// TestDocumentActionsThroughForms runs the actions with a confirmation or
// fields: a quote accepted and turned into an invoice, another declined,
// a credit note issued and applied, a promotion archived; a double submit
// of an action runs it once.
func TestDocumentActionsThroughForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	doc := func(res string, body map[string]any) string {
		body["lines"] = []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 5000}}
		return f.env.Do(t, "POST", "/v1/"+res, key, body).WantStatus(t, 201).JSON(t)["id"].(string)
	}
	act := func(res, id, name string, form url.Values) *webtest.Page {
		page := w + "/records/" + res + "/" + id
		if form == nil {
			form = formOf(c.Get(page + "/do/" + name).Body)
		}
		return c.PostWithToken(page, page+"/do/"+name, form)
	}
	// A quote: send (twice from one page: the second replays the first),
	// accept, invoice.
	q := doc("quotes", map[string]any{"client_name": "Quoted"})
	page := c.Get(w + "/records/quotes/" + q + "/do/send")
	send := regexp.MustCompile(`(?s)action="[^"]*/do/send">.*?name="_idem" value="([^"]+)"`).FindStringSubmatch(page.Body)
	if send == nil {
		t.Fatalf("no Send with a key\n%s", page.Body)
	}
	for i := 0; i < 2; i++ {
		if r := act("quotes", q, "send", url.Values{"_idem": {send[1]}, "email": {"false"}}); r.Status != 303 {
			t.Fatalf("send #%d: %d %q", i+1, r.Status, problem(r.Body))
		}
	}
	if r := act("quotes", q, "send", url.Values{"_idem": {"another"}, "email": {"false"}}); r.Status != 409 {
		t.Fatalf("send with a new key: %d, want the 409", r.Status)
	}
	follow(t, c, act("quotes", q, "accept", url.Values{}))
	got := follow(t, c, act("quotes", q, "invoice", url.Values{}))
	quote := f.env.Get(t, "/v1/quotes/"+q, key).JSON(t)
	if quote["status"] != "invoiced" || quote["invoice_id"] == nil || !strings.Contains(got.Body, quote["invoice_id"].(string)) {
		t.Fatalf("invoiced quote: %v", quote)
	}
	// Decline asks first.
	q2 := doc("quotes", map[string]any{"client_name": "Declined"})
	act("quotes", q2, "send", url.Values{"email": {"false"}})
	if p := c.Get(w + "/records/quotes/" + q2); !strings.Contains(p.Body, `href="`+w+`/records/quotes/`+q2+`/do/decline"`) {
		t.Fatal("decline is not behind a confirmation")
	}
	if p := c.Get(w + "/records/quotes/" + q2 + "/do/decline"); !strings.Contains(p.Body, "cannot be undone") {
		t.Fatal("the decline page does not warn")
	}
	follow(t, c, act("quotes", q2, "decline", nil))
	if s := f.env.Get(t, "/v1/quotes/"+q2, key).JSON(t)["status"]; s != "declined" {
		t.Fatalf("declined quote: %v", s)
	}
	// A credit note: issue, then apply to an invoice named in its form.
	inv := doc("invoices", map[string]any{"client_name": "Credited"})
	f.env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, `{"email":false}`).WantStatus(t, 200)
	crn := doc("credit-notes", map[string]any{"client_name": "Credited"})
	follow(t, c, act("credit-notes", crn, "issue", url.Values{"email": {"false"}}))
	apply := w + "/records/credit-notes/" + crn + "/do/apply"
	if p := c.Get(apply); !strings.Contains(p.Body, `name="invoice_id"`) {
		t.Fatal("apply asks for no invoice")
	}
	bad := act("credit-notes", crn, "apply", url.Values{"invoice_id": {"inv_nothere0000000000000000"}})
	if bad.Status/100 != 4 || problem(bad.Body) == "" && !errorBy(bad.Body, "invoice_id") {
		t.Fatalf("apply to no invoice: %d\n%s", bad.Status, bad.Body)
	}
	got = follow(t, c, act("credit-notes", crn, "apply", url.Values{"invoice_id": {inv}}))
	if !strings.Contains(notice(got.Body), "now applied") {
		t.Fatalf("after apply: %q", notice(got.Body))
	}
	if r := f.env.Get(t, "/v1/invoices/"+inv, key).JSON(t); r["status"] != "paid" {
		t.Fatalf("credited invoice: %v", r["status"])
	}
	// A promotion: archive asks first, then the promotion leaves reads.
	pro := f.env.Do(t, "POST", "/v1/promotions", key, map[string]any{"name": "Gone", "discount_value": 1000}).WantStatus(t, 201).JSON(t)["id"].(string)
	if r := act("promotions", pro, "archive", nil); r.Status != 303 {
		t.Fatalf("archive: %d %q", r.Status, problem(r.Body))
	}
	f.env.Get(t, "/v1/promotions/"+pro, key).WantStatus(t, 404)
}

// TestSubResourceForms adds and edits a client's address and adds a code
// to a promotion, under their parents' pages.
func TestSubResourceForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	anon := webtest.NewClient(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	cli := f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Addressed"}).JSON(t)["id"].(string)
	page := w + "/records/clients/" + cli
	add := page + "/add/addresses"
	p := c.Get(page)
	if !strings.Contains(p.Body, `href="`+add+`"`) {
		t.Fatalf("client page lacks Add address\n%s", p.Body)
	}
	// Related creates carry the client.
	if !strings.Contains(p.Body, html.EscapeString(w+"/records/invoices/new?client_id="+cli)) {
		t.Fatal("client page lacks New invoice for the client")
	}
	if v := formOf(c.Get(w + "/records/invoices/new?client_id=" + cli).Body); v.Get("client_id") != cli {
		t.Fatalf("New invoice for the client: %v", v)
	}
	bad := c.PostWithToken(add, add, url.Values{"name": {"Home"}, "kind": {"home"}})
	if bad.Status != 400 || !errorBy(bad.Body, "kind") {
		t.Fatalf("bad address: %d", bad.Status)
	}
	got := follow(t, c, c.PostWithToken(add, add, url.Values{"name": {"Home"}, "address": {"1 Main St"}, "kind": {"shipping"}, "default_shipping": {"true"}}))
	if notice(got.Body) != "The address is added." {
		t.Fatalf("after adding: %q", notice(got.Body))
	}
	var adrs struct{ Data []map[string]any }
	f.env.Get(t, "/v1/clients/"+cli+"/addresses", key).Decode(t, &adrs)
	if len(adrs.Data) != 1 || adrs.Data[0]["kind"] != "shipping" || adrs.Data[0]["default_shipping"] != true {
		t.Fatalf("addresses through /v1: %v", adrs.Data)
	}
	adr := adrs.Data[0]["id"].(string)
	edit := page + "/sub/addresses/" + adr + "/edit"
	if !strings.Contains(got.Body, `href="`+edit+`"`) {
		t.Fatal("the address has no Edit")
	}
	v := formOf(c.Get(edit).Body)
	v.Del("csrf")
	v.Set("address", "2 Side St")
	if r := c.PostWithToken(edit, page+"/sub/addresses/"+adr, v); r.Status != 303 {
		t.Fatalf("edit address: %d\n%s", r.Status, r.Body)
	}
	f.env.Get(t, "/v1/clients/"+cli+"/addresses", key).Decode(t, &adrs)
	if adrs.Data[0]["address"] != "2 Side St" {
		t.Fatalf("edited address: %v", adrs.Data[0])
	}
	// Under another client, or another workspace's: not found.
	cli2 := f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Other"}).JSON(t)["id"].(string)
	if r := c.Get(w + "/records/clients/" + cli2 + "/sub/addresses/" + adr + "/edit"); r.Status != 404 {
		t.Errorf("address under another client: %d", r.Status)
	}
	other := f.env.Workspace(t, "business", true, true)
	theirs := f.env.Do(t, "POST", "/v1/clients", other.Key, map[string]any{"name": "Theirs"}).JSON(t)["id"].(string)
	if r := c.Get(w + "/records/clients/" + theirs + "/add/addresses"); r.Status != 404 {
		t.Errorf("Add address of another workspace's client: %d", r.Status)
	}
	if r := c.PostWithToken(add, w+"/records/clients/"+theirs+"/add/addresses", url.Values{"name": {"Mine"}}); r.Status != 404 {
		t.Errorf("add an address to another workspace's client: %d", r.Status)
	}
	if r := anon.Get(add); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
		t.Errorf("Add address without a session: %d", r.Status)
	}
	if r := c.Post(add, url.Values{"name": {"No token"}}); r.Status != 403 {
		t.Errorf("add without CSRF: %d", r.Status)
	}
	// A promotion's code; the same code twice is the API's 409, by the form.
	pro := f.env.Do(t, "POST", "/v1/promotions", key, map[string]any{"name": "Codes", "discount_value": 1000}).WantStatus(t, 201).JSON(t)["id"].(string)
	addCode := w + "/records/promotions/" + pro + "/add/promotion-codes"
	follow(t, c, c.PostWithToken(addCode, addCode, url.Values{"code": {"SAVE10"}, "max_uses": {"100"}}))
	dup := c.PostWithToken(addCode, addCode, url.Values{"code": {"save10"}})
	if dup.Status != 409 || !strings.Contains(problem(dup.Body)+dup.Body, "SAVE10") && problem(dup.Body) == "" {
		t.Fatalf("duplicate code: %d %q", dup.Status, problem(dup.Body))
	}
	var codes struct{ Data []map[string]any }
	f.env.Get(t, "/v1/promotions/"+pro+"/codes", key).Decode(t, &codes)
	if len(codes.Data) != 1 || codes.Data[0]["max_uses"].(float64) != 100 {
		t.Fatalf("codes through /v1: %v", codes.Data)
	}
}
