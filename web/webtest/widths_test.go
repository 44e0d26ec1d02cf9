package webtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// layoutCheck lists what is wrong with the page's layout at the current
// width: the document scrolling sideways, a select too narrow for one of
// its choices, a panel touching what is above it, no icon, an acronym
// written as a word ("Vat"), and a table cell whose content is cut, inside
// the cell or by the scrolling frame around its table: at 1280 px (cells
// true) in every table, on a phone in tables shown as cards.
const layoutCheck = `((cells) => {
	const out = [];
	const what = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + String(e.className).trim().split(/\s+/).join(".") : "") +
		" " + JSON.stringify((e.innerText || "").trim().replace(/\s+/g, " ").slice(0, 40));
	const d = document.documentElement;
	if (d.scrollWidth > d.clientWidth) {
		// Name the elements where the overflow starts: past the edge, inside a parent that is not.
		const past = (e) => e.getBoundingClientRect().right > d.clientWidth + 1;
		const framed = (e) => { for (let a = e.parentElement; a && a !== d; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true; return false; };
		const starts = [...document.body.querySelectorAll("*")].filter((e) => past(e) && !past(e.parentElement) && !framed(e)).slice(0, 3);
		if (starts.length === 0) starts.push(...[...document.body.querySelectorAll("*")].filter((e) => past(e) && getComputedStyle(e).position === "absolute").slice(0, 3));
		out.push("the page is " + d.scrollWidth + " px wide in a " + d.clientWidth + " px window, from " + starts.map(what).join(", "));
	}
	const probe = document.createElement("span");
	probe.style.cssText = "position:absolute;visibility:hidden;white-space:pre;left:0;top:0";
	document.body.appendChild(probe);
	for (const s of document.querySelectorAll("select")) {
		if (!s.offsetParent) continue;
		const cs = getComputedStyle(s);
		probe.style.font = cs.font;
		const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16; // the arrow
		for (const o of s.options) {
			probe.textContent = o.text;
			if (probe.getBoundingClientRect().width > room) out.push(what(s) + " cuts its choice " + JSON.stringify(o.text));
		}
	}
	probe.remove();
	for (const p of document.querySelectorAll(".panel")) {
		const s = p.previousElementSibling;
		if (s && s.offsetParent && p.offsetParent && p.getBoundingClientRect().top - s.getBoundingClientRect().bottom < 8) out.push("panel " + what(p) + " touches the " + what(s) + " above it");
	}
	if (!document.querySelector('link[rel~="icon"]')) out.push("no icon");
	const words = (document.querySelector("main") || document.body).innerText.match(/\b(Vat|vat|Id|Sku|Url)\b/g);
	if (words) out.push("acronyms not in capitals: " + [...new Set(words)].join(", "));
	// On a phone, tables shown as cards (cells with data-label) and the records
	// lists must show everything.
	const hiddenHead = (c) => getComputedStyle(c.closest("thead, tbody, table")).position === "absolute";
	for (const t of document.querySelectorAll(cells ? "table" : "table:has(td[data-label]), #results table")) {
		if (!t.offsetParent) continue;
		for (const c of t.querySelectorAll("td, th")) {
			if (c.offsetParent && !hiddenHead(c) && c.scrollWidth > c.clientWidth + 1)
				out.push("cell " + what(c) + " is cut: " + c.scrollWidth + " px of content in " + c.clientWidth + " px");
		}
		let frame = t.parentElement;
		while (frame && frame !== d && getComputedStyle(frame).overflowX === "visible") frame = frame.parentElement;
		if (!frame || frame === d) continue;
		const f = frame.getBoundingClientRect(), r = t.getBoundingClientRect();
		if (r.left < f.left - 1 || r.right > f.right + 1) {
			const hidden = [...t.querySelectorAll("th, td")].filter((c) => { const x = c.getBoundingClientRect(); return x.left < f.left - 1 || x.right > f.right + 1; });
			const heads = [...new Set(hidden.map((c) => (t.tHead && t.tHead.rows[0] && t.tHead.rows[0].cells[c.cellIndex] || c).innerText.trim()))];
			out.push("a table is " + Math.round(r.width) + " px wide in a " + Math.round(f.width) + " px frame: columns " + JSON.stringify(heads) + " are out of view");
		}
	}
	return out;
})`

