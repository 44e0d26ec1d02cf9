package rest_test

import (
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// An item carries a default VAT rate: written, read back, cleared with
// null, bounded like a line's; products share it.
func TestItemVatRate(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, true)
	a := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Book", "unit_price_cents": 1500, "vat_rate_bp": 550}).WantStatus(t, 201).JSON(t)
	if a["vat_rate_bp"] != 550.0 {
		t.Fatalf("created item: %v", a)
	}
	path := "/v1/items/" + a["id"].(string)
	if got := env.Get(t, path, ws.Key).JSON(t); got["vat_rate_bp"] != 550.0 {
		t.Fatalf("read item: %v", got)
	}
	p := env.Do(t, "PATCH", path, ws.Key, obj{"name": "Book", "vat_rate_bp": 2000}).WantStatus(t, 200).JSON(t)
	if p["vat_rate_bp"] != 2000.0 {
		t.Fatalf("patched item: %v", p)
	}
	p = env.Do(t, "PATCH", path, ws.Key, obj{"name": "Book"}).WantStatus(t, 200).JSON(t)
	if p["vat_rate_bp"] != 2000.0 {
		t.Fatalf("an omitted vat_rate_bp changed: %v", p)
	}
	p = env.Do(t, "PATCH", path, ws.Key, obj{"name": "Book", "vat_rate_bp": nil}).WantStatus(t, 200).JSON(t)
	if v, ok := p["vat_rate_bp"]; !ok || v != nil {
		t.Fatalf("null did not clear vat_rate_bp: %v", p)
	}
	plain := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Pen"}).WantStatus(t, 201).JSON(t)
	if v, ok := plain["vat_rate_bp"]; !ok || v != nil {
		t.Fatalf("an item without a rate reads vat_rate_bp %v (%v)", v, plain)
	}
	for _, bad := range []any{-1, 10001, "20", 20.5} {
		e := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Bad", "vat_rate_bp": bad}).WantError(t, 400, "invalid_request")
		wantParam(t, e, "vat_rate_bp")
		e = env.Do(t, "PATCH", path, ws.Key, obj{"name": "Book", "vat_rate_bp": bad}).WantError(t, 400, "invalid_request")
		wantParam(t, e, "vat_rate_bp")
	}
	if got := env.Get(t, path, ws.Key).JSON(t); got["vat_rate_bp"] != nil {
		t.Fatalf("refused patches changed the item: %v", got)
	}
	env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Top", "vat_rate_bp": 10000}).WantStatus(t, 201)
	pr := env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Tee", "sku": "TEE", "vat_rate_bp": 2000}).WantStatus(t, 201).JSON(t)
	if pr["vat_rate_bp"] != 2000.0 {
		t.Fatalf("created product: %v", pr)
	}
	if got := env.Get(t, "/v1/items/"+pr["id"].(string), ws.Key).JSON(t); got["vat_rate_bp"] != 2000.0 {
		t.Fatalf("the product read as an item: %v", got)
	}
	e := env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Bad", "vat_rate_bp": 10001}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "vat_rate_bp")
	// A document line without vat_rate_bp still defaults to 0, whatever the item's rate.
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Acme", "lines": []obj{
		{"item_id": pr["id"], "description": "Tee", "qty_milli": 1000, "unit_price_cents": 1000}}}).WantStatus(t, 201).JSON(t)
	if l := inv["lines"].([]any)[0].(obj); l["vat_rate_bp"] != 0.0 {
		t.Fatalf("a line without vat_rate_bp took the item's: %v", l)
	}
}
