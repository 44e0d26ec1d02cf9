package webtest_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestPickersInABrowser types invoices as a small business's owner does,
// at 1280 and at 390 px: the client picked by its name, three lines — qty
// 3 at 120.00 with 20 % VAT and 10 % off, 2.5 of an item picked by its
// name — and a KWD client's invoice at 1.250; /v1 then holds the API's
// integers and the client's id. One invoice is typed by keyboard alone.
// No page of the forms breaks the Content-Security-Policy.
func TestPickersInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	acme := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Outfitters", "currency_code": "EUR"}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme Holdings", "currency_code": "GBP"}).WantStatus(t, 201)
	kwd := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Kuwait Trading Co", "currency_code": "KWD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	desk := env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Walnut desk", "number": "DESK-1", "currency_code": "EUR",
		"unit_price_cents": 45000, "vat_rate_bp": 2000}).WantStatus(t, 201).JSON(t)["id"].(string)

	// Every page records what the Content-Security-Policy refuses.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener("securitypolicyviolation",
			e => window.__csp.push(e.effectiveDirective + " " + e.blockedURI + " " + (e.sample || "") + " " + e.sourceFile + ":" + e.lineNumber));`,
	}); err != nil {
		t.Fatal(err)
	}
	noCSP := func(where string) {
		t.Helper()
		if got := evaluate[[]string](b, `window.__csp || []`); len(got) > 0 {
			t.Fatalf("%s: the Content-Security-Policy refused:\n%s", where, strings.Join(got, "\n"))
		}
	}

	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")
	w := "/admin/w/" + ws.ID

	type line struct {
		QtyMilli       int64  `json:"qty_milli"`
		UnitPriceCents int64  `json:"unit_price_cents"`
		VATRateBP      int64  `json:"vat_rate_bp"`
		DiscountBP     int64  `json:"discount_bp"`
		ItemID         string `json:"item_id"`
	}
	type invoice struct {
		ClientID     string `json:"client_id"`
		CurrencyCode string `json:"currency_code"`
		Lines        []line
	}
	saved := func() invoice {
		t.Helper()
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The invoice is created.")
		id := regexp.MustCompile(`inv_[0-9a-z]+`).FindString(b.location())
		var inv invoice
		env.Get(t, "/v1/invoices/"+id, key).WantStatus(t, 200).Decode(t, &inv)
		return inv
	}
	focused := func() string {
		return evaluate[string](b, `document.activeElement ? document.activeElement.id || document.activeElement.tagName : ""`)
	}
	// pick types into a picker and picks the match that reads label.
	pick := func(input, list, typed, label string) {
		t.Helper()
		b.fill(input, typed)
		sel := list + ` button.pick`
		b.until("a match for "+typed, `[...document.querySelectorAll(`+jsString(sel)+`)].some(e => e.innerText.startsWith(`+jsString(label)+`))`)
		b.do("pick "+label, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll(`+jsString(sel)+`)].find(e => e.innerText.startsWith(`+jsString(label)+`)).click()`))
	}

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b.t = t
			defer func() { b.t = t }()
			if width == 390 {
				b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
			} else {
				b.do("laptop viewport", chromedp.EmulateViewport(1280, 900))
			}
			b.open(w + "/records/invoices/new")
			b.waitVisible("#f-client_id-q")
			if evaluate[bool](b, `!!document.querySelector("#f-client_id").closest("details:not([open])") === false`) {
				t.Fatal("the client's id is not folded under Every field")
			}
			if width == 1280 {
				b.fill("#f-client_id-q", "acme")
				b.until("the matches", `document.querySelectorAll("#picks-client_id button.pick").length === 2`)
				b.screenshot("invoice-client-picker.png", false)
			}
			pick("#f-client_id-q", "#picks-client_id", "acme", "Acme Outfitters")
			b.waitValue("#f-client_id", acme)
			if v := b.value("#f-client_id-q"); v != "Acme Outfitters" {
				t.Fatalf("the picker reads %q", v)
			}
			if v := b.value("#f-currency_code"); v != "EUR" {
				t.Fatalf("the client's currency: %q", v)
			}
			// The focus moves on to the next field, not to the page.
			b.until("the focus after the pick", `document.activeElement && document.activeElement !== document.body && document.activeElement.id !== "f-client_id-q"`)
			if f := focused(); f != "f-date" {
				t.Logf("after the pick the focus is on %s", f)
			}

			b.fill("#f-lines-0-description", "Design")
			b.fill("#f-lines-0-qty_milli", "3")
			b.fill("#f-lines-0-unit_price_cents", "120.00")
			b.fill("#f-lines-0-vat_rate_bp", "20")
			b.fill("#f-lines-0-discount_bp", "10")
			pick("#f-lines-1-description", "#picks-lines-1", "walnut", "Walnut desk")
			b.waitValue("#f-lines-1-unit_price_cents", "450.00")
			b.waitValue("#f-lines-1-vat_rate_bp", "20")
			b.until("the focus on line 2's quantity", `document.activeElement && document.activeElement.id === "f-lines-1-qty_milli"`)
			b.fill("#f-lines-1-qty_milli", "2.5")
			b.waitTextIn("#total-incl-lines", "€1,738.80") // 324.00 + 1,125.00, then 20 % VAT
			for sel, name := range map[string]string{"#f-lines-1-qty_milli": "Line 2 quantity", "#f-lines-0-unit_price_cents": "Line 1 unit price",
				"#f-lines-1-vat_rate_bp": "Line 2 VAT rate", "#f-lines-2-description": "Line 3 description"} {
				if got := evaluate[string](b, `document.querySelector(`+jsString(sel)+`).getAttribute("aria-label")`); got != name {
					t.Errorf("%s is named %q, want %q", sel, got, name)
				}
			}
			if width == 1280 {
				b.screenshot("invoice-lines.png", true)
			}
			if width == 390 {
				phoneCards(b)
				b.screenshot("invoice-lines-phone.png", true)
			}
			inv := saved()
			if inv.ClientID != acme || inv.CurrencyCode != "EUR" || len(inv.Lines) != 2 {
				t.Fatalf("the invoice through /v1: %+v", inv)
			}
			if l := inv.Lines[0]; l.QtyMilli != 3000 || l.UnitPriceCents != 12000 || l.VATRateBP != 2000 || l.DiscountBP != 1000 {
				t.Fatalf("line 1 through /v1: %+v", l)
			}
			if l := inv.Lines[1]; l.QtyMilli != 2500 || l.UnitPriceCents != 45000 || l.VATRateBP != 2000 || l.ItemID != desk {
				t.Fatalf("line 2 through /v1: %+v", l)
			}

			// A KWD client: the form takes its currency, 1.250 is 1250 fils.
			b.open(w + "/records/invoices/new")
			pick("#f-client_id-q", "#picks-client_id", "Kuwait", "Kuwait Trading Co")
			b.waitValue("#f-currency_code", "KWD")
			if u := b.text(`#f-lines-0-unit_price_cents + .unit`); u != "KWD" {
				t.Fatalf("the KWD client's price unit reads %q", u)
			}
			b.fill("#f-lines-0-description", "Dates")
			b.fill("#f-lines-0-qty_milli", "1")
			b.fill("#f-lines-0-unit_price_cents", "1.250")
			b.until("the KWD total", `document.querySelector("#total-incl-lines").innerText.replace(/\s+/g, " ").trim() === "KWD 1.250"`)
			k := saved()
			if k.ClientID != kwd || k.CurrencyCode != "KWD" || len(k.Lines) != 1 || k.Lines[0].UnitPriceCents != 1250 || k.Lines[0].QtyMilli != 1000 {
				t.Fatalf("the KWD invoice through /v1: %+v", k)
			}
			noCSP(fmt.Sprint(width, " px"))
		})
	}
	b.do("laptop viewport", chromedp.EmulateViewport(1280, 900))

	t.Run("keyboard", func(t *testing.T) {
		b.t = t
		defer func() { b.t = t }()
		press := func(what string, keys string) {
			t.Helper()
			b.do(what, chromedp.KeyEvent(keys))
		}
		// tabTo presses Tab until the focus is on id (at most 80 times).
		tabTo := func(id string) {
			t.Helper()
			for i := 0; i < 80; i++ {
				if focused() == id {
					return
				}
				press("Tab", kb.Tab)
			}
			t.Fatalf("Tab never reached #%s (the focus is on %s)", id, focused())
		}
		b.open(w + "/records/invoices/new")
		b.waitVisible("#f-client_id-q")
		tabTo("f-client_id-q")
		press("type the client", "Acme Out")
		b.until("the client's match", `!!document.querySelector("#picks-client_id button.pick")`)
		press("down to the matches", kb.ArrowDown)
		b.until("the match focused", `document.activeElement && document.activeElement.matches("#picks-client_id button.pick")`)
		enter(b) // picks the match
		b.waitValue("#f-client_id", acme)
		b.until("the focus after the pick", `document.activeElement && document.activeElement !== document.body`)

		tabTo("f-lines-0-description")
		press("line 1", "Design")
		tabTo("f-lines-0-qty_milli")
		press("qty", "3")
		tabTo("f-lines-0-unit_price_cents")
		press("price", "120.00")
		tabTo("f-lines-0-vat_rate_bp")
		press("VAT", "20")
		tabTo("f-lines-0-discount_bp")
		press("discount", "10")

		tabTo("f-lines-1-description")
		press("line 2", "walnut")
		b.until("the item's match", `!!document.querySelector("#picks-lines-1 button.pick")`)
		enter(b) // in the description, Enter picks the first match
		b.waitValue("#f-lines-1-unit_price_cents", "450.00")
		b.until("the focus on line 2's quantity", `document.activeElement && document.activeElement.id === "f-lines-1-qty_milli"`)
		press("select the quantity", kb.End)
		for range 3 {
			press("erase", kb.Backspace)
		}
		press("qty", "2.5")
		b.waitTextIn("#total-incl-lines", "€1,738.80")
		b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__leaving = true`))
		enter(b) // sends the form
		b.until("the next page", `window.__leaving !== true && document.readyState !== "loading"`)
		b.waitText("The invoice is created.")
		id := regexp.MustCompile(`inv_[0-9a-z]+`).FindString(b.location())
		var inv invoice
		env.Get(t, "/v1/invoices/"+id, key).WantStatus(t, 200).Decode(t, &inv)
		if inv.ClientID != acme || len(inv.Lines) != 2 || inv.Lines[0].QtyMilli != 3000 || inv.Lines[0].UnitPriceCents != 12000 ||
			inv.Lines[0].VATRateBP != 2000 || inv.Lines[0].DiscountBP != 1000 || inv.Lines[1].QtyMilli != 2500 || inv.Lines[1].ItemID != desk {
			t.Fatalf("the keyboard's invoice through /v1: %+v", inv)
		}
		noCSP("keyboard")
	})

	t.Run("row buttons keep the focus", func(t *testing.T) {
		b.t = t
		defer func() { b.t = t }()
		// press focuses a button and presses Enter on it, as a keyboard does.
		press := func(sel string) {
			t.Helper()
			// After what typing asked (the totals) has come back.
			b.idle()
			b.do("focus "+sel, chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).focus()`))
			enter(b)
		}
		b.open(w + "/records/invoices/new")
		b.fill("#f-lines-0-description", "First")
		b.fill("#f-lines-1-description", "Second")
		press(`button[name="_more"]`)
		b.until("the first blank line focused", `document.activeElement && document.activeElement.id === "f-lines-2-description"`)
		press(`button[value="down:lines:0"]`)
		b.until("the moved line's button focused", `document.activeElement && document.activeElement.value === "down:lines:1"`)
		if v := b.value("#f-lines-1-description"); v != "First" {
			t.Fatalf("the line moved down reads %q", v)
		}
		press(`button[value="remove:lines:0"]`)
		b.until("the next line focused", `document.activeElement && document.activeElement.id === "f-lines-0-description"`)
		if v := b.value("#f-lines-0-description"); v != "First" {
			t.Fatalf("after removing line 1, line 1 reads %q", v)
		}
		noCSP("row buttons")
	})

	// The listener hears what the policy refuses: an inline style is one.
	b.do("an inline style", chromedp.Evaluate[chromedp.Void](`document.body.setAttribute("style", "color: red")`))
	b.until("the refusal heard", `(window.__csp || []).length > 0`)
}

