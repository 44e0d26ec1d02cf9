package writes_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// An order is invoiced once it is confirmed, shipped or not: the invoice
// has the order's client, currency, lines (a variant's as its item, with
// the options in the description) and notes, links back, and is priced
// by the rule; a second invoice is 409 already_invoiced naming the first
// until that one is voided or deleted.
func TestInvoiceThisOrder(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	cli := env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Ada", "currency_code": "USD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	p := env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Tee", "sku": "TEE",
		"variant_axes": []obj{{"code": "size", "values": []string{"S"}}}}).WantStatus(t, 201).JSON(t)
	tee, teeS := p["id"].(string), p["variants"].([]any)[0].(obj)["id"].(string)
	o := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_id": cli, "notes": "Gift wrap", "lines": []obj{
		{"variant_id": teeS, "qty_milli": 1500, "unit_price_cents": 1999, "vat_rate_bp": 2000},
		{"description": "Setup", "qty_milli": 1000, "unit_price_cents": 333, "vat_rate_bp": 550},
	}}).WantStatus(t, 201).JSON(t)
	id, path := o["id"].(string), "/v1/sales-orders/"+o["id"].(string)
	if o["invoice_id"] != nil {
		t.Fatalf("a new order has invoice_id %v", o["invoice_id"])
	}

	// A draft is not invoiced; nothing is written.
	env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	if n := countInvoicesOf(t, env, ws.ID); n != 0 {
		t.Fatalf("%d invoices after a refusal", n)
	}
	env.Do(t, "POST", path+"/confirm", ws.Key, nil).WantStatus(t, 200)
	got := env.Do(t, "POST", path+"/invoice", ws.Key, nil, "Idempotency-Key", "inv-"+id).WantStatus(t, 200).JSON(t)
	invID, _ := got["invoice_id"].(string)
	if got["id"] != id || got["status"] != "confirmed" || invID == "" {
		t.Fatalf("invoiced order %v", got)
	}
	// The key replays the answer; no second invoice.
	again := env.Do(t, "POST", path+"/invoice", ws.Key, nil, "Idempotency-Key", "inv-"+id).WantStatus(t, 200)
	if again.Header.Get("Idempotent-Replayed") != "true" || again.JSON(t)["invoice_id"] != invID {
		t.Fatalf("not replayed: %s", again.Body)
	}
	inv := env.Get(t, "/v1/invoices/"+invID, ws.Key).WantStatus(t, 200).JSON(t)
	if inv["sales_order_id"] != id || inv["status"] != "draft" || inv["client_id"] != cli || inv["client_name"] != "Ada" ||
		inv["currency_code"] != "USD" || inv["notes"] != "Gift wrap" || inv["quote_id"] != nil {
		t.Fatalf("invoice %v", inv)
	}
	lines := inv["lines"].([]any)
	l0, l1 := lines[0].(obj), lines[1].(obj)
	if len(lines) != 2 || l0["item_id"] != tee || l0["description"] != "Tee – S" || l0["qty_milli"] != 1500.0 ||
		l0["unit_price_cents"] != 1999.0 || l0["vat_rate_bp"] != 2000.0 || l0["discount_bp"] != 0.0 ||
		l1["item_id"] != nil || l1["description"] != "Setup" || l1["vat_rate_bp"] != 550.0 {
		t.Fatalf("invoice lines %v", lines)
	}
	// 1.5 × 19.99 = 29.985 → 2999, VAT 599.8 → 600; 333, VAT 18.315 → 18.
	if inv["amount_excl_vat_cents"] != 3332.0 || inv["vat_amount_cents"] != 618.0 || inv["amount_incl_vat_cents"] != 3950.0 ||
		inv["amount_incl_vat_cents"] != o["amount_incl_vat_cents"] {
		t.Fatalf("invoice totals %v / %v / %v, order's %v", inv["amount_excl_vat_cents"], inv["vat_amount_cents"], inv["amount_incl_vat_cents"], o["amount_incl_vat_cents"])
	}

	// Once only, shipped or not, while the invoice stands.
	e := env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantError(t, 409, "already_invoiced")
	if msg := e["message"].(string); !strings.Contains(msg, inv["number"].(string)) || !strings.Contains(msg, invID) {
		t.Fatalf("the refusal does not name the invoice: %q", msg)
	}
	env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": id}).WantStatus(t, 201)
	if s := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t); s["status"] != "shipped" || s["invoice_id"] != invID {
		t.Fatalf("shipped order %v", s)
	}
	env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantError(t, 409, "already_invoiced")
	if n := countInvoicesOf(t, env, ws.ID); n != 1 {
		t.Fatalf("%d invoices", n)
	}

	// Voided, the invoice leaves the order invoiceable again; the second
	// invoice deleted, too.
	env.Do(t, "POST", "/v1/invoices/"+invID+"/void", ws.Key, nil).WantStatus(t, 200)
	if s := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t); s["invoice_id"] != nil {
		t.Fatalf("order of a void invoice %v", s)
	}
	second := env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantStatus(t, 200).JSON(t)["invoice_id"].(string)
	if second == invID {
		t.Fatal("the void invoice was linked again")
	}
	env.Do(t, "DELETE", "/v1/invoices/"+second, ws.Key, nil).WantStatus(t, 200)
	if s := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t); s["invoice_id"] != nil {
		t.Fatalf("order of a deleted invoice %v", s)
	}
	env.Do(t, "POST", path+"/invoice", ws.Key, nil).WantStatus(t, 200)

	want := []string{"sales_order.created", "sales_order.confirmed", "sales_order.invoiced", "invoice.created",
		"shipment.created", "sales_order.shipped", "invoice.voided", "sales_order.updated", "sales_order.invoiced", "invoice.created",
		"invoice.deleted", "sales_order.updated", "sales_order.invoiced", "invoice.created"}
	if got := eventTypes(t, env, ws.Key); len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
		t.Fatalf("events %v\nwant the last to be %v", got, want)
	}
	for _, typ := range want {
		if !declared(typ) {
			t.Errorf("%s is not a published event type", typ)
		}
	}

	// A cancelled order is not invoiced; a key that may not write
	// invoices may not invoice an order either.
	c := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Bob", "lines": []obj{line("X", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/sales-orders/"+c+"/confirm", ws.Key, nil).WantStatus(t, 200)
	ws.Role(t, "orders", "sales-orders:write,invoices:read,clients:read")
	unlimited := 0
	orders := ws.NewKey(t, access.KeySpec{Role: "orders", RateLimit: &unlimited})
	env.Do(t, "POST", "/v1/sales-orders/"+c+"/invoice", orders, nil).WantError(t, 403, "permission_denied")
	env.Do(t, "POST", "/v1/sales-orders/"+c+"/cancel", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/sales-orders/"+c+"/invoice", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/sales-orders/so_missing/invoice", ws.Key, nil).WantError(t, 404, "not_found")
	if n := countInvoicesOf(t, env, ws.ID); n != 2 {
		t.Fatalf("%d invoices, want the void one and the last", n)
	}
}

// Racing calls make one invoice; the others are refused.
func TestConcurrentInvoicesOfOneOrderMakeOne(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	id := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Ada", "status": "confirmed",
		"lines": []obj{line("X", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	var wg sync.WaitGroup
	res := make([]*apitest.Response, 8)
	for i := range res {
		wg.Go(func() { res[i] = env.Do(t, "POST", "/v1/sales-orders/"+id+"/invoice", ws.Key, nil) })
	}
	wg.Wait()
	ok := 0
	for _, r := range res {
		switch r.Status {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			r.WantError(t, 409, "already_invoiced")
		default:
			t.Fatalf("answered %d: %s", r.Status, r.Body)
		}
	}
	if ok != 1 || countInvoicesOf(t, env, ws.ID) != 1 {
		t.Fatalf("%d answered 200, %d invoices; want one of each", ok, countInvoicesOf(t, env, ws.ID))
	}
}

func countInvoicesOf(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	return env.DB.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws)).CountX(t.Context())
}
