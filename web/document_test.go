package web_test

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// text is a page's HTML with the tags taken out and spaces folded, so
// tests read what a person reads.
func text(body string) string {
	s := regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(body, " ")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

// An invoice's page reads like the invoice: its client by name with a
// link, its lines with their amounts, the totals, the payments, the
// credit note applied and what remains — the amounts /v1 stores.
func TestInvoicePageReadsLikeTheInvoice(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	other := env.Workspace(t, "business", true, true)
	key := ws.Key
	cli := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Northwind Traders", "currency_code": "EUR"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli, "date": "2026-11-02", "due_date": "2026-12-02",
		"lines": []map[string]any{
			{"description": "Consulting days", "qty_milli": 2500, "unit_price_cents": 48000, "vat_rate_bp": 2000},
			{"description": "Travel costs", "qty_milli": 1000, "unit_price_cents": 13550, "vat_rate_bp": 550, "discount_bp": 1000},
		}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, `{"email":false}`).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", key, map[string]any{"id": "bank-7781", "number": "RCPT-7781", "status": "completed",
		"date": "2026-11-10", "amount_incl_vat_cents": 50000}).WantStatus(t, 201)
	crn := env.Do(t, "POST", "/v1/credit-notes", key, map[string]any{"invoice_id": inv,
		"lines": []map[string]any{{"description": "Goodwill", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/credit-notes/"+crn["id"].(string)+"/issue", key, `{"email":false}`).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/credit-notes/"+crn["id"].(string)+"/apply", key, nil).WantStatus(t, 200)
	got := env.Get(t, "/v1/invoices/"+inv, key).WantStatus(t, 200).JSON(t)
	cents := func(m map[string]any, k string) int64 { return int64(m[k].(float64)) }

	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	p := c.Get(w + "/records/invoices/" + inv)
	if p.Status != 200 {
		t.Fatalf("invoice page: %d", p.Status)
	}
	if !strings.Contains(p.Body, `href="`+w+`/records/clients/`+cli+`" title="`+cli+`">Northwind Traders</a>`) {
		t.Error("the client is not a link showing its name")
	}
	read := text(p.Body)
	lines := got["lines"].([]any)
	want := []string{"Invoice " + got["number"].(string), "Bill to Northwind Traders", "Due date 2026-12-02",
		"Consulting days 2.5 €480.00 20 % " + money(cents(lines[0].(map[string]any), "amount_excl_vat_cents"), "EUR") + " " +
			money(cents(lines[0].(map[string]any), "vat_amount_cents"), "EUR") + " " + money(cents(lines[0].(map[string]any), "amount_incl_vat_cents"), "EUR"),
		"Travel costs 1 €135.50 10 % 5.5 % " + money(cents(lines[1].(map[string]any), "amount_excl_vat_cents"), "EUR"),
		"Subtotal, excluding VAT " + money(cents(got, "amount_excl_vat_cents"), "EUR"),
		"VAT " + money(cents(got, "vat_amount_cents"), "EUR"),
		"Total " + money(cents(got, "amount_incl_vat_cents"), "EUR"),
		"Paid " + money(cents(got, "paid_cents"), "EUR"),
		"Credited " + money(cents(got, "credited_cents"), "EUR"),
		"Remaining " + money(cents(got, "remaining_cents"), "EUR"),
		"2026-11-10 bank-7781 RCPT-7781 completed €500.00",
		crn["number"].(string) + " ",
	}
	for _, s := range want {
		if !strings.Contains(read, s) {
			t.Errorf("the invoice page does not read %q:\n%s", s, read)
		}
	}
	if cents(got, "remaining_cents") != cents(got, "amount_incl_vat_cents")-50000-10000 {
		t.Fatalf("remaining through /v1: %v", got)
	}
	// The credit note's page names its invoice by number.
	cp := c.Get(w + "/records/credit-notes/" + crn["id"].(string))
	if !strings.Contains(cp.Body, `title="`+inv+`">`+got["number"].(string)+`</a>`) {
		t.Error("the credit note does not link its invoice by number")
	}
	// Another workspace's invoice is not found from this one.
	theirs := env.Do(t, "POST", "/v1/invoices", other.Key, map[string]any{"client_name": "Elsewhere",
		"lines": []map[string]any{{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	if p := c.Get(w + "/records/invoices/" + theirs); p.Status != 404 || strings.Contains(p.Body, "Elsewhere") {
		t.Fatalf("another workspace's invoice: %d", p.Status)
	}
}

// An order's page shows ordered and shipped quantities per line and each
// shipment with its tracking timeline.
func TestOrderPageShowsShipments(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	so := env.Do(t, "POST", "/v1/sales-orders", key, map[string]any{"client_name": "Contoso Retail", "shipping_address": "4 Quai des Brumes, Lyon",
		"lines": []map[string]any{
			{"description": "Desk lamp", "qty_milli": 3000, "unit_price_cents": 4500, "vat_rate_bp": 2000},
			{"description": "Bulb pack", "qty_milli": 5000, "unit_price_cents": 900},
		}}).WantStatus(t, 201).JSON(t)
	id := so["id"].(string)
	env.Do(t, "POST", "/v1/sales-orders/"+id+"/confirm", key, nil).WantStatus(t, 200)
	line := so["lines"].([]any)[0].(map[string]any)["id"].(string)
	shp := env.Do(t, "POST", "/v1/shipments", key, map[string]any{"sales_order_id": id, "carrier": "UPS", "tracking_no": "1Z999AA10123456784",
		"lines": []map[string]any{{"order_line_id": line, "qty_milli": 2000}}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/shipments/"+shp["id"].(string)+"/events", key, map[string]any{"occurred_at": "2026-11-20T08:00:00Z",
		"status": "in_transit", "description": "Departed the origin facility", "location": "Lyon, FR"}).WantStatus(t, 201)

	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	p := c.Get(w + "/records/sales-orders/" + id)
	if p.Status != 200 {
		t.Fatalf("order page: %d", p.Status)
	}
	read := text(p.Body)
	for _, s := range []string{"Sales order " + so["number"].(string), "Customer Contoso Retail 4 Quai des Brumes, Lyon",
		"Desk lamp 3 2 1 €45.00", "Bulb pack 5 0 5 €9.00", shp["number"].(string) + " shipped",
		"Carrier UPS", "Tracking 1Z999AA10123456784", "Desk lamp 2 shipped", "in_transit Departed the origin facility · Lyon, FR"} {
		if !strings.Contains(read, s) {
			t.Errorf("the order page does not read %q:\n%s", s, read)
		}
	}
	if !strings.Contains(p.Body, `href="`+w+`/records/shipments/`+shp["id"].(string)+`"`) {
		t.Error("the shipment does not link to its page")
	}
}