// enter presses Enter as a keyboard does: keydown and its keypress in one
// event (chromedp's KeyEvent sends them apart, and a swap between the two
// would take the keypress to another field).
func enter(b *tab) {
	b.t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		ev := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
		if typ == input.DispatchKeyEventTypeKeyDown {
			ev.Text, ev.UnmodifiedText = "\r", "\r"
		}
		if _, err := chromedp.Call(b.ctx, input.DispatchKeyEvent, ev); err != nil {
			b.t.Fatalf("Enter: %v", err)
		}
	}
}

// phoneCards checks a lines editor at phone width: nothing scrolls
// sideways, each line is a card whose labels show, and no two fields of
// a line overlap (Discount and VAT did).
func phoneCards(b *tab) {
	b.t.Helper()
	if n := evaluate[int](b, `document.documentElement.scrollWidth`); n > 390 {
		wide := evaluate[string](b, `[...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > 392).slice(0, 12).map(e => e.tagName + "." + e.className + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right)).join("\n")`)
		b.t.Fatalf("the invoice form at 390 px is %d px wide:\n%s", n, wide)
	}
	if over := evaluate[int](b, `(() => { const w = document.querySelector("#rows-lines .table-wrap"); return w.scrollWidth - w.clientWidth })()`); over > 0 {
		b.t.Fatalf("the lines scroll %d px sideways", over)
	}
	if !evaluate[bool](b, `getComputedStyle(document.querySelector('label[for="f-lines-0-qty_milli"]')).position === "static"`) {
		b.t.Fatal("a line's labels are hidden on a phone")
	}
	overlap := evaluate[string](b, `(() => {
		const cells = [...document.querySelectorAll("#rows-lines tbody tr:first-child td")].map(td => [td.className, td.getBoundingClientRect()]);
		for (let i = 0; i < cells.length; i++) for (let j = i + 1; j < cells.length; j++) {
			const [a, r] = cells[i], [b, s] = cells[j];
			if (r.width && s.width && r.left < s.right - 1 && s.left < r.right - 1 && r.top < s.bottom - 1 && s.top < r.bottom - 1) return a + " and " + b;
		}
		return "" })()`)
	if overlap != "" {
		b.t.Fatalf("on a phone, %s overlap", overlap)
	}
}
