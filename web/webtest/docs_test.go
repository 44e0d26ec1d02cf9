package webtest_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestDocsPageRendersOfflineInABrowser opens /docs in Chromium: the
// renderer must read the served OpenAPI document and show its operations,
// every request the page makes must go to the test server (nothing from a
// CDN or a font service), and nothing may break the page's CSP or throw.
func TestDocsPageRendersOfflineInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	origin, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var requests, problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text+" "+exceptionDescription(ev.ExceptionDetails))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, "console: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	// A blocked request never reaches the network: record what the CSP refuses too.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener("securitypolicyviolation",
			e => window.__csp.push(e.effectiveDirective + " " + e.blockedURI));`,
	}); err != nil {
		t.Fatal(err)
	}

	b.open("/docs")
	b.waitText("List invoices, newest first.")
	b.do("the operation's section is rendered", chromedp.WaitVisible(chromedp.CSS(`[id="tag/invoices/operation/listInvoices"] h2`)))
	if h := b.text(`[id="tag/invoices/operation/listInvoices"] h2`); h != "List invoices, newest first." {
		t.Errorf("the operation's heading is %q", h)
	}
	b.waitText("Ledgerbase workspace API") // info.title, from the document
	csp, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp`))
	if err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	sawDocument := false
	for _, r := range requests {
		u, err := url.Parse(r)
		if err == nil && u.Scheme == "blob" { // an object in the page's memory (Redoc's search worker), named by its origin
			u, err = url.Parse(u.Opaque)
		}
		if err == nil && u.Scheme == "data" { // inline, no request
			continue
		}
		if err != nil {
			t.Errorf("the page requested %q: %v", r, err)
			continue
		}
		if u.Scheme+"://"+u.Host != origin.Scheme+"://"+origin.Host {
			t.Errorf("the page requested %s, outside the server", r)
		}
		sawDocument = sawDocument || u.Path == "/v1/openapi.json"
	}
	if !sawDocument {
		t.Errorf("the page never fetched /v1/openapi.json; requests: %v", requests)
	}
	for _, v := range csp {
		t.Errorf("the page's CSP refused %s", v)
	}
	for _, p := range problems {
		t.Errorf("%s", p)
	}
	if t.Failed() {
		t.Logf("requests: %s", strings.Join(requests, "\n"))
	}
}

func exceptionDescription(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// The admin UI links the API reference, which is served without a session.
func TestAdminLinksTheDocsPage(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	c := webtest.SignedIn(t, env)
	if p := c.Get("/admin/"); !strings.Contains(p.Body, `<a href="/docs">API docs</a>`) {
		t.Fatalf("the admin layout has no link to /docs:\n%s", p.Body)
	}
	p := webtest.NewClient(t, env).Get("/docs")
	if p.Status != 200 || !strings.Contains(p.Body, `data-spec="/v1/openapi.json"`) {
		t.Fatalf("/docs: %d\n%s", p.Status, p.Body)
	}
	csp := p.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "http") {
		t.Fatalf("/docs CSP %q", csp)
	}
	for _, asset := range []string{"/admin/assets/redoc/redoc.standalone.js", "/admin/assets/docs.js"} {
		if a := webtest.NewClient(t, env).Get(asset); a.Status != 200 || len(a.Body) < 200 {
			t.Errorf("%s: %d, %d bytes", asset, a.Status, len(a.Body))
		}
	}
}
