// Package webtest starts real servers with the admin UI mounted, for the
// UI's handler and browser tests, and signs admins in over HTTP.
package webtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/session"
)

// Start runs a server with the admin UI; adjust, when given, tunes the UI
// before it is mounted.
func Start(t testing.TB, adjust ...func(*web.UI)) *apitest.Env {
	t.Helper()
	db, _ := apitest.DB(t)
	return StartOn(t, db, adjust...)
}

// StartOn is Start on a database handle of the caller's (a second
// process's pools on the same database).
func StartOn(t testing.TB, db *database.DB, adjust ...func(*web.UI)) *apitest.Env {
	t.Helper()
	return start(t, db, nil, adjust...)
}

// StartWith is Start with the API's configuration adjusted (its webhook
// settings, say).
func StartWith(t testing.TB, config func(*rest.Config), adjust ...func(*web.UI)) *apitest.Env {
	t.Helper()
	db, _ := apitest.DB(t)
	return start(t, db, config, adjust...)
}

func start(t testing.TB, db *database.DB, config func(*rest.Config), adjust ...func(*web.UI)) *apitest.Env {
	t.Helper()
	var opts []apitest.Option
	if config != nil {
		opts = append(opts, config)
	}
	srv := apitest.NewServer(t, db, opts...)
	ui := web.New(srv.Core)
	for _, f := range adjust {
		f(ui)
	}
	srv.Mount(ui.Mount)
	srv.AllowBody("POST", web.CompanyPath, web.CompanyBodyLimit) // a logo upload
	return apitest.Serve(t, srv)
}

// Password is the password of every admin the tests create.
const Password = "correct horse battery"

// NewAdmin creates an admin with a unique email and returns the email.
func NewAdmin(t testing.TB, env *apitest.Env) string {
	t.Helper()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	email := "admin-" + hex.EncodeToString(b) + "@example.com"
	if _, err := session.CreateAdmin(context.Background(), env.DB.Writer, email, Password); err != nil {
		t.Fatal(err)
	}
	return email
}

// Client is a browser-like HTTP client: it keeps cookies and does not
// follow redirects, so tests see each 303.
type Client struct {
	t    testing.TB
	env  *apitest.Env
	HTTP *http.Client
}

// NewClient returns a client without a session.
func NewClient(t testing.TB, env *apitest.Env) *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{t: t, env: env, HTTP: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// SignedIn returns a client signed in as a new admin.
func SignedIn(t testing.TB, env *apitest.Env) *Client {
	t.Helper()
	c := NewClient(t, env)
	email := NewAdmin(t, env)
	p := c.Get("/admin/login")
	if p.Status != 200 {
		t.Fatalf("login page: %d", p.Status)
	}
	r := c.Post("/admin/login", url.Values{"csrf": {p.Token()}, "email": {email}, "password": {Password}})
	if r.Status != 303 || r.Header.Get("Location") != "/admin/" {
		t.Fatalf("sign in: %d %s\n%s", r.Status, r.Header.Get("Location"), r.Body)
	}
	return c
}

// Page is a received response.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

var (
	csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	csrfMeta  = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`)
)

// Token is the CSRF token a page's forms carry ("" when none).
func (p *Page) Token() string {
	if m := csrfInput.FindStringSubmatch(p.Body); m != nil {
		return m[1]
	}
	if m := csrfMeta.FindStringSubmatch(p.Body); m != nil {
		return m[1]
	}
	return ""
}

// Get fetches a path.
func (c *Client) Get(path string) *Page { return c.do("GET", path, nil) }

// Post sends a form.
func (c *Client) Post(path string, form url.Values) *Page { return c.do("POST", path, form) }

// PostWithToken sends a form with the CSRF token of the page at from.
func (c *Client) PostWithToken(from, path string, form url.Values) *Page {
	c.t.Helper()
	tok := c.Get(from).Token()
	if tok == "" {
		c.t.Fatalf("no CSRF token on %s", from)
	}
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", tok)
	return c.Post(path, form)
}

// Follow asks for the page a 303 leads to, as a browser does after a
// form; anything but a 303 fails the test.
func (c *Client) Follow(p *Page) *Page {
	c.t.Helper()
	to := p.Header.Get("Location")
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(to, "/") {
		c.t.Fatalf("want a 303 to a page of this server, got %d %q\n%s", p.Status, to, p.Body)
	}
	return c.Get(to)
}

func (c *Client) do(method, path string, form url.Values) *Page {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.env.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return &Page{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// Records adds what the demo data may lack to a workspace (a shipment in
// two parcels, a gift card, a payment on the newest invoice) and returns
// the shipment's id.
func Records(t testing.TB, env *apitest.Env, wsID string) string {
	t.Helper()
	ctx := context.Background()
	db := env.DB.Writer
	so, err := db.SalesOrder.Create().SetWorkspaceID(wsID).SetNumber("SO-1001").SetDate("2026-11-02").
		SetStatus("shipped").SetClientName("Acme Outfitters").SetAmountInclVatCents(12900).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 3, 9, 30, 0, 0, time.UTC)
	shp, err := db.Shipment.Create().SetWorkspaceID(wsID).SetSalesOrderID(so.ID).SetNumber("SHP-1001").
		SetStatus("in_transit").SetCarrier("DHL").SetService("Express").SetTrackingNo("JD014600003828").
		SetPackages([]shape.Package{{TrackingNo: "JD014600003828", WeightG: 1250}, {TrackingNo: "JD014600003829", WeightG: 800}}).
		SetCostCents(1490).SetShippedAt(at).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range []struct{ status, desc, loc string }{
		{"picked_up", "Picked up by the carrier", "Lyon, FR"},
		{"in_transit", "Arrived at the sorting hub", "Paris, FR"},
		{"out_for_delivery", "Out for delivery", "Brussels, BE"},
	} {
		if err := db.ShipmentEvent.Create().SetWorkspaceID(wsID).SetShipmentID(shp.ID).
			SetOccurredAt(at.Add(time.Duration(i) * 7 * time.Hour)).SetStatus(ev.status).
			SetDescription(ev.desc).SetLocation(ev.loc).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	if err := db.GiftCard.Create().SetWorkspaceID(wsID).SetCodeHash(hex.EncodeToString(b)).SetCodeLast4("7Q2X").
		SetInitialBalanceCents(5000).SetBalanceCents(3250).SetLedger([]shape.LedgerEntry{
		{At: "2026-11-01T10:00:00Z", Kind: "issue", AmountCents: 5000, BalanceAfterCents: 5000},
		{At: "2026-11-04T15:12:00Z", Kind: "redeem", AmountCents: -1750, BalanceAfterCents: 3250, SalesOrderID: &so.ID},
	}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	inv, err := db.Invoice.Query().Where(invoice.WorkspaceID(wsID)).Order(ent.Desc(invoice.FieldCreatedAt)).First(ctx)
	if ent.IsNotFound(err) {
		return shp.ID
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InvoicePayment.Create().SetWorkspaceID(wsID).SetInvoiceID(inv.ID).SetExternalID("pay-" + hex.EncodeToString(b)).
		SetNumber("PAY-1").SetDate("2026-11-05").SetAmountInclVatCents(1000).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return shp.ID
}