// subTables lists the sub-tables of a record page (document), outside
// "Every field": its sections with a heading, and a document's lines, each
// with whether it has rows.
const subTables = `((doc) => {
	const main = doc.querySelector("main");
	if (!main) return [];
	const rows = (e) => !!e.querySelector("tbody tr td:not([colspan]), ol.timeline li, .panel");
	const out = [...main.querySelectorAll("section")].filter((s) => !s.closest("details") && s.querySelector("h2"))
		.map((s) => ({title: s.querySelector("h2").textContent.trim(), filled: rows(s)}));
	for (const t of main.querySelectorAll("table.doc-lines")) out.push({title: "Lines", filled: rows(t)});
	return out;
})`

type subTable struct {
	Title  string `json:"title"`
	Filled bool   `json:"filled"`
}

// mustFill are sub-tables the busy workspace fills, so their layout is
// checked with rows (the invoice's payments needed sideways scrolling).
var mustFill = map[string][]string{
	"invoices":     {"Lines", "Payments", "Credit notes"},
	"bills":        {"Lines", "Payments"},
	"credit-notes": {"Lines"},
	"quotes":       {"Lines"},
	"returns":      {"Lines"},
	"sales-orders": {"Lines", "Shipments"},
	"shipments":    {"Events", "Lines", "Packages"},
	"clients":      {"Addresses"},
	"gift-cards":   {"Ledger"},
	"products":     {"Variants"},
}

// recordPage is a record's page, with its resource.
var recordPage = regexp.MustCompile(`^/admin/w/[^/]+/records/([a-z-]+)/[a-z]+_[0-9a-z]{8,}$`)

func jsStrings(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = jsString(s)
	}
	return "[" + strings.Join(out, ",") + "]"
}

// idSegment is a record's or workspace's id in a path ("inv_01m7…").
var idSegment = regexp.MustCompile(`^[a-z]+_[0-9a-z]{8,}$`)

