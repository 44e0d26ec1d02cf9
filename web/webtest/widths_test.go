package webtest_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/api/access"
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
func TestAdminPagesAtEveryWidth(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}

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
		for _, f := range found {
			problems[at.Path] = append(problems[at.Path], fmt.Sprintf("%d px: %s", width, f))
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

	// The same pages on a phone.
	phone()
	defer laptop()
	for _, p := range pages {
		if p != "/admin/setup" && p != "/admin/login" { // signed in, they redirect; checked above
			visit(p, 390)
		}
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
