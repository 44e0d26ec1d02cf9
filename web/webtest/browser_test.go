package webtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// This package has a database of its own (one per test process), so the
// first-run setup really is the first.
func TestMain(m *testing.M) { apitest.Main(m) }

// chromium finds the system browser; LEDGERBASE_CHROMIUM overrides.
func chromium() string {
	if p := os.Getenv("LEDGERBASE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts one headless browser for the test process and returns
// its first tab; under CI=true a missing browser fails the test.
func browser(t *testing.T) context.Context {
	path := chromium()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH: the browser tests cannot run (apt-get install chromium)")
		}
		t.Skip("no chromium on PATH: skipping the browser tests (apt-get install chromium to run them)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start it now, so a broken browser fails here
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// tab drives one page, failing the test on the first error.
type tab struct {
	t   *testing.T
	ctx context.Context
	env *apitest.Env
}

func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) open(path string) { b.t.Helper(); b.do("open "+path, chromedp.Navigate(b.env.URL+path)) }

// waitText waits until the page's text includes s; it looks again after
// each navigation, since a submitted form replaces the page under it.
func (b *tab) waitText(s string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.body && document.readyState !== "loading" && document.body.innerText.includes(`+jsString(s)+`)`))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ = chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	b.t.Fatalf("waiting for %q on %s; page:\n%s", s, b.location(), body)
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// value is an input's current value.
func (b *tab) value(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+jsString(sel)+`) || {value: "(none)"}).value`))
	if err != nil {
		b.t.Fatalf("value of %s: %v", sel, err)
	}
	return v
}

// until waits for a script's condition (htmx swaps part of the page).
func (b *tab) until(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	b.t.Fatalf("waiting for %s on %s; page:\n%s", what, b.location(), body)
}

func (b *tab) waitVisible(sel string) {
	b.t.Helper()
	b.until(sel, `!!document.querySelector(`+jsString(sel)+`)`)
}

func (b *tab) waitGone(sel string) {
	b.t.Helper()
	b.until(sel+" gone", `!document.querySelector(`+jsString(sel)+`)`)
}

func (b *tab) waitValue(sel, v string) {
	b.t.Helper()
	b.until(sel+" = "+v, `(document.querySelector(`+jsString(sel)+`) || {}).value === `+jsString(v))
}

func (b *tab) waitTextIn(sel, s string) {
	b.t.Helper()
	b.until(s+" in "+sel, `((document.querySelector(`+jsString(sel)+`) || {}).innerText || "").trim() === `+jsString(s))
}

func (b *tab) location() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

func (b *tab) fill(sel, value string) {
	b.t.Helper()
	b.do("fill "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), value))
}

func (b *tab) choose(sel, value string) {
	b.t.Helper()
	b.do("choose "+value+" in "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

func (b *tab) click(sel string) { b.t.Helper(); b.do("click "+sel, chromedp.Click(chromedp.CSS(sel))) }

// htmxBusy is true while htmx has a request, swap or settle under way.
const htmxBusy = `document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")`

// idle waits until htmx is done with the page: a swap still to come would
// replace the nodes a next step finds.
func (b *tab) idle() { b.t.Helper(); b.until("htmx done", `!`+htmxBusy) }

// submit clicks a button or link that loads another page, and waits until
// the old page is gone (the new one may be at the same address).
func (b *tab) submit(sel string) {
	b.t.Helper()
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__leaving = true`))
	b.click(sel)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		left, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__leaving !== true && document.readyState !== "loading"`))
		cancel()
		if err == nil && left {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("clicking %s loaded no page", sel)
}

