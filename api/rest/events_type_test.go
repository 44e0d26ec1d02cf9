package rest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// ?type= on GET /v1/events takes exact event types and a trailing .*, in
// a comma list, compared case-sensitively; anything else (a backslash, a
// LIKE wildcard, a star elsewhere) is a 400 naming type. The answers are
// the same on SQLite and PostgreSQL.
func TestEventTypeFilterIsExactOnEveryDatabase(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	var inv string
	for range 2 {
		inv = env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Types", "lines": []obj{line("x", 1000, 1000, 0)}}).
			WantStatus(t, 201).JSON(t)["id"].(string)
	}
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, obj{"id": "types-1", "number": "P-1", "status": "completed",
		"date": "2026-01-02", "amount_incl_vat_cents": 400}).WantStatus(t, 201)
	env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "Types", "lines": []obj{line("x", 1000, 1000, 0)}}).WantStatus(t, 201)
	// invoice.created x2, invoice.sent, invoice_payment.created,
	// invoice.partially_paid, quote.created.

	count := func(pattern string) int {
		t.Helper()
		var p struct {
			Data []struct{ Type string } `json:"data"`
			Meta struct{ Total int }     `json:"meta"`
		}
		env.Get(t, "/v1/events?limit=100&type="+url.QueryEscape(pattern), ws.Key).WantStatus(t, http.StatusOK).Decode(t, &p)
		if len(p.Data) != p.Meta.Total {
			t.Fatalf("type=%s: %d events listed, total %d", pattern, len(p.Data), p.Meta.Total)
		}
		return p.Meta.Total
	}
	for pattern, want := range map[string]int{
		"invoice.*":                            4,
		"invoice.created":                      2,
		"invoice_payment.*":                    1,
		"invoice.created, quote.*":             3,
		"invoice.sent,invoice_payment.created": 2,
		"INVOICE.*":                            0,
		"Invoice.created":                      0,
		"invoice_.*":                           0,
		"invoice.paid":                         0,
		"quote.created":                        1,
	} {
		if got := count(pattern); got != want {
			t.Errorf("type=%s: %d events, want %d (%s)", pattern, got, want, apitest.Backend())
		}
	}
	for _, bad := range []string{`invoice\.*`, `invoice\.created`, "invoice.%", "invoice%", "inv_ice.created%", "*", ".*",
		"invoice*", "invoice.*.created", "*.created", "invoice.", "invoice..*", "invoice.created,", " ", "invoice .created",
		"invoice.?", "invoice.[a-z]*", "facture.créée"} {
		e := env.Get(t, "/v1/events?type="+url.QueryEscape(bad), ws.Key).WantError(t, http.StatusBadRequest, "invalid_request")
		if e["param"] != "type" {
			t.Errorf("type=%s: param %v, want type", bad, e["param"])
		}
	}
}