// shapeOf is a page's address with its ids blanked: pages of one shape
// are one template over different records.
func shapeOf(path string) string {
	parts := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for i, p := range parts {
		if idSegment.MatchString(p) {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// routePattern matches the paths a fiber route serves ("/admin/w/:ws").
func routePattern(route string) *regexp.Regexp {
	parts := strings.Split(strings.TrimSuffix(route, "/"), "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "[^/]+"
		} else {
			parts[i] = regexp.QuoteMeta(p)
		}
	}
	return regexp.MustCompile("^" + strings.Join(parts, "/") + "$")
}

// TestAdminPagesAtEveryWidth visits every page of the admin UI at a
// phone's width (390 px) and a laptop's (1280 px). The pages are found the
// way a person finds them, by following the UI's own links from a busy
// workspace, and the visit must reach every GET route the UI serves, so a
// new page is checked without being listed here; of the record pages the
// links reach, those that fill each sub-table (an invoice's payments, an
// order's shipments) are checked too, with what a person may open open.
// At 390 px no page may scroll sideways; at 1280 px, in addition, no
// table may scroll sideways in its frame and no table cell may be cut.
// At every width no page may break its Content-Security-Policy (also
// after picking an item, swapped in by htmx), every form field has an
// accessible name of its own, and text contrasts with its background;
// at 1280 px the amounts, quantities and rates a record or list page
// shows are in a person's unit, not as /v1 keeps them. A page of every
// shape is checked again in a dark colour scheme, and on a phone the
// navigation opens from the top bar's Menu button.
func TestAdminPagesAtEveryWidth(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	b.recordCSP()

	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 40}); err != nil {
		t.Fatal(err)
	}
	webtest.Records(t, env, ws.ID)
	ws.Role(t, "client reader", "clients:read,invoices:write")
	ws.NewKey(t, access.KeySpec{Name: "Shop sync", Role: "client reader"})
	hook := "https://hooks.example.com/ledgerbase" // never sent to: no worker runs here
	if _, err := webhooks.CreateEndpoint(t.Context(), env.DB.Writer, ws.ID, webhooks.EndpointChange{URL: &hook, Events: []string{"client.*"}}); err != nil {
		t.Fatal(err)
	}
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Hooked Ltd"}).WantStatus(t, 201) // a delivery to show

	var routes []string
	for _, r := range env.Server.App.GetRoutes(true) {
		if r.Method == "GET" && strings.HasPrefix(r.Path, "/admin") && !slices.Contains(routes, r.Path) {
			routes = append(routes, r.Path)
		}
	}

	// visit opens a page, notes what is wrong with it at the current width
	// (cells: the 1280 px checks too), and returns where it landed.
	problems := map[string][]string{} // page → what is wrong
	scheme := "light"
	// openOwed checks the dashboard's "Open" figure against the open
	// invoices /v1 lists: each currency's remaining amounts added up, as
	// money.Format writes them.
	dashboards := 0
	openOwed := func(shown string) []string {
		dashboards++
		var l struct {
			Data []map[string]any
			Meta struct{ Total int }
		}
		env.Get(t, "/v1/invoices?status=sent,partially_paid,overdue&limit=100", ws.Key).WantStatus(t, 200).Decode(t, &l)
		if len(l.Data) != l.Meta.Total || l.Meta.Total == 0 {
			return []string{fmt.Sprintf("the open invoices are %d, %d of them read: the dashboard's Open figure is not checked", l.Meta.Total, len(l.Data))}
		}
		sums := map[string]int64{}
		for _, inv := range l.Data {
			c, _ := inv["currency_code"].(string)
			r, _ := inv["remaining_cents"].(float64)
			sums[c] += int64(r)
		}
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(sums)) {
			parts = append(parts, strings.Join(strings.Fields(money.Format(sums[c], c, "en")), " "))
		}
		if want := "Open " + strings.Join(parts, " · "); !strings.Contains(shown, want) {
			return []string{fmt.Sprintf("the dashboard does not read %q", want)}
		}
		return nil
	}
	// throughV1 is what /v1 answers for a record page (the record) or a
	// records list (its first hundred), with the resource.
	list := regexp.MustCompile(`^/admin/w/[^/]+/records/([a-z-]+)$`)
	throughV1 := func(path string) (string, []map[string]any) {
		if m := recordPage.FindStringSubmatch(path); m != nil {
			r := env.Get(t, "/v1/"+m[1]+"/"+path[strings.LastIndex(path, "/")+1:], ws.Key)
			if r.Status != 200 {
				return m[1], nil
			}
			return m[1], []map[string]any{r.JSON(t)}
		}
		if m := list.FindStringSubmatch(path); m != nil {
			var l struct{ Data []map[string]any }
			if r := env.Get(t, "/v1/"+m[1]+"?limit=100", ws.Key); r.Status == 200 {
				r.Decode(t, &l)
			}
			return m[1], l.Data
		}
		return "", nil
	}
	totals := 0 // invoice totals checked against money.Format
	visit := func(path string, width int) string {
		b.open(path)
		at, err := url.Parse(b.location())
		if err != nil {
			t.Fatal(err)
		}
		// What a person may open ("Every field" of a record) is checked open.
		evaluate[bool](b, `[...document.querySelectorAll("details")].every((d) => d.open = true)`)
		found := evaluate[[]string](b, layoutCheck+`(`+fmt.Sprint(width >= 1280)+`)`)
		// A phone zooms out to show a page wider than the screen.
		if w := evaluate[int](b, `innerWidth`); w != width {
			found = append(found, fmt.Sprintf("the window shows %d px: the page is wider than the screen", w))
		}
		body := evaluate[string](b, `document.body.innerText`)
		if strings.Contains(body, "Something went wrong") || strings.Contains(body, "Page not found") {
			found = append(found, "an error page")
		}
		for _, v := range b.cspViolations() {
			found = append(found, "CSP violation: "+v)
		}
		found = append(found, b.fieldNames()...)
		found = append(found, evaluate[[]string](b, lowContrast)...)
		if width >= 1280 && scheme == "light" {
			shown := strings.Join(strings.Fields(body), " ")
			if strings.TrimSuffix(at.Path, "/") == "/admin/w/"+ws.ID {
				found = append(found, openOwed(shown)...)
			}
			res, recs := throughV1(at.Path)
			for _, rec := range recs {
				var must []string // the amounts the page must show in the currency's unit
				if recordPage.MatchString(at.Path) {
					for k := range rec {
						if strings.HasSuffix(k, "_cents") {
							must = append(must, k)
						}
					}
				} else if n, _ := rec["number"].(string); n != "" && strings.Contains(shown, n) { // a list shows its first page
					must = []string{"amount_incl_vat_cents"}
				}
				wrong, checked := minorUnits(shown, rec, must)
				if res == "invoices" {
					totals += checked
				}
				found = append(found, wrong...)
			}
		}
		for _, f := range found {
			problems[at.Path] = append(problems[at.Path], fmt.Sprintf("%d px, %s: %s", width, scheme, f))
		}
		return at.Path
	}
	phone := func() { b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)) }
	laptop := func() { b.do("laptop viewport", chromedp.EmulateViewport(1280, 900)) }
	links := func() []string {
		hrefs := evaluate[[]string](b, `[...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href"))`)
		var out []string
		for _, h := range hrefs {
			if strings.HasPrefix(h, "/admin") && !strings.HasPrefix(h, "/admin/assets") && !strings.ContainsAny(h, "?#") && !strings.HasSuffix(h, "/pdf") {
				out = append(out, h)
			}
		}
		return out
	}

	// Before signing in: the first-run setup (when no admin exists yet in
	// this test process) and the sign-in page.
	var pages []string
	noAdmin, err := env.DB.Writer.AdminUser.Query().Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	first := []string{"/admin/login"}
	if noAdmin == 0 {
		first = []string{"/admin/setup"}
	}
	phone()
	for _, p := range first {
		visit(p, 390)
	}
	laptop()
	for _, p := range first {
		pages = append(pages, visit(p, 1280))
	}
	email := webtest.NewAdmin(t, env)
	pages = append(pages, visit("/admin/login", 1280))
	phone()
	visit("/admin/login", 390)
	laptop()
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")

	// Signed in, at 1280 px: follow links from the busy workspace first,
	// then the workspaces page; two pages of each shape.
	queue := []string{"/admin/w/" + ws.ID + "/", "/admin/"}
	records := map[string][]string{} // resource → record pages linked
	seen, shapes := map[string]bool{}, map[string]int{}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] || shapes[shapeOf(path)] >= 2 {
			continue
		}
		seen[path] = true
		shapes[shapeOf(path)]++
		pages = append(pages, visit(path, 1280))
		for _, l := range links() {
			queue = append(queue, l)
			if m := recordPage.FindStringSubmatch(l); m != nil && !slices.Contains(records[m[1]], l) && len(records[m[1]]) < 40 {
				records[m[1]] = append(records[m[1]], l)
			}
		}
	}

	// Record pages with their sub-tables filled: two pages of a shape may
	// both show "None." where another record has rows. Of the records the
	// links reached, the pages that fill each sub-table are checked too.
	for _, res := range slices.Sorted(maps.Keys(records)) {
		found := evaluate[map[string][]subTable](b, `(async (urls) => {
			const out = {};
			for (const u of urls) {
				const doc = new DOMParser().parseFromString(await (await fetch(u)).text(), "text/html");
				out[u] = (`+subTables+`)(doc);
			}
			return out;
		})(`+jsStrings(records[res])+`)`)
		filled := map[string]bool{}      // sub-table → a checked page fills it
		for _, u := range records[res] { // the first page to fill each sub-table
			fills := false
			for _, st := range found[u] {
				if st.Filled && !filled[st.Title] {
					filled[st.Title], fills = true, true
				}
			}
			if fills {
				pages = append(pages, visit(u, 1280))
			}
		}
		for _, st := range mustFill[res] {
			if !filled[st] {
				t.Errorf("no %s page with its %s filled among the %d reached: the layout of that sub-table is not checked", res, st, len(records[res]))
			}
		}
		t.Logf("%s: sub-tables checked filled: %v", res, slices.Sorted(maps.Keys(filled)))
	}
	for _, r := range routes {
		re := routePattern(r)
		if r == "/admin/setup" && noAdmin > 0 {
			continue // only served while no admin exists; another test of this process made one
		}
		if r == web.PickPath {
			continue // a part of the invoice form, which is checked
		}
		if strings.HasSuffix(r, "/pdf") {
			continue // a PDF, not a page: web's print tests read it with pdftotext
		}
		if !slices.ContainsFunc(pages, func(p string) bool { return re.MatchString(strings.TrimSuffix(p, "/")) }) {
			t.Errorf("no page of route %s was reached by following the UI's links", r)
		}
	}

	// Names are shown as typed, and the icon is served.
	b.open("/admin/w/" + ws.ID + "/roles")
	if body := evaluate[string](b, `document.querySelector("main").innerText`); !strings.Contains(body, "client reader") {
		t.Errorf("the roles page does not show the role's name as typed:\n%s", body)
	}
	if typ := evaluate[string](b, `(async (l) => l ? fetch(l.href).then(r => r.ok ? r.headers.get("content-type") : "HTTP " + r.status) : "no <link rel=icon>")(document.querySelector('link[rel~="icon"]'))`); typ != "image/svg+xml" {
		t.Errorf("the icon is served as %q", typ)
	}

	if dashboards == 0 {
		t.Error("the busy workspace's dashboard was not checked against /v1")
	}
	if totals == 0 {
		t.Error("no invoice's amount was checked against money.Format: the minor units check checked nothing")
	}

	// Picking an item in an invoice's line is swapped in by htmx: the
	// swapped parts are checked too, with the inline style a browser
	// extension may give the fields (CSSOM, which the policy allows), which
	// htmx would copy onto the new fields.
	var items struct{ Data []struct{ Name string } }
	env.Get(t, "/v1/items?limit=1", ws.Key).WantStatus(t, 200).Decode(t, &items)
	if len(items.Data) == 0 {
		t.Fatal("the busy workspace has no item to pick")
	}
	form := "/admin/w/" + ws.ID + "/records/invoices/new"
	b.open(form)
	b.do("style the fields", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("input, select").forEach((e) => e.style.color = "inherit")`))
	b.fill("#f-lines-0-description", items.Data[0].Name[:min(len(items.Data[0].Name), 6)])
	b.waitVisible("#picks-lines-0 button.pick")
	b.click("#picks-lines-0 button.pick")
	b.until("the picked item's price", `!!document.querySelector("#f-lines-0-unit_price_cents") && document.querySelector("#f-lines-0-unit_price_cents").value !== ""`)
	for _, v := range b.cspViolations() {
		problems[form] = append(problems[form], "1280 px, light, after picking an item: CSP violation: "+v)
	}
	for _, f := range b.fieldNames() {
		problems[form] = append(problems[form], "1280 px, light, after picking an item: "+f)
	}

	// A list's live search is swapped in by htmx too.
	search := "/admin/w/" + ws.ID + "/records/invoices"
	b.open(search)
	b.do("style the fields", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("input, select, #results a").forEach((e) => e.style.color = "inherit")`))
	b.do("mark the results", chromedp.Evaluate[chromedp.Void](`document.querySelector("#results").dataset.old = "1"`))
	b.fill("#q", "INV-")
	b.until("the search's results", `!!document.querySelector("#results") && !document.querySelector("#results").dataset.old`)
	for _, v := range b.cspViolations() {
		problems[search] = append(problems[search], "1280 px, light, after a search: CSP violation: "+v)
	}
	for _, f := range b.fieldNames() {
		problems[search] = append(problems[search], "1280 px, light, after a search: "+f)
	}

	// Dark, as the system's colour scheme asks: a page of every shape.
	dark := func(on bool) {
		var features []*emulation.MediaFeature
		if on {
			features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
		}
		b.do("colour scheme", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
			return err
		}))
	}
	dark(true)
	scheme = "dark"
	if !evaluate[bool](b, `matchMedia("(prefers-color-scheme: dark)").matches`) {
		t.Fatal("the browser does not emulate a dark colour scheme")
	}
	darkShapes := map[string]bool{}
	for _, p := range pages {
		if !darkShapes[shapeOf(p)] && p != "/admin/setup" && p != "/admin/login" {
			darkShapes[shapeOf(p)] = true
			visit(p, 1280)
		}
	}
	dark(false)
	scheme = "light"

	// The same pages on a phone.
	phone()
	defer laptop()
	for _, p := range pages {
		if p != "/admin/setup" && p != "/admin/login" { // signed in, they redirect; checked above
			visit(p, 390)
		}
	}

	// On a phone the navigation is behind the top bar's Menu button, every
	// link of it in view once open; Escape closes it again.
	b.open("/admin/w/" + ws.ID + "/")
	invoices := `[...document.querySelectorAll("a")].find((a) => a.textContent.trim() === "Invoices" && a.checkVisibility())`
	shownInView := `((a) => { if (!a) return "not shown"; const r = a.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth ? "" : "out of view at " + Math.round(r.left) + " px"; })(` + invoices + `)`
	if got := evaluate[string](b, shownInView); got != "not shown" {
		t.Errorf("on a phone, before the menu is opened, the Invoices link is %q; want it in the menu", got)
	}
	if got := b.expanded("Menu"); got != "button, collapsed" {
		t.Errorf("to a screen reader the closed menu's button is %q", got)
	}
	b.click(".topbar details.menu > summary")
	if got := b.expanded("Menu"); got != "button, expanded" {
		t.Errorf("to a screen reader the open menu's button is %q", got)
	}
	if got := evaluate[string](b, shownInView); got != "" {
		t.Errorf("on a phone, with the menu open, the Invoices link is %s", got)
	}
	if got := evaluate[string](b, `document.activeElement.textContent.trim()`); got != "Menu" {
		t.Errorf("after opening the menu the focus is on %q", got)
	}
	b.do("Escape", chromedp.KeyEvent(kb.Escape))
	if evaluate[bool](b, `document.querySelector("details.menu").open`) || evaluate[string](b, shownInView) != "not shown" {
		t.Error("Escape does not close the menu")
	}

	t.Logf("checked %d pages of %d shapes at 1280 and 390 px", len(pages), len(shapes))
	for _, p := range slices.Sorted(maps.Keys(problems)) {
		t.Errorf("%s:\n  %s", p, strings.Join(problems[p], "\n  "))
	}
}

