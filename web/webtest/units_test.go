package webtest_test

import (
	"regexp"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestPeoplesUnitsInABrowser types invoices as an owner writes them, at
// 1280 px: qty 3, price 120.00, VAT 20, discount 10 and qty 2.5; a wrong
// quantity is named by its line and kept; a KWD client's invoice at
// 1.250. /v1 then holds the API's integers.
func TestPeoplesUnitsInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	kwd := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Kuwait Co", "currency_code": "KWD"}).WantStatus(t, 201).JSON(t)["id"].(string)

	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")
	w := "/admin/w/" + ws.ID
	if width := evaluate[int](b, `window.innerWidth`); width != 1280 {
		t.Fatalf("the window is %d px wide, want 1280", width)
	}
	errorBy := func(sel string) string {
		return evaluate[string](b, `((document.querySelector(`+jsString(sel)+`) || document.body).closest(".field").querySelector(".error") || {innerText: ""}).innerText`)
	}

	b.open(w + "/records/invoices/new")
	b.fill("#f-client_name", "Units Ltd")
	b.fill("#f-currency_code", "EUR")
	b.fill("#f-lines-0-description", "Design")
	b.fill("#f-lines-0-qty_milli", "3")
	b.fill("#f-lines-0-unit_price_cents", "120.00")
	b.fill("#f-lines-0-vat_rate_bp", "20")
	b.fill("#f-lines-0-discount_bp", "10")
	b.waitTextIn("#total-incl-lines", "€388.80") // 3 × 120.00 − 10 % = 324.00, then 20 % VAT
	if u := b.text(`#f-lines-0-unit_price_cents + .unit`); u != "EUR" {
		t.Fatalf("the price's unit reads %q", u)
	}
	if u := b.text(`#f-lines-0-vat_rate_bp + .unit`); u != "%" {
		t.Fatalf("the VAT rate's unit reads %q", u)
	}
	b.fill("#f-lines-1-description", "Hosting")
	b.fill("#f-lines-1-qty_milli", "2.5555")
	b.fill("#f-lines-1-unit_price_cents", "10")
	b.waitText("Line 2: Quantity must be a number with at most 3 decimals.") // the totals say it as one types
	b.submit(`.actions button[type=submit]:not([name])`)
	b.waitText("The invoice was not saved; see the field marked below.")
	if msg := errorBy("#f-lines-1-qty_milli"); msg != "Line 2: Quantity must be a number with at most 3 decimals." {
		t.Fatalf("by line 2's quantity: %q", msg)
	}
	for sel, typed := range map[string]string{"#f-lines-1-qty_milli": "2.5555", "#f-lines-0-unit_price_cents": "120.00", "#f-lines-0-discount_bp": "10", "#f-client_name": "Units Ltd"} {
		if v := b.value(sel); v != typed {
			t.Fatalf("the refused form shows %s = %q, want %q", sel, v, typed)
		}
	}
	b.fill("#f-lines-1-qty_milli", "2.5")
	b.waitTextIn("#total-incl-lines", "€413.80") // and 2.5 × 10.00 without VAT
	b.submit(`.actions button[type=submit]:not([name])`)
	b.waitText("The invoice is created.")
	inv := regexp.MustCompile(`inv_[0-9a-z]+`).FindString(b.location())
	var got struct {
		Lines []struct {
			QtyMilli       int64 `json:"qty_milli"`
			UnitPriceCents int64 `json:"unit_price_cents"`
			VATRateBP      int64 `json:"vat_rate_bp"`
			DiscountBP     int64 `json:"discount_bp"`
		}
		Incl int64 `json:"amount_incl_vat_cents"`
	}
	env.Get(t, "/v1/invoices/"+inv, ws.Key).WantStatus(t, 200).Decode(t, &got)
	if len(got.Lines) != 2 || got.Lines[0].QtyMilli != 3000 || got.Lines[0].UnitPriceCents != 12000 || got.Lines[0].VATRateBP != 2000 ||
		got.Lines[0].DiscountBP != 1000 || got.Lines[1].QtyMilli != 2500 || got.Lines[1].UnitPriceCents != 1000 || got.Incl != 41380 {
		t.Fatalf("the invoice through /v1: %+v", got)
	}

	// A KWD client's invoice: the form says KWD from the client, 1.250 is 1250 fils.
	b.open(w + "/records/invoices/new?client_id=" + kwd)
	if u := b.text(`#f-lines-0-unit_price_cents + .unit`); u != "KWD" {
		t.Fatalf("the KWD client's price unit reads %q", u)
	}
	b.fill("#f-lines-0-description", "Dates")
	b.fill("#f-lines-0-qty_milli", "1")
	b.fill("#f-lines-0-unit_price_cents", "1.250")
	b.until("the KWD total", `document.querySelector("#total-incl-lines").innerText.replace(/\s+/g, " ").trim() === "KWD 1.250"`) // CLDR's no-break space
	b.submit(`.actions button[type=submit]:not([name])`)
	b.waitText("The invoice is created.")
	kinv := regexp.MustCompile(`inv_[0-9a-z]+`).FindString(b.location())
	k := env.Get(t, "/v1/invoices/"+kinv, ws.Key).WantStatus(t, 200).JSON(t)
	if k["currency_code"] != "KWD" || k["client_id"] != kwd || k["lines"].([]any)[0].(map[string]any)["unit_price_cents"] != 1250.0 {
		t.Fatalf("the KWD invoice through /v1: %v", k)
	}
}