// screenshot saves the page (or only the viewport) for the README.
func (b *tab) screenshot(name string, fullPage bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if fullPage {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	// The README's pictures are refreshed only on request
	// (LEDGERBASE_SCREENSHOTS=../../docs/screenshots), so an ordinary test
	// run never rewrites tracked files.
	dir := os.Getenv("LEDGERBASE_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

var secretPattern = regexp.MustCompile(`^lb_[0-9A-Za-z]{40}$`)

// TestAdminUIInABrowser walks a new admin through the UI, checking each
// change on /v1 over HTTP as an integration would see it.
func TestAdminUIInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	var wsID, secret string
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) { b.t = t; f(t) }) {
			t.FailNow()
		}
		b.t = t
	}

	step("first admin setup", func(t *testing.T) {
		b.open("/admin/")
		if !strings.HasSuffix(b.location(), "/admin/setup") {
			t.Fatalf("a fresh install opens %s, want the setup page", b.location())
		}
		b.fill("#email", "owner@example.com")
		b.fill("#password", "a long enough password")
		b.fill("#password_again", "a long enough password")
		b.submit(`button[type=submit]`)
		b.waitText("No workspaces yet.")
	})

	step("sign out and in", func(t *testing.T) {
		b.submit(`form[action="/admin/logout"] button`)
		b.waitText("You are signed out.")
		b.fill("#email", "owner@example.com")
		b.fill("#password", "not the password")
		b.submit(`button[type=submit]`)
		b.waitText("The email or password is not right.")
		b.fill("#password", "a long enough password")
		b.submit(`button[type=submit]`)
		b.waitText("Create a workspace")
	})

	step("create a starter workspace", func(t *testing.T) {
		b.fill("#name", "Acme Books")
		b.choose("#plan", "starter")
		b.click("#commerce_module")
		b.submit(`form[action="/admin/workspaces"] button[type=submit]`)
		b.waitText("Workspace created.")
		m := regexp.MustCompile(`/admin/w/(ws_[0-9a-z]+)`).FindStringSubmatch(b.location())
		if m == nil {
			t.Fatalf("not on a workspace page: %s", b.location())
		}
		wsID = m[1]
		ws, err := env.DB.Writer.Workspace.Get(t.Context(), wsID)
		if err != nil || ws.Name != "Acme Books" || ws.Plan != workspace.PlanStarter || ws.CommerceMode || !ws.CommerceModule {
			t.Fatalf("stored workspace: %+v %v", ws, err)
		}
	})

	step("create a key and call /v1/me", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/keys")
		b.waitText("No API keys yet.")
		b.fill("#key-name", "Shop sync")
		b.choose("#key-role", "admin")
		b.choose("#key-expiry", "720h")
		b.submit(`form[action$="/keys"] button[type=submit]`)
		b.waitText("Copy the secret")
		secret = b.text("#new-secret")
		if !secretPattern.MatchString(secret) {
			t.Fatalf("shown secret %q", secret)
		}
		b.click(`[data-copy="#new-secret"]`)
		b.waitText("Copied")
		b.screenshot("keys.png", true)
		var me struct {
			Data []struct {
				WorkspaceID string `json:"workspace_id"`
				Plan        string
			}
		}
		env.Get(t, "/v1/me", secret).WantStatus(t, 200).Decode(t, &me)
		if len(me.Data) != 1 || me.Data[0].WorkspaceID != wsID || me.Data[0].Plan != "starter" {
			t.Fatalf("/v1/me: %+v", me)
		}
		b.open("/admin/w/" + wsID + "/keys")
		b.waitText("Shop sync")
		if body := b.text("main"); strings.Contains(body, secret) {
			t.Fatal("the secret is shown a second time")
		}
	})

	saveSettings := func() {
		b.submit(`form[action$="/settings"] button[type=submit]`)
		b.waitText("Saved.")
	}

	step("clients need the growth plan", func(t *testing.T) {
		env.Get(t, "/v1/clients", secret).WantError(t, 403, "plan_required")
		b.open("/admin/w/" + wsID + "/settings")
		b.choose("#plan", "growth")
		saveSettings()
		env.Get(t, "/v1/clients", secret).WantStatus(t, 200)
	})

	step("commerce mode opens products", func(t *testing.T) {
		env.Get(t, "/v1/products", secret).WantError(t, 403, "commerce_mode_required")
		b.click("#commerce_mode")
		saveSettings()
		env.Get(t, "/v1/products", secret).WantStatus(t, 200)
		b.click("#commerce_mode")
		saveSettings()
		env.Get(t, "/v1/products", secret).WantError(t, 403, "commerce_mode_required")
	})

	step("a custom role without write on clients", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/roles")
		b.waitText("No custom roles yet.")
		b.submit(`a[href$="/roles/new"]`)
		b.fill("#role-name", "client reader")
		b.click(`input[name="grant.clients"][value="read"]`)
		b.click(`input[name="grant.invoices"][value="write"]`)
		b.submit(`form[action$="/roles"] button[type=submit]`)
		b.waitText("Role created.")
		b.open("/admin/w/" + wsID + "/keys")
		b.fill("#key-name", "Reader")
		b.choose("#key-role", "client reader")
		b.submit(`form[action$="/keys"] button[type=submit]`)
		b.waitText("Copy the secret")
		reader := b.text("#new-secret")
		env.Get(t, "/v1/clients", reader).WantStatus(t, 200)
		env.Do(t, "POST", "/v1/clients", reader, map[string]any{"name": "Refused Ltd"}).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", "/v1/vendors", reader, map[string]any{"name": "Refused Ltd"}).WantError(t, 403, "permission_denied")
	})

	var invID string
	step("create a client and write it an invoice with two lines, totals as one types", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/records/clients")
		b.submit(`a[href$="/records/clients/new"]`)
		b.fill("#f-name", "Acme Outfitters")
		b.fill("#f-email", "billing@acme.example")
		b.fill("#f-currency_code", "EUR")
		b.submit(`.actions button[type=submit]`)
		b.waitText("The client is created.")
		cli := regexp.MustCompile(`/records/clients/(cli_[0-9a-z]+)`).FindStringSubmatch(b.location())
		if cli == nil {
			t.Fatalf("not on the client's page: %s", b.location())
		}
		// Back to the form and sent again: the form's key replays the
		// first answer, so there is still one client.
		b.do("back", chromedp.Evaluate[chromedp.Void](`history.back()`))
		b.waitVisible("#f-name")
		if v := b.value("#f-name"); v != "Acme Outfitters" {
			t.Fatalf("back shows the form with %q", v)
		}
		// A page restored from the back-forward cache escapes chromedp's
		// DOM tracking: the page's own script clicks.
		b.do("send again", chromedp.Evaluate[chromedp.Void](`window.__leaving = true; document.querySelector(".actions button[type=submit]").click()`))
		b.until("the next page", `window.__leaving !== true && document.readyState !== "loading"`)
		b.waitText("The client is created.")
		var clients struct{ Meta struct{ Total int } }
		env.Get(t, "/v1/clients?q=Acme", secret).WantStatus(t, 200).Decode(t, &clients)
		if clients.Meta.Total != 1 || !strings.Contains(b.location(), cli[1]) {
			t.Fatalf("back and sent again: %d clients, on %s", clients.Meta.Total, b.location())
		}
		b.submit(`a[href*="/records/invoices/new?client_id="]`)
		if v := b.value("#f-client_id"); v != cli[1] {
			t.Fatalf("the client's New invoice names %q", v)
		}
		b.fill("#f-date", "11/02/2026")
		b.fill("#f-lines-0-description", "Design")
		b.fill("#f-lines-0-qty_milli", "2")
		b.fill("#f-lines-0-unit_price_cents", "50.00")
		b.fill("#f-lines-0-vat_rate_bp", "20")
		b.waitText("120.00")            // the total with VAT, priced by the server as one types
		b.click(`button[name="_more"]`) // more rows keep what was typed (htmx swaps the editor)
		b.waitVisible("#f-lines-5-description")
		if v := b.value("#f-lines-0-description"); v != "Design" {
			t.Fatalf("Add lines lost the first line: %q", v)
		}
		b.fill("#f-lines-1-description", "Hosting")
		b.fill("#f-lines-1-qty_milli", "1")
		b.fill("#f-lines-1-unit_price_cents", "15")
		b.waitTextIn("#total-incl-lines", "€135.00") // the client's currency
		if got := b.text("#amount-lines-1"); got != "€15.00" {
			t.Fatalf("the second line's amount: %q", got)
		}
		b.screenshot("invoice-editor.png", true)
		b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		// At phone width the page does not scroll sideways: the lines table
		// scrolls within its frame.
		if n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || n > 390 {
			wide, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("main *, .sidebar, .shell, main, .topbar")].filter(e => e.getBoundingClientRect().right > 392).slice(0, 12).map(e => e.tagName + "." + e.className + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right)).join("\\n")`))
			t.Fatalf("the invoice editor at 390 px is %d px wide (%v):\n%s", n, err, wide)
		}
		b.screenshot("invoice-editor-phone.png", false)
		b.do("laptop viewport", chromedp.ResetViewport())
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The invoice is created.")
		m := regexp.MustCompile(`/records/invoices/(inv_[0-9a-z]+)`).FindStringSubmatch(b.location())
		if m == nil {
			t.Fatalf("not on the invoice's page: %s", b.location())
		}
		invID = m[1]
		var inv struct {
			Status             string
			Date               string
			ClientID           string `json:"client_id"`
			AmountInclVatCents int64  `json:"amount_incl_vat_cents"`
			Lines              []any
		}
		env.Get(t, "/v1/invoices/"+invID, secret).WantStatus(t, 200).Decode(t, &inv)
		if inv.Status != "draft" || len(inv.Lines) != 2 || inv.AmountInclVatCents != 13500 || inv.Date != "2026-11-02" || inv.ClientID != cli[1] {
			t.Fatalf("the invoice through /v1: %+v", inv)
		}
	})

	step("send the invoice, pay part of it, then the rest", func(t *testing.T) {
		b.submit(`a[href$="/do/send"]`) // asks whom to email: the client's address by default
		b.submit(`.actions button[type=submit]`)
		b.waitText("The invoice is now sent.")
		// Its email waits in the outbox (this server has no worker), listed on the page.
		if got := b.text("#emails tbody"); !strings.Contains(got, "billing@acme.example") || !strings.Contains(got, "pending") {
			t.Fatalf("the invoice's emails: %q", got)
		}
		pay := func(amount, number string) {
			b.submit(`a[href$="/add/invoice-payments"]`)
			b.fill("#f-number", number)
			b.choose("#f-status", "completed")
			b.fill("#f-amount_incl_vat_cents", amount)
			b.submit(`.actions button[type=submit]`)
		}
		pay("50.00", "PAY-1")
		b.waitText("The invoice payment is recorded. The invoice is now partially paid.")
		pay("85", "PAY-2")
		b.waitText("The invoice is now paid.")
		var inv struct {
			Status         string
			PaidCents      int64 `json:"paid_cents"`
			RemainingCents int64 `json:"remaining_cents"`
		}
		env.Get(t, "/v1/invoices/"+invID, secret).WantStatus(t, 200).Decode(t, &inv)
		if inv.Status != "paid" || inv.PaidCents != 13500 || inv.RemainingCents != 0 {
			t.Fatalf("the paid invoice through /v1: %+v", inv)
		}
	})

	step("revoke the key", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/keys")
		b.submit(`a[aria-label="Revoke Shop sync"]`)
		b.waitText("Revoke the key “Shop sync”?")
		env.Get(t, "/v1/me", secret).WantStatus(t, 200) // asking is not revoking
		b.submit(`button.danger`)
		b.waitText("is revoked")
		env.Get(t, "/v1/me", secret).WantError(t, 401, "revoked_api_key")
	})

	step("browse records", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/settings")
		b.choose("#plan", "business")
		b.click("#commerce_mode")
		saveSettings()
		if err := demo.Seed(t.Context(), env.DB, wsID, demo.Options{Invoices: 40}); err != nil {
			t.Fatal(err)
		}
		shp := webtest.Records(t, env, wsID)
		b.open("/admin/w/" + wsID + "/records/invoices")
		b.waitText("of 41") // the demo's 40 and the one written through the form
		// The search box searches as one types (htmx), like ?q= on the API.
		b.open("/admin/w/" + wsID + "/records/shipments")
		b.fill("#q", "JD014600003828")
		b.waitText("1–1 of 1")
		for i := 0; !strings.Contains(b.location(), "q=JD014600003828"); i++ {
			if i == 40 { // htmx pushes the address once the results settle
				t.Fatalf("the search is not in the address: %s", b.location())
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.submit(`#results a[href$="` + shp + `"]`)
		b.waitText("Out for delivery")
		b.waitText("JD014600003829") // the second parcel
		b.screenshot("record.png", true)
		b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		b.open("/admin/w/" + wsID + "/keys")
		b.waitText("Shop sync")
		b.screenshot("keys-phone.png", false)
		b.do("laptop viewport", chromedp.ResetViewport())
	})

	// The key above is revoked: /v1 is read with a fresh one from here on.
	var checker string
	step("issue a gift card and see only its last four characters afterwards", func(t *testing.T) {
		var err error
		unlimited := 0
		if checker, _, err = access.NewKey(t.Context(), env.DB.Writer, access.KeySpec{WorkspaceID: wsID, Name: "checks", Role: "admin", RateLimit: &unlimited}); err != nil {
			t.Fatal(err)
		}
		b.open("/admin/w/" + wsID + "/records/gift-cards")
		b.submit(`a[href$="/records/gift-cards/new"]`)
		b.fill("#f-initial_balance_cents", "50.00")
		b.fill("#f-currency_code", "EUR")
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("Copy the code of this gift card now")
		code := b.text("#new-secret")
		if !regexp.MustCompile(`^[A-Z2-7]{4}(-[A-Z2-7]{4}){4}$`).MatchString(code) {
			t.Fatalf("shown code %q", code)
		}
		last4 := code[len(code)-4:]
		b.submit(`a.button[href*="/records/gift-cards/gc_"]`)
		b.waitText("Code last4")
		if body := b.text("main"); !strings.Contains(body, last4) || strings.Contains(body, code) || strings.Contains(body, strings.ReplaceAll(code, "-", "")[:8]) {
			t.Fatalf("the card's page shows more than the last four characters:\n%s", body)
		}
		id := regexp.MustCompile(`gc_[0-9a-z]+`).FindString(b.location())
		card := env.Get(t, "/v1/gift-cards/"+id, checker).WantStatus(t, 200).JSON(t)
		if card["code_last4"] != last4 || card["balance_cents"] != 5000.0 || strings.Contains(fmt.Sprint(card), code[:4]+code[5:9]) {
			t.Fatalf("the card through /v1: %v", card)
		}
	})

	step("open and refund a return", func(t *testing.T) {
		st, err := env.DB.Writer.Store.Create().SetWorkspaceID(wsID).SetName("Acme shop").SetFreeAddress("acme.ledgerbase.shop").Save(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		o := env.Do(t, "POST", "/v1/sales-orders", checker, map[string]any{"client_name": "Ada", "store_id": st.ID,
			"lines":    []any{map[string]any{"description": "Boots", "qty_milli": 1000, "unit_price_cents": 8000, "vat_rate_bp": 2000}},
			"payments": []any{map[string]any{"kind": "capture", "amount_cents": 9600}}}).WantStatus(t, 201).JSON(t)
		so := o["id"].(string)
		shp := env.Do(t, "POST", "/v1/shipments", checker, map[string]any{"sales_order_id": so}).WantStatus(t, 201).JSON(t)["id"].(string)
		env.Do(t, "PATCH", "/v1/shipments/"+shp, checker, map[string]any{"sales_order_id": so, "status": "delivered"}).WantStatus(t, 200)

		b.open("/admin/w/" + wsID + "/records/sales-orders/" + so)
		b.submit(`a[href*="/records/returns/new?sales_order_id="]`)
		b.waitText("New return")
		b.fill("#f-reason", "Too small")
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The return is created.")
		for _, a := range []string{"approve", "receive"} {
			b.submit(`form[action$="/do/` + a + `"] button`)
			b.waitText("The return is now " + a + "d.")
		}
		b.submit(`a[href$="/do/refund"]`)
		b.waitText("Refund return")
		b.submit(`form[action$="/do/refund"] button[type=submit]`)
		b.waitText("The return is now refunded.")
		id := regexp.MustCompile(`ret_[0-9a-z]+`).FindString(b.location())
		ret := env.Get(t, "/v1/returns/"+id, checker).WantStatus(t, 200).JSON(t)
		if ret["status"] != "refunded" || ret["refund_cents"] != 9600.0 || ret["reason"] != "Too small" || ret["sales_order_id"] != so {
			t.Fatalf("the return through /v1: %v", ret)
		}
		if ps := env.Get(t, "/v1/sales-orders/"+so, checker).JSON(t)["payment_status"]; ps != "refunded" {
			t.Fatalf("the order's payment status: %v", ps)
		}
	})

	step("confirm an order and ship it in two shipments", func(t *testing.T) {
		secret, _, err := access.NewKey(t.Context(), env.DB.Writer, access.KeySpec{WorkspaceID: wsID, Role: access.RoleAdmin}) // the first was revoked
		if err != nil {
			t.Fatal(err)
		}
		b.open("/admin/w/" + wsID + "/records/items/new")
		b.fill("#f-name", "Walnut desk")
		b.fill("#f-number", "DESK-1")
		b.fill("#f-unit_price_cents", "450.00")
		b.submit(`.actions button[type=submit]`)
		b.waitText("The item is created.")
		b.open("/admin/w/" + wsID + "/records/sales-orders/new")
		b.fill("#f-client_name", "Acme Outfitters")
		b.fill("#f-currency_code", "EUR")
		b.fill("#f-lines-0-description", "walnut d") // picks the item by typing
		b.click(`#picks-lines-0 button.pick`)
		b.waitValue("#f-lines-0-unit_price_cents", "450.00")
		if d := b.value("#f-lines-0-description"); d != "Walnut desk" {
			t.Fatalf("the picked line says %q", d)
		}
		b.fill("#f-lines-0-qty_milli", "3")
		b.fill("#f-lines-1-description", "Gift wrap")
		b.fill("#f-lines-1-qty_milli", "1")
		b.fill("#f-lines-1-unit_price_cents", "5.00")
		b.waitTextIn("#total-incl-lines", "€1,355.00")
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The sales order is created.")
		m := regexp.MustCompile(`/records/sales-orders/(so_[0-9a-z]+)`).FindStringSubmatch(b.location())
		if m == nil {
			t.Fatalf("not on the order's page: %s", b.location())
		}
		so := m[1]
		b.submit(`form[action$="/do/confirm"] button`)
		b.waitText("The sales order is now confirmed.")
		// The first shipment: one desk, no wrap (the row removed).
		b.submit(`a[href*="/records/shipments/new?sales_order_id="]`)
		if q := b.value("#f-lines-0-qty_milli"); q != "3" {
			t.Fatalf("the shipment form offers %q of the desk", q)
		}
		b.fill("#f-lines-0-qty_milli", "1")
		b.click(`button[value="remove:lines:1"]`)
		b.waitGone("#f-lines-4-qty_milli") // two rows of the order and three blank ones, less one
		if v := b.value("#f-lines-1-qty_milli"); v != "" {
			t.Fatalf("after removing the wrap, line 2 holds %q", v)
		}
		b.fill("#f-carrier", "DHL")
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The shipment is created.")
		var order struct{ Status string }
		env.Get(t, "/v1/sales-orders/"+so, secret).WantStatus(t, 200).Decode(t, &order)
		if order.Status != "partially_shipped" {
			t.Fatalf("after the first shipment /v1 says %s", order.Status)
		}
		// The second: all that remains.
		b.open("/admin/w/" + wsID + "/records/sales-orders/" + so)
		b.waitText("partially_shipped")
		b.submit(`a[href*="/records/shipments/new?sales_order_id="]`)
		if q := b.value("#f-lines-0-qty_milli"); q != "2" {
			t.Fatalf("the second shipment offers %q of the desk", q)
		}
		b.submit(`.actions button[type=submit]:not([name])`)
		b.waitText("The shipment is created.")
		env.Get(t, "/v1/sales-orders/"+so, secret).WantStatus(t, 200).Decode(t, &order)
		if order.Status != "shipped" {
			t.Fatalf("after the second shipment /v1 says %s", order.Status)
		}
		var shps struct{ Meta struct{ Total int } }
		env.Get(t, "/v1/shipments?sales_order_id="+so, secret).WantStatus(t, 200).Decode(t, &shps)
		if shps.Meta.Total != 2 {
			t.Fatalf("shipments of the order through /v1: %d", shps.Meta.Total)
		}
	})

	step("a form without its CSRF token is refused", func(t *testing.T) {
		b.open("/admin/w/" + wsID + "/settings")
		b.fill("#name", "Hijacked")
		b.do("drop the token", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('input[name="csrf"]').forEach(e => e.remove())`))
		b.submit(`form[action$="/settings"] button[type=submit]`)
		b.waitText("Form refused")
		ws, err := env.DB.Writer.Workspace.Get(t.Context(), wsID)
		if err != nil || ws.Name != "Acme Books" {
			t.Fatalf("the refused form changed the workspace: %+v %v", ws, err)
		}
	})
}