// evaluate runs a script in the page and returns its value (a promise's, once settled).
func evaluate[T any](b *tab, script string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %.60s…: %v", script, err)
	}
	return v
}

// cspRecorder collects the page's Content-Security-Policy violations into
// window.__csp from the first line of each document on, so violations of
// the HTML itself (an inline style attribute) are caught as well as those
// of later htmx swaps.
const cspRecorder = `window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
	const at = (e.sourceFile || e.documentURI || "").replace(location.origin, "") + (e.lineNumber ? ":" + e.lineNumber : "");
	window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "?") + " at " + at + (e.sample ? " (" + JSON.stringify(e.sample) + ")" : ""));
}, true);`

// recordCSP installs cspRecorder in every document the tab opens.
func (b *tab) recordCSP() {
	b.t.Helper()
	b.do("record CSP violations", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspRecorder})
		return err
	}))
}

// cspViolations waits until htmx is done with the page (no request,
// swap or settle under way), then returns and clears the violations
// recorded since the document opened or the last call.
func (b *tab) cspViolations() []string {
	b.t.Helper()
	return evaluate[[]string](b, `(async () => {
		const busy = () => `+htmxBusy+`;
		for (let i = 0; i < 40 && busy(); i++) await new Promise((r) => setTimeout(r, 50));
		await new Promise((r) => setTimeout(r, 50)); // violation events are queued as tasks
		const n = {};
		for (const v of window.__csp || ["no CSP recorder in this document"]) n[v] = (n[v] || 0) + 1;
		const out = Object.entries(n).map(([v, k]) => (k > 1 ? k + " × " : "") + v);
		window.__csp = [];
		return out;
	})()`)
}

