package webtest_test

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ledgerbase/ledgerbase/ent/creditnote"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestListsInABrowser works a list as an owner does, at 1280 and 390 px:
// sorts the invoices by their amount (by the header, and by keyboard, on
// a laptop; with "Sort by" on a phone, where the headers are hidden) in
// /v1's order, searches every record type for a client, opens its
// statement and reads its running balance, and exports the sorted list as
// CSV, which re-reads with /v1's values.
func TestListsInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 60, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	// A client with a statement this year: 1,000.00 invoiced last year with
	// 400.00 paid then; this year 250.00 invoiced, 50.00 credited, 100.00 paid.
	year := time.Now().UTC().Year()
	last, this := strconv.Itoa(year-1), strconv.Itoa(year)
	db := env.DB.Writer
	cli := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Zephyrine Statement Ltd", "email": "ap@zephyrine.test"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := func(number, date string, incl, paid int64) string {
		i, err := db.Invoice.Create().SetWorkspaceID(ws.ID).SetNumber(number).SetDate(date).SetCurrencyCode("EUR").SetClientID(cli).
			SetClientName("Zephyrine Statement Ltd").SetAmountInclVatCents(incl).SetPaidCents(paid).SetRemainingCents(incl - paid).
			SetStatus(invoice.StatusPartiallyPaid).Save(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return i.ID
	}
	pay := func(invID, ext, date string, amount int64) {
		if err := db.InvoicePayment.Create().SetWorkspaceID(ws.ID).SetInvoiceID(invID).SetExternalID(ext).SetNumber(strings.ToUpper(ext)).
			SetDate(date).SetCurrencyCode("EUR").SetClientID(cli).SetAmountInclVatCents(amount).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	pay(inv("ZS-1", last+"-06-10", 100000, 40000), "zs-pay-1", last+"-06-20", 40000)
	pay(inv("ZS-2", this+"-01-05", 25000, 10000), "zs-pay-2", this+"-01-20", 10000)
	if err := db.CreditNote.Create().SetWorkspaceID(ws.ID).SetNumber("ZS-CN-1").SetDate(this + "-01-10").SetCurrencyCode("EUR").
		SetClientID(cli).SetClientName("Zephyrine Statement Ltd").SetAmountInclVatCents(5000).SetStatus(creditnote.StatusIssued).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}

	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")
	w := "/admin/w/" + ws.ID

	v1IDs := func(query string) []string {
		var out struct{ Data []struct{ ID string } }
		env.Get(t, "/v1/invoices?"+query, ws.Key).WantStatus(t, 200).Decode(t, &out)
		var ids []string
		for _, d := range out.Data {
			ids = append(ids, d.ID)
		}
		return ids
	}
	shownIDs := `JSON.stringify([...document.querySelectorAll('#results input[name="id"]')].map((x) => x.value))`
	wantShown := func(what string, ids []string) {
		t.Helper()
		want := `["` + strings.Join(ids, `","`) + `"]`
		// A select's change and the submit button each ask htmx for the
		// list; the second answer may swap after the first showed.
		b.until(what+" in /v1's order", shownIDs+` === `+jsString(want)+` && !`+htmxBusy)
	}
	fits := func(what string, width int) {
		t.Helper()
		if n := evaluate[int](b, `document.documentElement.scrollWidth`); n > width {
			t.Fatalf("%s at %d px is %d px wide", what, width, n)
		}
	}

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b.t = t
			if width == 390 {
				b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
			} else {
				b.do("laptop viewport", chromedp.EmulateViewport(1280, 900))
			}
			b.open(w + "/records/invoices")
			b.waitText("Page 1 of 3")
			fits("the invoices", width)
			asc, desc := v1IDs("sort=amount_incl_vat_cents"), v1IDs("sort=-amount_incl_vat_cents")
			if width == 1280 {
				head := `th a.sort[href*="sort=amount_incl_vat_cents"]`
				b.submit(head)
				wantShown("ascending by amount", asc)
				if got := evaluate[string](b, `document.querySelector('th[aria-sort]').innerText.trim()`); !strings.HasPrefix(got, "Amount incl VAT") {
					t.Fatalf("the sorted header reads %q", got)
				}
				// The same header again, by keyboard: descending.
				b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__leaving = true`))
				b.do("press Enter on the header", chromedp.Focus(chromedp.CSS(`th a.sort[href*="sort=-amount_incl_vat_cents"]`)),
					chromedp.KeyEvent(kb.Enter))
				b.until("the next page", `window.__leaving !== true && document.readyState === "complete"`)
				wantShown("descending by amount", desc)
			} else {
				b.choose("#sort", "amount_incl_vat_cents")
				b.click(`form.filters button[type=submit]`)
				wantShown("ascending by amount", asc)
				b.choose("#sort", "-amount_incl_vat_cents")
				b.click(`form.filters button[type=submit]`)
				wantShown("descending by amount", desc)
			}
			if !strings.Contains(b.location(), "sort=-amount_incl_vat_cents") {
				t.Fatalf("the sorted list's address %s does not keep its order", b.location())
			}
			// Page 2 keeps the order.
			b.submit(`.pager a[aria-label="Page 2"]`)
			wantShown("page 2 descending", v1IDs("sort=-amount_incl_vat_cents&offset=25"))

			// The CSV of the sorted list, as the browser downloads it, re-reads with /v1's values.
			href := evaluate[string](b, `document.querySelector('a[download][href*="format=csv"]').href`)
			body := evaluate[string](b, `fetch(`+jsString(href)+`).then((r) => r.ok ? r.text() : "HTTP " + r.status)`)
			recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if err != nil {
				t.Fatalf("%v:\n%.500s", err, body)
			}
			var all struct {
				Data []struct {
					ID       string `json:"id"`
					Number   string `json:"number"`
					Currency string `json:"currency_code"`
					Incl     int64  `json:"amount_incl_vat_cents"`
				}
				Meta struct{ Total int }
			}
			env.Get(t, "/v1/invoices?sort=-amount_incl_vat_cents&limit=100", ws.Key).WantStatus(t, 200).Decode(t, &all)
			if len(recs) != all.Meta.Total+1 || all.Meta.Total != len(all.Data) {
				t.Fatalf("%d CSV rows, /v1 has %d invoices", len(recs)-1, all.Meta.Total)
			}
			at := func(h string) int { return slices.Index(recs[0], h) }
			for i, d := range all.Data {
				row := recs[i+1]
				if row[at("id")] != d.ID || row[at("number")] != d.Number || row[at("currency_code")] != d.Currency ||
					row[at("amount_incl_vat")] != plainDecimal(d.Incl, d.Currency) {
					t.Fatalf("CSV row %d: %v, /v1 has %+v", i, row, d)
				}
			}

			// Search every record type for the client, open it and its statement.
			b.fill("#search-all-q", "zephyrine")
			b.submit(`form.search-all button[type=submit]`)
			b.waitText("Clients (1)")
			fits("the search", width)
			b.submit(`.search-group a[href$="/records/clients/` + cli + `"]`)
			b.waitText("Client Zephyrine Statement Ltd")
			b.submit(`a[href$="/records/clients/` + cli + `/statement"]`)
			b.waitText("Statement of Zephyrine Statement Ltd")
			fits("the statement", width)
			got := evaluate[[]string](b, `[...document.querySelectorAll('section[data-currency="EUR"] td.balance')].map((x) => x.innerText.trim())`)
			want := []string{"€600.00", "€850.00", "€800.00", "€700.00", "€700.00"}
			if !slices.Equal(got, want) {
				t.Fatalf("the running balance reads %v, want %v", got, want)
			}
			if n := evaluate[string](b, `document.querySelector('#from').value`); n != this+"-01-01" {
				t.Fatalf("the period starts %s, want this year", n)
			}
		})
	}
}

// plainDecimal is minor units in the currency's unit, as the CSV has them.
func plainDecimal(n int64, cur string) string {
	digits, ok := map[string]int{"JPY": 0, "KWD": 3, "BHD": 3}[cur]
	if !ok {
		digits = 2
	}
	s := strconv.FormatInt(max(n, -n), 10)
	for len(s) <= digits {
		s = "0" + s
	}
	if digits > 0 {
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if n < 0 {
		s = "-" + s
	}
	return s
}
