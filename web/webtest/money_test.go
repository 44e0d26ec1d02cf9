package webtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// shown is the page's text as a person reads it: runs of spaces (no-break
// ones included) as one.
func (b *tab) shown() string {
	b.t.Helper()
	return evaluate[string](b, `document.body.innerText.replace(/\s+/g, " ")`)
}

// Amounts read in their currency's unit in the browser: a JPY invoice with
// no decimals, a KWD one with three, on the record page, its list and the
// dashboard; its print view is one sheet without the admin's chrome when
// printed, right to left in Arabic.
func TestAmountsInTheirCurrencysUnitInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	mk := func(cur, lang string, price int64) (string, string) {
		cli := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": cur + " client", "currency_code": cur, "preferred_language": lang}).
			WantStatus(t, 201).JSON(t)["id"].(string)
		inv := env.Do(t, "POST", "/v1/invoices", ws.Key, map[string]any{"client_id": cli, "date": "2026-11-02", "due_date": "2026-12-02",
			"lines": []map[string]any{{"description": "Tea", "qty_milli": 2500, "unit_price_cents": price, "vat_rate_bp": 1000}}}).WantStatus(t, 201).JSON(t)
		env.Do(t, "POST", "/v1/invoices/"+inv["id"].(string)+"/send", ws.Key, nil).WantStatus(t, 200)
		return inv["id"].(string), inv["number"].(string)
	}
	jpy, _ := mk("JPY", "en", 1234)     // 2.5 × ¥1,234 = ¥3,085, VAT ¥309 (308.5 rounded half away from zero)
	kwd, kwdNo := mk("KWD", "ar", 1234) // 2.5 × KWD 1.234 = KWD 3.085, VAT KWD 0.309 (0.3085 rounded)

	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")
	w := "/admin/w/" + ws.ID

	b.open(w + "/records/invoices/" + jpy)
	b.waitText("Remaining")
	for _, s := range []string{"Tea 2.5 ¥1,234 10 % ¥3,085 ¥309 ¥3,394", "Total ¥3,394", "Remaining ¥3,394"} {
		if got := b.shown(); !strings.Contains(got, s) {
			t.Errorf("the JPY invoice does not read %q:\n%s", s, got)
		}
	}
	b.open(w + "/records/invoices/" + kwd)
	b.waitText("Remaining")
	for _, s := range []string{"Tea 2.5 KWD 1.234 10 % KWD 3.085 KWD 0.309 KWD 3.394", "Total KWD 3.394"} {
		if got := b.shown(); !strings.Contains(got, s) {
			t.Errorf("the KWD invoice does not read %q:\n%s", s, got)
		}
	}
	b.open(w + "/records/invoices")
	b.waitText(kwdNo)
	if got := b.shown(); !strings.Contains(got, "¥3,394") || !strings.Contains(got, "KWD 3.394") || strings.Contains(got, "3,394.00") || strings.Contains(got, "33.94") {
		t.Errorf("the invoice list does not show each amount in its currency's unit:\n%s", got)
	}
	b.open(w)
	b.waitText("Open")
	if got := b.shown(); !strings.Contains(got, "Open ¥3,394 · KWD 3.394") {
		t.Errorf("the dashboard does not sum each currency in its unit:\n%s", got)
	}

	// The print view, as printed: the sheet alone, right to left, KWD in three decimals.
	b.open(w + "/records/invoices/" + kwd + "/print")
	b.waitText(kwdNo)
	b.do("print media", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		return err
	}))
	if got := evaluate[string](b, `getComputedStyle(document.querySelector(".screen-only")).display + " " + getComputedStyle(document.documentElement).direction`); got != "none rtl" {
		t.Errorf("printed, the bar and the direction are %q; want the bar hidden, right to left", got)
	}
	if got := b.shown(); !strings.Contains(got, "فاتورة") || !strings.Contains(got, "3.394 KWD") || strings.Contains(got, "Back to the record") {
		t.Errorf("the printed sheet reads:\n%s", got)
	}
}
