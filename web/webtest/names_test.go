package webtest_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestRecordsByNumberAndNameInABrowser follows the links a person sees, at
// desktop and phone widths: the invoices' list links each invoice by its
// number, its page is titled by it and links its client by name, the
// client's page is headed by the name; a paid invoice offers no payment.
func TestRecordsByNumberAndNameInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	cli := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Ltd", "currency_code": "EUR"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli,
		"lines": []map[string]any{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	env.Do(t, "POST", "/v1/invoices/"+id+"/send", key, `{"email":false}`).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+id+"/payments", key, map[string]any{"id": "bank-1", "number": "RCPT-1", "status": "completed",
		"date": "2026-11-10", "amount_incl_vat_cents": 10000}).WantStatus(t, 201)
	w := "/admin/w/" + ws.ID

	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b.t = t
			if width == 390 {
				b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
			} else {
				b.do("laptop viewport", chromedp.EmulateViewport(1280, 900))
			}
			b.open(w + "/records/invoices")
			// The row's link reads the number and lies on the screen, where a tap reaches it.
			link := `#results tbody a[title=` + jsString(id) + `]`
			b.waitVisible(link)
			if got := b.text(link); got != number {
				t.Fatalf("the invoice's link reads %q, want %q", got, number)
			}
			if !evaluate[bool](b, `(() => { const r = document.querySelector(`+jsString(link)+`).getBoundingClientRect();
				return r.width > 0 && r.left >= 0 && r.right <= innerWidth })()`) {
				t.Fatal("the invoice's number is not on the screen")
			}
			b.submit(link)
			b.waitText("Invoice " + number)
			if got := b.text("h1"); got != "Invoice "+number {
				t.Fatalf("the invoice's heading: %q", got)
			}
			if got := evaluate[string](b, `document.title`); got != "Invoice "+number+" · Ledgerbase admin" {
				t.Fatalf("the invoice's title: %q", got)
			}
			// Paid: no payment to record, in any form.
			if evaluate[bool](b, `document.body.innerText.includes("Record invoice payment") || !!document.querySelector('a[href$="/add/invoice-payments"]')`) {
				t.Fatal("a paid invoice offers Record payment")
			}
			b.submit(`.doc-party a[title=` + jsString(cli) + `]`)
			b.waitText("Client Acme Ltd")
			if got := b.text("h1"); got != "Client Acme Ltd" {
				t.Fatalf("the client's heading: %q", got)
			}
		})
	}
}