// fieldRoles are the accessibility roles Chrome gives form fields.
var fieldRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "spinbutton": true, "checkbox": true,
	"radio": true, "listbox": true, "slider": true, "switch": true, "Date": true, "DateTime": true, "InputTime": true, "ColorWell": true}

// countFields counts the form fields a person can reach: inputs (not
// hidden, not buttons; a file's is a button to the accessibility tree),
// selects and textareas that are rendered.
const countFields = `[...document.querySelectorAll("input, select, textarea")].filter((e) =>
	!["hidden", "submit", "button", "reset", "image", "file"].includes(e.type) && e.checkVisibility({visibilityProperty: true})).length`

// fieldNames lists the page's form fields without an accessible name and
// the names two fields share, as Chrome's accessibility tree (what a
// screen reader reads) names them. (DOM.getDocument would reset the node
// ids chromedp's queries hold: the fields are found by their roles, and
// their count checked against the page's.)
func (b *tab) fieldNames() []string {
	b.t.Helper()
	var out []string
	b.do("read the accessibility tree", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		tree, err := cdp.Call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return err
		}
		describe := func(id cdp.BackendNodeID) string { // DOM.describeNode tracks no node
			d, err := cdp.Call(ctx, t, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: id})
			if err != nil || d.Node == nil {
				return "a field"
			}
			s := strings.ToLower(d.Node.NodeName)
			for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
				if a := d.Node.Attributes; a[i] == "id" || a[i] == "name" {
					s += fmt.Sprintf("[%s=%q]", a[i], a[i+1])
				}
			}
			return s
		}
		role := func(n *accessibility.Node) string {
			var r string
			if n != nil && n.Role != nil {
				_ = json.Unmarshal(n.Role.Value, &r)
			}
			return r
		}
		nodes := map[accessibility.NodeID]*accessibility.Node{}
		for _, n := range tree.Nodes {
			nodes[n.NodeID] = n
		}
		// A date field's parts (day, month, year) are fields inside it.
		inField := func(n *accessibility.Node) bool {
			for p := nodes[n.ParentID]; p != nil; p = nodes[p.ParentID] {
				if fieldRoles[role(p)] {
					return true
				}
			}
			return false
		}
		byName := map[string][]cdp.BackendNodeID{}
		var names []string
		seen := 0
		for _, n := range tree.Nodes {
			if n.Ignored || n.BackendDOMNodeID == 0 || !fieldRoles[role(n)] || inField(n) {
				continue
			}
			seen++
			var name string
			if n.Name != nil {
				_ = json.Unmarshal(n.Name.Value, &name)
			}
			if name = strings.Join(strings.Fields(name), " "); name == "" {
				out = append(out, "the "+role(n)+" "+describe(n.BackendDOMNodeID)+" has no accessible name")
				continue
			}
			if byName[name] == nil {
				names = append(names, name)
			}
			byName[name] = append(byName[name], n.BackendDOMNodeID)
		}
		for _, name := range names {
			if ids := byName[name]; len(ids) > 1 {
				var what []string
				for _, id := range ids[:min(len(ids), 3)] {
					what = append(what, describe(id))
				}
				out = append(out, fmt.Sprintf("%d fields are named %q: %s", len(ids), name, strings.Join(what, ", ")))
			}
		}
		// A field whose role the list above does not know would go unchecked.
		fields, err := chromedp.Evaluate[int](countFields)(ctx, t)
		if err != nil {
			return err
		}
		if seen != fields {
			out = append(out, fmt.Sprintf("the page has %d form fields, the accessibility tree %d of the roles checked", fields, seen))
		}
		return nil
	}))
	return out
}

