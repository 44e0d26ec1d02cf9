package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// messageBy is the error shown in the field of the input named name ("" for none).
func messageBy(body, name string) string {
	for _, field := range strings.Split(body, `<div class="field`)[1:] {
		if strings.Contains(field, `name="`+html.EscapeString(name)+`"`) {
			m := regexp.MustCompile(`class="error" role="alert">([^<]*)<`).FindStringSubmatch(field)
			if m == nil {
				return ""
			}
			return html.UnescapeString(m[1])
		}
	}
	return ""
}

// valueOf is the value an input shows.
func valueOf(body, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(html.EscapeString(name)) + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return "(none)"
	}
	return html.UnescapeString(m[1])
}

// TestFormsTakePeoplesUnits types an invoice as people write it — qty 3,
// price 120.00, VAT 20, discount 10; qty 2.5 — and a KWD client's at
// 1.250, reads the API's integers back through /v1, then the same values
// shown again by the edit forms; refusals name the line and the label,
// keep every value typed and write nothing.
func TestFormsTakePeoplesUnits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID
	key := f.ws.Key
	newInv := w + "/records/invoices/new"
	list := w + "/records/invoices"

	// The form says the unit beside each field, and what to type.
	form := c.Get(newInv)
	for _, want := range []string{`name="lines[0].unit_price_cents" value="" aria-describedby="f-lines-0-unit_price_cents-hint" aria-label="Line 1 unit price"> <span class="unit" aria-hidden="true">EUR</span>`,
		`name="lines[0].vat_rate_bp" value="" aria-describedby="f-lines-0-vat_rate_bp-hint" aria-label="Line 1 VAT rate"> <span class="unit" aria-hidden="true">%</span>`,
		`inputmode="decimal"`, "In EUR, at most 2 decimals, e.g. 120.00."} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("the invoice form lacks %s", want)
		}
	}
	for _, api := range []string{"minor units", "thousandths", "basis points", "(1500 = 1.5)"} {
		if strings.Contains(form.Body, api) {
			t.Errorf("the form still speaks of the API's %s", api)
		}
	}

	eur := url.Values{"client_name": {"Units Ltd"}, "currency_code": {"EUR"}, "date": {"2026-11-02"},
		"lines[0].description": {"Design"}, "lines[0].qty_milli": {"3"}, "lines[0].unit_price_cents": {"120.00"}, "lines[0].vat_rate_bp": {"20"}, "lines[0].discount_bp": {"10"},
		"lines[1].description": {"Hosting"}, "lines[1].qty_milli": {"2.5"}, "lines[1].unit_price_cents": {"10"}, "lines[1].vat_rate_bp": {"5.5"},
		"lines[2].description": {""}}

	// The totals as one types, from the same units.
	tot := c.PostWithToken(newInv, list+"/totals?field=lines", eur)
	// 3 × 120.00 − 10 % = 324.00, VAT 64.80; 2.5 × 10.00 = 25.00, VAT 1.375 → 1.38.
	if rows, excl, vat, incl := amountsOf(tot.Body); rows["0"] != "€324.00" || rows["1"] != "€25.00" || excl != "€349.00" || vat != "€66.18" || incl != "€415.18" {
		t.Fatalf("totals in people's units: %v %s %s %s\n%s", rows, excl, vat, incl, tot.Body)
	}

	// Refused: more decimals than the unit holds, or not a number; every
	// message by its field at once, all that was typed kept, nothing written.
	before := total(t, f.env, key, "invoices")
	bad := with(eur, "lines[0].unit_price_cents", "1.234", "lines[1].qty_milli", "2.5555", "lines[1].vat_rate_bp", "abc")
	r := c.PostWithToken(newInv, list, bad)
	if r.Status != 400 {
		t.Fatalf("refused units: %d, want 400\n%s", r.Status, r.Body)
	}
	for name, want := range map[string]string{
		"lines[0].unit_price_cents": "Line 1: Unit price has at most 2 decimals in EUR.",
		"lines[1].qty_milli":        "Line 2: Quantity must be a number with at most 3 decimals.",
		"lines[1].vat_rate_bp":      "Line 2: VAT rate must be a percentage, such as 20 or 5.5.",
	} {
		if got := messageBy(r.Body, name); got != want {
			t.Errorf("by %s: %q, want %q", name, got, want)
		}
	}
	for name, typed := range map[string]string{"lines[0].unit_price_cents": "1.234", "lines[1].qty_milli": "2.5555", "lines[1].vat_rate_bp": "abc",
		"lines[0].description": "Design", "lines[0].discount_bp": "10", "client_name": "Units Ltd", "date": "2026-11-02"} {
		if got := valueOf(r.Body, name); got != typed {
			t.Errorf("the refused form shows %s = %q, want what was typed, %q", name, got, typed)
		}
	}
	if !strings.Contains(problem(r.Body), "see the fields marked below") {
		t.Errorf("the refused form's banner: %q", problem(r.Body))
	}
	for _, v := range []url.Values{
		with(eur, "lines[0].qty_milli", "-1"),      // below the declaration's bound, in words
		with(eur, "lines[0].vat_rate_bp", "100.5"), // over 100 %
		with(eur, "lines[0].discount_bp", "5,5"),   // a comma is not read as a point
		with(eur, "lines[0].unit_price_cents", "1e3"),
	} {
		if r := c.PostWithToken(newInv, list, v); r.Status != 400 {
			t.Errorf("%v: %d, want 400", v, r.Status)
		}
	}
	// The API's own refusal, by the label and line a person sees.
	missing := with(eur, "lines[1].description", "")
	if msg := messageBy(c.PostWithToken(newInv, list, missing).Body, "lines[1].description"); msg != "Line 2: Description is required." {
		t.Errorf("a line without a description: %q", msg)
	}
	if n := total(t, f.env, key, "invoices"); n != before {
		t.Fatalf("refused forms wrote invoices: %v then %v", before, n)
	}
	if msg := messageBy(c.PostWithToken(newInv, list, with(eur, "lines[0].vat_rate_bp", "100.5")).Body, "lines[0].vat_rate_bp"); msg != "Line 1: VAT rate must be at most 100 %." {
		t.Errorf("over 100 %%: %q", msg)
	}

	// Written: the API's integers.
	inv := created(t, c.PostWithToken(newInv, list, eur))
	var got struct {
		Lines []struct {
			QtyMilli       int64 `json:"qty_milli"`
			UnitPriceCents int64 `json:"unit_price_cents"`
			VATRateBP      int64 `json:"vat_rate_bp"`
			DiscountBP     int64 `json:"discount_bp"`
		}
		Incl int64 `json:"amount_incl_vat_cents"`
	}
	f.env.Get(t, "/v1/invoices/"+inv, key).Decode(t, &got)
	if len(got.Lines) != 2 || got.Lines[0].QtyMilli != 3000 || got.Lines[0].UnitPriceCents != 12000 || got.Lines[0].VATRateBP != 2000 || got.Lines[0].DiscountBP != 1000 ||
		got.Lines[1].QtyMilli != 2500 || got.Lines[1].UnitPriceCents != 1000 || got.Lines[1].VATRateBP != 550 || got.Incl != 41518 {
		t.Fatalf("the invoice through /v1: %+v", got)
	}
	// The edit form shows them back in the same units.
	edit := c.Get(w + "/records/invoices/" + inv + "/edit").Body
	for name, want := range map[string]string{"lines[0].qty_milli": "3", "lines[0].unit_price_cents": "120.00", "lines[0].vat_rate_bp": "20", "lines[0].discount_bp": "10",
		"lines[1].qty_milli": "2.5", "lines[1].unit_price_cents": "10.00", "lines[1].vat_rate_bp": "5.5"} {
		if v := valueOf(edit, name); v != want {
			t.Errorf("edit form: %s = %q, want %q", name, v, want)
		}
	}
	// Saved again as shown: the same integers.
	ev := formOf(edit)
	ev.Del("csrf")
	ev.Set("notes", "Kept")
	if r := c.PostWithToken(w+"/records/invoices/"+inv+"/edit", w+"/records/invoices/"+inv, ev); r.Status != 303 {
		t.Fatalf("edit: %d\n%s", r.Status, r.Body)
	}
	f.env.Get(t, "/v1/invoices/"+inv, key).Decode(t, &got)
	if got.Lines[0].UnitPriceCents != 12000 || got.Lines[1].QtyMilli != 2500 || got.Incl != 41518 {
		t.Fatalf("the invoice after its edit: %+v", got)
	}

	// A KWD client: its invoice's amounts have three decimals; the form
	// says KWD from the client named, with no currency typed.
	kwd := f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Kuwait Co", "currency_code": "KWD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	kform := c.Get(newInv + "?client_id=" + kwd).Body
	if !strings.Contains(kform, `<span class="unit" aria-hidden="true">KWD</span>`) || !strings.Contains(kform, "In KWD, at most 3 decimals, e.g. 120.000.") {
		t.Fatalf("the KWD client's invoice form does not say KWD\n%s", kform)
	}
	kv := url.Values{"client_id": {kwd}, "lines[0].description": {"Dates"}, "lines[0].qty_milli": {"1"}, "lines[0].unit_price_cents": {"1.250"}}
	if msg := messageBy(c.PostWithToken(newInv, list, with(kv, "lines[0].unit_price_cents", "1.2505")).Body, "lines[0].unit_price_cents"); msg != "Line 1: Unit price has at most 3 decimals in KWD." {
		t.Errorf("KWD with four decimals: %q", msg)
	}
	kinv := created(t, c.PostWithToken(newInv, list, kv))
	k := f.env.Get(t, "/v1/invoices/"+kinv, key).JSON(t)
	if k["currency_code"] != "KWD" || k["lines"].([]any)[0].(map[string]any)["unit_price_cents"] != 1250.0 {
		t.Fatalf("the KWD invoice through /v1: %v", k)
	}
	if v := valueOf(c.Get(w+"/records/invoices/"+kinv+"/edit").Body, "lines[0].unit_price_cents"); v != "1.250" {
		t.Errorf("the KWD edit form shows %q", v)
	}
	// A payment of it, under the invoice: in the invoice's KWD.
	f.env.Do(t, "POST", "/v1/invoices/"+kinv+"/send", key, `{"email":false}`).WantStatus(t, 200)
	add := w + "/records/invoices/" + kinv + "/add/invoice-payments"
	pv := formOf(c.Get(add).Body)
	pv.Set("number", "K-1")
	pv.Set("status", "completed")
	pv.Set("amount_incl_vat_cents", "0.5")
	follow(t, c, c.PostWithToken(add, add, pv))
	if k := f.env.Get(t, "/v1/invoices/"+kinv, key).JSON(t); k["paid_cents"] != 500.0 || k["remaining_cents"] != 750.0 {
		t.Fatalf("after a payment of 0.5 KWD: %v", k)
	}

	// A bill's payment, under a JPY bill: whole yen, in the bill's currency.
	bill := f.env.Do(t, "POST", "/v1/bills", key, map[string]any{"vendor_name": "Kyoto Paper", "currency_code": "JPY",
		"lines": []any{map[string]any{"description": "Paper", "qty_milli": 1000, "unit_price_cents": 900}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	f.env.Do(t, "POST", "/v1/bills/"+bill+"/open", key, nil).WantStatus(t, 200)
	addBill := w + "/records/bills/" + bill + "/add/bill-payments"
	bform := c.Get(addBill).Body
	if !strings.Contains(bform, `<span class="unit" aria-hidden="true">JPY</span>`) {
		t.Fatalf("the JPY bill's payment form does not say JPY\n%s", bform)
	}
	bv := formOf(bform)
	bv.Set("amount_incl_vat_cents", "300.5")
	if r := c.PostWithToken(addBill, addBill, bv); r.Status != 400 || messageBy(r.Body, "amount_incl_vat_cents") != "Amount incl VAT has no decimals in JPY." {
		t.Fatalf("a JPY payment with decimals: %d %q", r.Status, messageBy(r.Body, "amount_incl_vat_cents"))
	}
	bv.Set("amount_incl_vat_cents", "300")
	follow(t, c, c.PostWithToken(addBill, addBill, bv))
	if b := f.env.Get(t, "/v1/bills/"+bill, key).JSON(t); b["remaining_cents"] != 600.0 {
		t.Fatalf("the bill after a payment of ¥300: %v", b)
	}

	// JPY has no decimals: 500 is 500; 500.5 is refused.
	jv := url.Values{"client_name": {"Tokyo"}, "currency_code": {"JPY"}, "lines[0].description": {"Tea"}, "lines[0].qty_milli": {"2"}, "lines[0].unit_price_cents": {"500"}}
	if msg := messageBy(c.PostWithToken(newInv, list, with(jv, "lines[0].unit_price_cents", "500.5")).Body, "lines[0].unit_price_cents"); msg != "Line 1: Unit price has no decimals in JPY." {
		t.Errorf("JPY with decimals: %q", msg)
	}
	jinv := created(t, c.PostWithToken(newInv, list, jv))
	if j := f.env.Get(t, "/v1/invoices/"+jinv, key).JSON(t); j["lines"].([]any)[0].(map[string]any)["unit_price_cents"] != 500.0 || j["amount_incl_vat_cents"] != 1000.0 {
		t.Fatalf("the JPY invoice through /v1: %v", j)
	}
}
