package rest_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/quote"
)

// newClient creates a client through the API and returns its id.
func newClient(t *testing.T, env *apitest.Env, key, name, currency string) string {
	t.Helper()
	return env.Do(t, "POST", "/v1/clients", key, obj{"name": name, "currency_code": currency}).WantStatus(t, 201).JSON(t)["id"].(string)
}

func line(desc string, qty, price, vat int64) obj {
	return obj{"description": desc, "qty_milli": qty, "unit_price_cents": price, "vat_rate_bp": vat}
}

// wantTotals checks a document's three totals.
func wantTotals(t *testing.T, d obj, excl, vat, incl int64) {
	t.Helper()
	if d["amount_excl_vat_cents"] != float64(excl) || d["vat_amount_cents"] != float64(vat) || d["amount_incl_vat_cents"] != float64(incl) {
		t.Fatalf("totals %v / %v / %v, want %d / %d / %d", d["amount_excl_vat_cents"], d["vat_amount_cents"], d["amount_incl_vat_cents"], excl, vat, incl)
	}
}

// listIDs is the ids of a list's records and its total.
func listIDs(t *testing.T, env *apitest.Env, path, key string) ([]string, int) {
	t.Helper()
	l := getList(t, env, path, key)
	var ids []string
	for _, d := range l.Data {
		ids = append(ids, d["id"].(string))
	}
	return ids, l.Meta.Total
}

func countQuotes(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	return env.DB.Writer.Quote.Query().Where(quote.WorkspaceID(ws)).CountX(t.Context())
}

func countInvoices(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	return env.DB.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws)).CountX(t.Context())
}