// lowContrast lists text whose colour is too close to its background
// (WCAG: 4.5:1, 3:1 for large text), for the elements holding text of
// their own; backgrounds are composed from the root down.
const lowContrast = `(() => {
	const out = [];
	const rgba = (s) => { const m = (s.match(/[\d.]+/g) || [0, 0, 0, 0]).map(Number); return m.length === 3 ? [...m, 1] : m; };
	const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
	const lum = (c) => { const f = (v) => { v /= 255; return v <= .03928 ? v / 12.92 : ((v + .055) / 1.055) ** 2.4; }; return .2126 * f(c[0]) + .7152 * f(c[1]) + .0722 * f(c[2]); };
	const what = (e) => e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "") +
		" " + JSON.stringify((e.innerText || "").trim().replace(/\s+/g, " ").slice(0, 30));
	const seen = new Set();
	for (const e of document.body.querySelectorAll("*")) {
		if (e.closest("svg, script, style, option") || ![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
		if (!e.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
		const r = e.getBoundingClientRect();
		if (r.width <= 1 || r.height <= 1) continue; // visually hidden, read by screen readers only
		let bg = [255, 255, 255, 1];
		const chain = [];
		for (let a = e; a; a = a.parentElement) chain.unshift(a);
		for (const a of chain) bg = over(rgba(getComputedStyle(a).backgroundColor), bg);
		const cs = getComputedStyle(e);
		const fg = over(rgba(cs.color), bg);
		const [l1, l2] = [lum(fg), lum(bg)].sort((x, y) => y - x);
		const ratio = (l1 + .05) / (l2 + .05);
		const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight) >= 700;
		const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
		const key = cs.color + "/" + bg.join();
		if (ratio < need && !seen.has(key)) {
			seen.add(key);
			out.push("text " + what(e) + " has a contrast of " + ratio.toFixed(2) + " (" + cs.color + " on rgb(" + bg.slice(0, 3).map(Math.round).join(", ") + "))");
		}
	}
	return out.slice(0, 8);
})()`

