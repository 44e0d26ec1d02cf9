package web_test

import (
	"html"
	"regexp"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// The dashboard keeps its counts and sums between writes; a write answered
// by another server (its own pools on PostgreSQL) shows on the next page,
// and a write to another workspace leaves the kept page as it was.
func TestDashboardSeesOtherServersWrites(t *testing.T) {
	t.Parallel()
	shared, _ := apitest.DB(t)
	a := webtest.StartOn(t, shared)
	db := apitest.AnotherProcess(t)
	b := webtest.StartOn(t, db)
	ws := a.Workspace(t, "business", true, true)
	other := a.Workspace(t, "business", true, true)
	c := webtest.SignedIn(t, b)

	clients := regexp.MustCompile(`<div class="n">(\d+)</div>\s*<div class="label">Clients</div>`)
	open := regexp.MustCompile(`<div class="label">Open</div><div class="n">([^<]*)</div>`)
	seen := func() (string, string) {
		t.Helper()
		p := c.Get("/admin/w/" + ws.ID)
		n, o := clients.FindStringSubmatch(p.Body), open.FindStringSubmatch(p.Body)
		if p.Status != 200 || n == nil || o == nil {
			t.Fatalf("dashboard: %d\n%.3000s", p.Status, p.Body)
		}
		return n[1], html.UnescapeString(o[1])
	}
	want := func(what, clients, open string) {
		t.Helper()
		for range 2 { // the second is kept
			if n, o := seen(); n != clients || o != open {
				t.Fatalf("%s: the dashboard shows %s clients and %s open; want %s and %s", what, n, o, clients, open)
			}
		}
	}
	want("empty", "0", "0")
	a.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Seen"}).WantStatus(t, 201)
	want("a client created on the other server", "1", "0")
	a.Do(t, "POST", "/v1/clients", other.Key, map[string]any{"name": "Elsewhere"}).WantStatus(t, 201)
	want("a client of another workspace", "1", "0")
	inv := a.Do(t, "POST", "/v1/invoices", ws.Key, map[string]any{"client_name": "Payer", "currency_code": "EUR",
		"lines": []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000, "vat_rate_bp": 2000}}}).JSON(t)["id"].(string)
	want("a draft invoice", "1", "0")
	a.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	want("the invoice sent (an update)", "1", "€120.00")
	a.Do(t, "POST", "/v1/invoices/"+inv+"/void", ws.Key, nil).WantStatus(t, 200)
	want("the invoice voided", "1", "0")
}