func TestQuoteFromDraftToInvoice(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key, "Acme", "USD")

	// 1/3 of a unit at 5.5 %, a discounted line at 20 %, a 0 % line:
	// 333 + 18 = 351; 1.5 × 19.99 − 10 % = 26.9865 → 2699 + 539.8 → 540; 5 + 0.
	q := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_id": cli, "date": "2026-02-01", "due_date": "2026-03-01", "notes": "Valid 30 days",
		"lines": []obj{line("Third", 333, 1000, 550), {"description": "Disc", "qty_milli": 1500, "unit_price_cents": 1999, "vat_rate_bp": 2000, "discount_bp": 1000},
			line("Zero", 1000, 5, 0)}}).WantStatus(t, 201).JSON(t)
	id := q["id"].(string)
	if q["number"] != "QUO-000001" || q["status"] != "draft" || q["client_id"] != cli || q["client_name"] != "Acme" ||
		q["currency_code"] != "USD" || q["invoice_id"] != nil || q["date"] != "2026-02-01" {
		t.Fatalf("created %v", q)
	}
	wantTotals(t, q, 3037, 558, 3595)
	path := "/v1/quotes/" + id

	// Lines are replaced whole while draft; a large quantity stays exact.
	q = env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("Bulk", 1_000_000_000, 123_456, 2000), line("Half", 500, 1, 2000)}}).WantStatus(t, 200).JSON(t)
	// 1e6 × 1234.56 = 123456000000, VAT 24691200000; half a cent rounds to 1, its VAT 0.2 to 0.
	wantTotals(t, q, 123_456_000_001, 24_691_200_000, 148_147_200_001)
	if lines := q["lines"].([]any); len(lines) != 2 {
		t.Fatalf("lines %v", lines)
	}

	// Refused from draft: accept, decline, invoice.
	for _, a := range []string{"accept", "decline", "invoice"} {
		env.Do(t, "POST", path+"/"+a, ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	}
	q = env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if q["status"] != "sent" {
		t.Fatalf("sent: %v", q)
	}
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("X", 1000, 1, 0)}}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", path, ws.Key, obj{"notes": "Valid until March"}).WantStatus(t, 200)
	// Invoicing needs the client's acceptance first.
	env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantError(t, 409, "invalid_state_transition")

	q = env.Do(t, "POST", path+"/accept", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if q["status"] != "accepted" {
		t.Fatalf("accepted: %v", q)
	}
	env.Do(t, "POST", path+"/decline", ws.Key, nil).WantError(t, 409, "invalid_state_transition")

	q = env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantStatus(t, 200).JSON(t)
	invID, _ := q["invoice_id"].(string)
	if q["id"] != id || q["status"] != "invoiced" || invID == "" {
		t.Fatalf("invoiced: %v", q)
	}
	inv := env.Get(t, "/v1/invoices/"+invID, ws.Key).WantStatus(t, 200).JSON(t)
	if inv["quote_id"] != id || inv["status"] != "draft" || inv["number"] != "INV-000001" || inv["client_id"] != cli ||
		inv["currency_code"] != "USD" || inv["notes"] != "Valid until March" || inv["paid_cents"] != 0.0 || inv["credited_cents"] != 0.0 ||
		inv["remaining_cents"] != 148_147_200_001.0 || len(inv["lines"].([]any)) != 2 {
		t.Fatalf("invoice %v", inv)
	}
	wantTotals(t, inv, 123_456_000_001, 24_691_200_000, 148_147_200_001)
	for _, a := range []string{"invoice", "send", "accept", "decline"} {
		env.Do(t, "POST", path+"/"+a, ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	}
	if n := countInvoices(t, env, ws.ID); n != 1 {
		t.Fatalf("%d invoices", n)
	}

	// A quote that is declined.
	other := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "Walk-in", "lines": []obj{line("A", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)
	op := "/v1/quotes/" + other["id"].(string)
	if other["number"] != "QUO-000002" || other["currency_code"] != "EUR" || other["client_id"] != nil {
		t.Fatalf("second quote %v", other)
	}
	env.Do(t, "POST", op+"/send", ws.Key, nil).WantStatus(t, 200)
	if d := env.Do(t, "POST", op+"/decline", ws.Key, nil).WantStatus(t, 200).JSON(t); d["status"] != "declined" {
		t.Fatalf("declined %v", d)
	}
	for _, a := range []string{"accept", "invoice", "send"} {
		env.Do(t, "POST", op+"/"+a, ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	}

	// Read back through lists: status filter and q by number.
	if ids, total := listIDs(t, env, "/v1/quotes?status=invoiced", ws.Key); total != 1 || ids[0] != id {
		t.Fatalf("invoiced list %v", ids)
	}
	if ids, total := listIDs(t, env, "/v1/quotes?status=declined", ws.Key); total != 1 || ids[0] != other["id"] {
		t.Fatalf("declined list %v", ids)
	}
	if _, total := listIDs(t, env, "/v1/quotes?status=draft", ws.Key); total != 0 {
		t.Fatalf("%d drafts", total)
	}
	if ids, total := listIDs(t, env, "/v1/quotes?q=QUO-000002", ws.Key); total != 1 || ids[0] != other["id"] {
		t.Fatalf("q by number %v", ids)
	}
	if ids, total := listIDs(t, env, "/v1/quotes?client_id="+cli, ws.Key); total != 1 || ids[0] != id {
		t.Fatalf("by client %v", ids)
	}

	// Deleting the draft invoice unlinks it: the quote is accepted again and
	// may be invoiced anew, with the next number.
	env.Do(t, "DELETE", "/v1/invoices/"+invID, ws.Key, nil).WantStatus(t, 200)
	q = env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t)
	if q["status"] != "accepted" || q["invoice_id"] != nil {
		t.Fatalf("after the invoice's delete: %v", q)
	}
	q = env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if inv := env.Get(t, "/v1/invoices/"+q["invoice_id"].(string), ws.Key).WantStatus(t, 200).JSON(t); inv["number"] != "INV-000002" || inv["quote_id"] != id {
		t.Fatalf("invoiced again: %v", inv)
	}
}

func TestQuoteWritesHonourIdempotencyKeys(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	body := obj{"client_name": "Acme", "lines": []obj{line("A", 1000, 100, 2000)}}
	first := env.Do(t, "POST", "/v1/quotes", ws.Key, body, "Idempotency-Key", "q-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/quotes", ws.Key, body, "Idempotency-Key", "q-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) || countQuotes(t, env, ws.ID) != 1 {
		t.Fatalf("retried create was not a replay: %s", again.Body)
	}
	path := "/v1/quotes/" + first.JSON(t)["id"].(string)
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", path+"/accept", ws.Key, nil).WantStatus(t, 200)
	inv1 := env.Do(t, "POST", path+"/invoice", ws.Key, nil, "Idempotency-Key", "inv-1").WantStatus(t, 200)
	inv2 := env.Do(t, "POST", path+"/invoice", ws.Key, nil, "Idempotency-Key", "inv-1").WantStatus(t, 200)
	if inv2.Header.Get("Idempotent-Replayed") != "true" || string(inv2.Body) != string(inv1.Body) || countInvoices(t, env, ws.ID) != 1 {
		t.Fatalf("retried invoice was not a replay: %s", inv2.Body)
	}
	// Without the key a repeat is a new request, refused.
	env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
}

func TestQuoteWritesRefuseBadInputAndOthersRecords(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	foreign := env.Workspace(t, "growth", false, false)
	foreignClient := newClient(t, env, foreign.Key, "Theirs", "EUR")
	foreignItem := env.Do(t, "POST", "/v1/items", foreign.Key, obj{"name": "Their item"}).WantStatus(t, 201).JSON(t)["id"].(string)
	ok := []obj{line("A", 1000, 100, 0)}

	cases := []struct {
		body  obj
		param string
	}{
		{obj{"client_name": "A", "lines": ok, "colour": "red"}, "colour"},
		{obj{"client_name": "A", "lines": []obj{line("A", -1, 100, 0)}}, "lines[0].qty_milli"},
		{obj{"client_name": "A", "lines": ok, "amount_incl_vat_cents": 100}, "amount_incl_vat_cents"},
		{obj{"client_name": "A", "lines": ok, "status": "accepted"}, "status"},
		{obj{"client_name": "A", "lines": ok, "invoice_id": "inv_x"}, "invoice_id"},
		{obj{"client_name": "A", "lines": []obj{{"description": "A", "qty_milli": "1", "unit_price_cents": 1}}}, "lines[0].qty_milli"},
		{obj{"client_name": "A", "lines": []obj{line("A", 1000, 100, 10_001)}}, "lines[0].vat_rate_bp"},
		{obj{"client_name": "A", "lines": []obj{line("A", 9_000_000_000_000, 9_000_000_000_000, 0)}}, "lines[0].qty_milli"},
		{obj{"lines": ok}, "client_id"},
		{obj{"client_id": foreignClient, "lines": ok}, "client_id"},
		{obj{"client_name": "A", "lines": []obj{{"item_id": foreignItem, "description": "A", "qty_milli": 1000, "unit_price_cents": 1}}}, "lines[0].item_id"},
	}
	for _, c := range cases {
		wantParam(t, env.Do(t, "POST", "/v1/quotes", ws.Key, c.body).WantError(t, 400, "invalid_request"), c.param)
	}
	if n := countQuotes(t, env, ws.ID); n != 0 {
		t.Fatalf("refused creates wrote %d quotes", n)
	}
	// The number counter was not used either: the first quote is QUO-000001.
	q := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "A", "lines": ok}).WantStatus(t, 201).JSON(t)
	if q["number"] != "QUO-000001" {
		t.Fatalf("number %v", q["number"])
	}
	path := "/v1/quotes/" + q["id"].(string)
	wantParam(t, env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("A", -5, 1, 0)}}).WantError(t, 400, "invalid_request"), "lines[0].qty_milli")
	wantParam(t, env.Do(t, "PATCH", path, ws.Key, obj{"vat_amount_cents": 1}).WantError(t, 400, "invalid_request"), "vat_amount_cents")
	wantParam(t, env.Do(t, "POST", path+"/send", ws.Key, obj{"now": true}).WantError(t, 400, "invalid_request"), "now")
	if got := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t); got["status"] != "draft" || got["amount_excl_vat_cents"] != 100.0 {
		t.Fatalf("refused writes changed the quote: %v", got)
	}

	// Another workspace's quote is not found, by any route.
	for _, r := range []struct{ method, path string }{{"GET", path}, {"PATCH", path}, {"POST", path + "/send"}, {"POST", path + "/invoice"}} {
		var b any
		if r.method == "PATCH" {
			b = obj{"notes": "x"}
		}
		env.Do(t, r.method, r.path, foreign.Key, b).WantError(t, 404, "not_found")
	}

	// Keys that may not write quotes (or the invoice a quote makes) get 403
	// and change nothing.
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	ws.Role(t, "quoter", "quotes:write,invoices:read,clients:read")
	quoter := ws.NewKey(t, access.KeySpec{Role: "quoter"})
	ws.Role(t, "reader", "quotes:read")
	reader := ws.NewKey(t, access.KeySpec{Role: "reader"})
	for _, key := range []string{viewer, reader} {
		env.Do(t, "POST", "/v1/quotes", key, obj{"client_name": "A", "lines": ok}).WantError(t, 403, "permission_denied")
		env.Do(t, "PATCH", path, key, obj{"notes": "x"}).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", path+"/send", key, nil).WantError(t, 403, "permission_denied")
		env.Get(t, path, key).WantStatus(t, 200)
	}
	env.Do(t, "POST", path+"/send", quoter, nil).WantStatus(t, 200)
	env.Do(t, "POST", path+"/accept", quoter, nil).WantStatus(t, 200)
	e := env.Do(t, "POST", path+"/invoice", quoter, nil).WantError(t, 403, "permission_denied")
	if m, _ := e["message"].(string); m == "" {
		t.Fatal("no message")
	}
	if got := env.Get(t, path, ws.Key).JSON(t); got["status"] != "accepted" || countInvoices(t, env, ws.ID) != 0 || countQuotes(t, env, ws.ID) != 1 {
		t.Fatalf("refused keys changed something: %v", got)
	}
}

func TestConcurrentInvoiceOfOneQuoteMakesOneInvoice(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	q := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "Acme", "lines": []obj{line("A", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)
	path := "/v1/quotes/" + q["id"].(string)
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", path+"/accept", ws.Key, nil).WantStatus(t, 200)
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { statuses[i] = env.Do(t, "POST", path+"/invoice", ws.Key, nil).Status })
	}
	wg.Wait()
	if won := tally(t, statuses, http.StatusOK, http.StatusConflict); won != 1 {
		t.Fatalf("%d calls invoiced the quote: %v", won, statuses)
	}
	invs := env.DB.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws.ID)).AllX(t.Context())
	got := env.Get(t, path, ws.Key).JSON(t)
	if len(invs) != 1 || invs[0].QuoteID == nil || *invs[0].QuoteID != q["id"] || got["invoice_id"] != invs[0].ID {
		t.Fatalf("%d invoices; quote %v", len(invs), got)
	}
}