// minorUnits lists the amounts, quantities and rates of a record (as read
// through /v1) that page shows as the API keeps them (minor units,
// thousandths, basis points) rather than in a person's unit, and the
// amounts of must (top-level fields) it does not show as money.Format
// writes them; totals is how many of those were checked. Values under
// 1000 and amounts of currencies without decimals read the same either
// way, so are not checked.
func minorUnits(page string, rec map[string]any, must []string) (found []string, totals int) {
	currency, _ := rec["currency_code"].(string)
	for _, k := range must {
		if v, ok := rec[k].(float64); ok && currency != "" {
			totals++
			if want := strings.Join(strings.Fields(money.Format(int64(v), currency, "en")), " "); !strings.Contains(page, want) {
				found = append(found, fmt.Sprintf("%s %d is not shown as %q", k, int64(v), want))
			}
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(strings.TrimPrefix(path+"."+k, "."), v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case float64:
			n := int64(v)
			unit := path[strings.LastIndex(path, ".")+1:]
			switch {
			case math.Abs(v) < 1000, strings.HasSuffix(unit, "_cents") && money.Digits(currency) == 0:
				return
			case strings.HasSuffix(unit, "_cents"), strings.HasSuffix(unit, "_milli"), strings.HasSuffix(unit, "_bp"):
				raw := strconv.FormatInt(max(n, -n), 10)
				grouped := groupDigits(raw)
				re := regexp.MustCompile(`(?:^|[^\w.,])(` + raw + `|` + regexp.QuoteMeta(grouped) + `)(?:$|[^\w.,]|[.,](?:$|\D))`)
				if m := re.FindString(page); m != "" {
					found = append(found, fmt.Sprintf("%s %d is shown as %q", path, n, strings.TrimSpace(m)))
				}
			}
		}
	}
	walk("", rec)
	return found, totals
}

// groupDigits writes 1234567 as 1,234,567.
func groupDigits(s string) string {
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// expanded is how Chrome's accessibility tree (what a screen reader
// reads) presents the control named name: "button, expanded", "button,
// collapsed", or what else it finds.
func (b *tab) expanded(name string) string {
	b.t.Helper()
	var got string
	b.do("read the accessibility tree", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		tree, err := cdp.Call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return err
		}
		str := func(v *accessibility.Value) string {
			var s string
			if v != nil {
				_ = json.Unmarshal(v.Value, &s)
			}
			return s
		}
		for _, n := range tree.Nodes {
			if n.Ignored || str(n.Name) != name || str(n.Role) == "StaticText" {
				continue
			}
			got = str(n.Role) + ", not expandable"
			if str(n.Role) == "DisclosureTriangle" { // a <summary>: a button that expands
				got = "button, not expandable"
			}
			for _, p := range n.Properties {
				if p.Name == accessibility.PropertyNameExpanded {
					var on bool
					_ = json.Unmarshal(p.Value.Value, &on)
					got = strings.Replace(got, "not expandable", map[bool]string{true: "expanded", false: "collapsed"}[on], 1)
				}
			}
			return nil
		}
		got = "not in the accessibility tree"
		return nil
	}))
	return got
}
