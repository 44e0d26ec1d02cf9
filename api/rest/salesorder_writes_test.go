package rest_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/orderline"
	"github.com/ledgerbase/ledgerbase/ent/payment"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
)

// shop is a commerce workspace with a client, an item, a product with
// sizes S and M, and a store.
type shop struct {
	ws                         *apitest.Workspace
	client, item, tee, teeS    string
	store                      string
	teeM                       string
	env                        *apitest.Env
	orders, lines, paymentRows func() int
}

func newShop(t *testing.T, env *apitest.Env) *shop {
	t.Helper()
	ws := env.Workspace(t, "business", true, true)
	s := &shop{ws: ws, env: env}
	s.client = env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Ada", "currency_code": "USD"}).WantStatus(t, 201).JSON(t)["id"].(string)
	s.item = env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Widget", "number": "WID"}).WantStatus(t, 201).JSON(t)["id"].(string)
	p := env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Tee", "sku": "TEE",
		"variant_axes": []obj{{"code": "size", "values": []string{"S", "M"}}}}).WantStatus(t, 201).JSON(t)
	s.tee = p["id"].(string)
	for _, v := range p["variants"].([]any) {
		switch v := v.(obj); v["sku"] {
		case "TEE-S":
			s.teeS = v["id"].(string)
		case "TEE-M":
			s.teeM = v["id"].(string)
		}
	}
	st, err := env.DB.Writer.Store.Create().SetWorkspaceID(ws.ID).SetName("Shop").SetFreeAddress("shop.example").SetCurrencyCode("GBP").Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.store = st.ID
	count := func(n int, err error) int {
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	s.orders = func() int {
		return count(env.DB.Writer.SalesOrder.Query().Where(salesorder.WorkspaceID(ws.ID)).Count(t.Context()))
	}
	s.lines = func() int {
		return count(env.DB.Writer.OrderLine.Query().Where(orderline.WorkspaceID(ws.ID)).Count(t.Context()))
	}
	s.paymentRows = func() int {
		return count(env.DB.Writer.Payment.Query().Where(payment.WorkspaceID(ws.ID)).Count(t.Context()))
	}
	return s
}

func (s *shop) post(t *testing.T, body obj) *apitest.Response {
	t.Helper()
	return s.env.Do(t, "POST", "/v1/sales-orders", s.ws.Key, body)
}

func (s *shop) act(t *testing.T, id, action string) *apitest.Response {
	t.Helper()
	return s.env.Do(t, "POST", "/v1/sales-orders/"+id+"/"+action, s.ws.Key, nil)
}

func lineIDs(t *testing.T, order obj) []string {
	t.Helper()
	var out []string
	for _, l := range order["lines"].([]any) {
		out = append(out, l.(obj)["id"].(string))
	}
	return out
}

func TestSalesOrderLifecycleThroughShipping(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShop(t, env)
	key := s.ws.Key

	o := s.post(t, obj{"client_id": s.client, "date": "2026-02-01", "shipping_address": "1 Main St", "lines": []obj{
		{"item_id": s.item, "qty_milli": 333, "unit_price_cents": 1000, "vat_rate_bp": 550},
		{"variant_id": s.teeS, "qty_milli": 1000, "unit_price_cents": 1999, "vat_rate_bp": 2000},
		{"description": "Half a cent", "qty_milli": 1500, "unit_price_cents": 333},
	}}).WantStatus(t, 201).JSON(t)
	id := o["id"].(string)
	if o["number"] != "SO-000001" || o["status"] != "draft" || o["client_name"] != "Ada" || o["currency_code"] != "USD" ||
		o["online"] != false || o["payment_status"] != nil || o["shipping_status"] != nil || o["shipping_address"] != "1 Main St" {
		t.Fatalf("created order: %v", o)
	}
	wantMoney(t, o, 2832, 418, 3250)
	ls := o["lines"].([]any)
	l0, l1, l2 := ls[0].(obj), ls[1].(obj), ls[2].(obj)
	if l0["sku"] != "WID" || l0["description"] != "Widget" || l0["vat_rate_bp"] != 550.0 || l0["amount_incl_vat_cents"] != 351.0 || l0["shipped_qty_milli"] != 0.0 {
		t.Fatalf("line 0: %v", l0)
	}
	if l1["item_id"] != s.tee || l1["variant_id"] != s.teeS || l1["sku"] != "TEE-S" || l1["description"] != "Tee – S" || l1["vat_amount_cents"] != 400.0 {
		t.Fatalf("line 1: %v", l1)
	}
	if l2["item_id"] != nil || l2["sku"] != "" || l2["amount_excl_vat_cents"] != 500.0 {
		t.Fatalf("line 2: %v", l2)
	}

	// A draft is not shipped.
	env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": id}).WantError(t, 409, "invalid_state_transition")

	// Edit while draft: lines replaced whole.
	e := env.Do(t, "PATCH", "/v1/sales-orders/"+id, key, obj{"notes": "gift", "lines": []obj{
		{"item_id": s.item, "qty_milli": 3000, "unit_price_cents": 1000, "vat_rate_bp": 2000},
		{"item_id": s.tee, "variant_id": s.teeM, "sku": "CUSTOM", "description": "Tee, size M", "qty_milli": 2000, "unit_price_cents": 1500},
	}}).WantStatus(t, 200).JSON(t)
	wantMoney(t, e, 6000, 600, 6600)
	if e["notes"] != "gift" || e["number"] != "SO-000001" || len(e["lines"].([]any)) != 2 {
		t.Fatalf("edited: %v", e)
	}
	if l := e["lines"].([]any)[1].(obj); l["sku"] != "CUSTOM" || l["description"] != "Tee, size M" || l["variant_id"] != s.teeM {
		t.Fatalf("edited line: %v", l)
	}
	if n := s.lines(); n != 2 {
		t.Fatalf("%d order lines after replacing them, want 2", n)
	}

	if c := s.act(t, id, "confirm").WantStatus(t, 200).JSON(t); c["status"] != "confirmed" {
		t.Fatalf("confirmed: %v", c)
	}
	s.act(t, id, "confirm").WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/sales-orders/"+id, key, obj{"lines": []obj{{"item_id": s.item, "qty_milli": 1, "unit_price_cents": 1}}}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/sales-orders/"+id, key, obj{"client_name": "Bob"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/sales-orders/"+id, key, obj{"shipping_address": "2 Side St"}).WantStatus(t, 200)

	// Ship in two shipments, deliver both: the order follows.
	lids := lineIDs(t, e)
	a := env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": id, "lines": []obj{{"order_line_id": lids[0], "qty_milli": 1000}}}).WantStatus(t, 201).JSON(t)
	if g := env.Get(t, "/v1/sales-orders/"+id, key).JSON(t); g["status"] != "partially_shipped" {
		t.Fatalf("after one shipment: %v", g["status"])
	}
	ce := s.act(t, id, "cancel").WantError(t, 409, "invalid_state_transition")
	if ce["message"] == "" {
		t.Fatal("no message")
	}
	b := env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": id}).WantStatus(t, 201).JSON(t)
	if g := env.Get(t, "/v1/sales-orders/"+id, key).JSON(t); g["status"] != "shipped" {
		t.Fatalf("after all shipped: %v", g["status"])
	}
	env.Do(t, "PATCH", "/v1/shipments/"+a["id"].(string), key, obj{"sales_order_id": id, "status": "delivered"}).WantStatus(t, 200)
	if g := env.Get(t, "/v1/sales-orders/"+id, key).JSON(t); g["status"] != "shipped" {
		t.Fatalf("one of two delivered: %v", g["status"])
	}
	env.Do(t, "PATCH", "/v1/shipments/"+b["id"].(string), key, obj{"sales_order_id": id, "status": "delivered"}).WantStatus(t, 200)
	g := env.Get(t, "/v1/sales-orders/"+id, key).JSON(t)
	if g["status"] != "delivered" || g["shipping_address"] != "2 Side St" {
		t.Fatalf("both delivered: %v", g)
	}
	for _, l := range g["lines"].([]any) {
		if l := l.(obj); l["shipped_qty_milli"] != l["qty_milli"] {
			t.Fatalf("line not fully shipped: %v", l)
		}
	}
	s.act(t, id, "cancel").WantError(t, 409, "invalid_state_transition")
	s.act(t, id, "confirm").WantError(t, 409, "invalid_state_transition")

	// A confirmed order whose lines record shipped goods is not cancelled
	// either; one with nothing shipped is, and then nothing moves it.
	c := s.post(t, obj{"client_id": s.client, "status": "confirmed", "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t)
	if c["status"] != "confirmed" || c["number"] != "SO-000002" {
		t.Fatalf("created confirmed: %v", c)
	}
	env.DB.Writer.OrderLine.UpdateOneID(lineIDs(t, c)[0]).SetShippedQtyMilli(1).ExecX(t.Context())
	if e := s.act(t, c["id"].(string), "cancel").WantError(t, 409, "invalid_state_transition"); e["message"] != "a sales order with shipped goods cannot be cancelled" {
		t.Fatalf("refusal: %v", e)
	}
	env.DB.Writer.OrderLine.UpdateOneID(lineIDs(t, c)[0]).SetShippedQtyMilli(0).ExecX(t.Context())
	if x := s.act(t, c["id"].(string), "cancel").WantStatus(t, 200).JSON(t); x["status"] != "cancelled" {
		t.Fatalf("cancelled: %v", x)
	}
	env.Do(t, "PATCH", "/v1/sales-orders/"+c["id"].(string), key, obj{"notes": "x"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": c["id"]}).WantError(t, 409, "invalid_state_transition")
	d := s.post(t, obj{"client_name": "Walk-in", "number": "MY-1", "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t)
	if d["number"] != "MY-1" || d["currency_code"] != "EUR" || d["client_id"] != nil {
		t.Fatalf("own number: %v", d)
	}
	s.post(t, obj{"client_name": "Walk-in", "number": "MY-1", "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 1}}}).WantError(t, 409, "duplicate")
	env.Do(t, "PATCH", "/v1/sales-orders/"+d["id"].(string), key, obj{"number": "SO-000001"}).WantError(t, 409, "duplicate")
	s.act(t, d["id"].(string), "cancel").WantStatus(t, 200)

	wantList(t, env, key, "/v1/sales-orders?status=cancelled", d["id"].(string), c["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?status=delivered&client_id="+s.client, id)
	wantList(t, env, key, "/v1/sales-orders?q=SO-000002", c["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?q=MY-1", d["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?online=true")
}

// wantList checks a list answers exactly ids, in order.
func wantList(t *testing.T, env *apitest.Env, key, path string, ids ...string) {
	t.Helper()
	data := env.Get(t, path, key).WantStatus(t, 200).JSON(t)["data"].([]any)
	if len(data) != len(ids) {
		t.Fatalf("%s: %d records, want %d: %v", path, len(data), len(ids), data)
	}
	for i, want := range ids {
		if got := data[i].(obj)["id"]; got != want {
			t.Fatalf("%s: [%d] is %v, want %s", path, i, got, want)
		}
	}
}

func TestOnlineSalesOrdersCarryTheirStorePayments(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShop(t, env)
	key := s.ws.Key
	// 2000 + 20 % = 2400.
	lines := []obj{{"variant_id": s.teeS, "qty_milli": 2000, "unit_price_cents": 1000, "vat_rate_bp": 2000}}
	online := func(pays []obj, extra obj) *apitest.Response {
		b := obj{"client_id": s.client, "store_id": s.store, "lines": lines}
		if pays != nil {
			b["payments"] = pays
		}
		for k, v := range extra {
			b[k] = v
		}
		return s.post(t, b)
	}
	paid := online([]obj{{"kind": "authorize", "amount_cents": 2400, "external_id": "ch_1"},
		{"kind": "capture", "amount_cents": 2400, "fee_cents": 70, "external_id": "ch_1"}}, nil).WantStatus(t, 201).JSON(t)
	if paid["status"] != "confirmed" || paid["online"] != true || paid["channel_id"] != s.store || paid["payment_status"] != "paid" ||
		paid["shipping_status"] != "not_shipped" || paid["currency_code"] != "GBP" {
		t.Fatalf("online order: %v", paid)
	}
	pid := paid["id"].(string)
	pays := env.Get(t, "/v1/payments?sales_order_id="+pid, key).WantStatus(t, 200).JSON(t)["data"].([]any)
	if len(pays) != 2 {
		t.Fatalf("payments: %v", pays)
	}
	// Newest first: the capture, then the authorization.
	if c := pays[0].(obj); c["kind"] != "capture" || c["amount_cents"] != 2400.0 || c["fee_cents"] != 70.0 || c["provider_ref"] != "ch_1" ||
		c["store_id"] != s.store || c["currency_code"] != "GBP" || c["status"] != "succeeded" || c["sales_order_id"] != pid {
		t.Fatalf("capture: %v", c)
	}
	if a := pays[1].(obj); a["kind"] != "authorize" {
		t.Fatalf("authorization: %v", a)
	}

	statusOf := func(pays []obj, extra obj) obj {
		t.Helper()
		return online(pays, extra).WantStatus(t, 201).JSON(t)
	}
	authorized := statusOf([]obj{{"kind": "authorize", "amount_cents": 2400}}, nil)
	unpaid := statusOf(nil, obj{"status": "draft", "currency_code": "EUR"})
	partRefund := statusOf([]obj{{"kind": "capture", "amount_cents": 2400}, {"kind": "refund", "amount_cents": 400}}, nil)
	refunded := statusOf([]obj{{"kind": "capture", "amount_cents": 2400}, {"kind": "refund", "amount_cents": 2400}}, nil)
	voided := statusOf([]obj{{"kind": "authorize", "amount_cents": 2400}, {"kind": "void", "amount_cents": 2400}}, nil)
	partCapture := statusOf([]obj{{"kind": "capture", "amount_cents": 1000}}, obj{"status": "draft"})
	for _, c := range []struct {
		o           obj
		pay, status string
	}{{authorized, "authorized", "confirmed"}, {unpaid, "unpaid", "draft"}, {partRefund, "partially_refunded", "confirmed"},
		{refunded, "refunded", "confirmed"}, {voided, "unpaid", "confirmed"}, {partCapture, "authorized", "draft"}} {
		if c.o["payment_status"] != c.pay || c.o["status"] != c.status {
			t.Fatalf("payment status %v / %v, want %s / %s: %v", c.o["payment_status"], c.o["status"], c.pay, c.status, c.o)
		}
	}
	if unpaid["currency_code"] != "EUR" {
		t.Fatalf("currency sent: %v", unpaid["currency_code"])
	}

	// A draft's new lines set its payment status against the new total;
	// a total below what was captured is refused.
	pc := partCapture["id"].(string)
	e := env.Do(t, "PATCH", "/v1/sales-orders/"+pc, key, obj{"client_id": s.client, "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 1000}}}).WantStatus(t, 200).JSON(t)
	if e["payment_status"] != "paid" || e["currency_code"] != "GBP" || e["online"] != true {
		t.Fatalf("edited online draft: %v", e)
	}
	pe := env.Do(t, "PATCH", "/v1/sales-orders/"+pc, key, obj{"lines": []obj{{"item_id": s.item, "qty_milli": 500, "unit_price_cents": 1000}}}).WantError(t, 400, "invalid_request")
	wantParam(t, pe, "lines")
	if g := env.Get(t, "/v1/sales-orders/"+pc, key).JSON(t); g["amount_incl_vat_cents"] != 1000.0 || g["payment_status"] != "paid" {
		t.Fatalf("a refused edit changed the order: %v", g)
	}

	// Refused payments write nothing.
	before, beforePays := s.orders(), s.paymentRows()
	for _, c := range []struct {
		pays  []obj
		extra obj
		param string
	}{
		{[]obj{{"kind": "capture", "amount_cents": 1000}, {"kind": "refund", "amount_cents": 1001}}, nil, "payments[1].amount_cents"},
		{[]obj{{"kind": "capture", "amount_cents": 2401}}, nil, "payments[0].amount_cents"},
		{[]obj{{"kind": "charge", "amount_cents": 1}}, nil, "payments[0].kind"},
		{[]obj{{"kind": "capture", "amount_cents": -1}}, nil, "payments[0].amount_cents"},
		{[]obj{{"kind": "capture"}}, nil, "payments[0].amount_cents"},
		{nil, obj{"status": "shipped"}, "status"},
	} {
		wantParam(t, online(c.pays, c.extra).WantError(t, 400, "invalid_request"), c.param)
	}
	wantParam(t, s.post(t, obj{"client_id": s.client, "lines": lines, "payments": []obj{{"kind": "capture", "amount_cents": 1}}}).WantError(t, 400, "invalid_request"), "payments")
	// Sums that would pass int64 are refused, not wrapped.
	huge := int64(1) << 62
	wantParam(t, s.post(t, obj{"client_id": s.client, "store_id": s.store, "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": huge}},
		"payments": []obj{{"kind": "capture", "amount_cents": huge}, {"kind": "capture", "amount_cents": huge}}}).WantError(t, 400, "invalid_request"), "payments[1].amount_cents")
	if s.orders() != before || s.paymentRows() != beforePays {
		t.Fatal("a refused online order wrote something")
	}

	// Filters.
	wantList(t, env, key, "/v1/sales-orders?payment_status=paid", pc, pid)
	wantList(t, env, key, "/v1/sales-orders?online=true&status=draft", partCapture["id"].(string), unpaid["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?channel_id="+s.store+"&payment_status=refunded", refunded["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?online=false")
	wantList(t, env, key, "/v1/sales-orders?shipping_status=not_shipped&payment_status=authorized", authorized["id"].(string))
	wantList(t, env, key, "/v1/sales-orders?q="+paid["number"].(string), pid)

	// Paid but not shipped, then shipped.
	env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": pid}).WantStatus(t, 201)
	if g := env.Get(t, "/v1/sales-orders/"+pid, key).JSON(t); g["status"] != "shipped" || g["shipping_status"] != "shipped" || g["payment_status"] != "paid" {
		t.Fatalf("shipped online order: %v", g)
	}
}

func TestSalesOrderWritesRefuse(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s, them := newShop(t, env), newShop(t, env)
	key := s.ws.Key
	line := func(extra obj) []obj {
		l := obj{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 100}
		for k, v := range extra {
			if l[k] = v; v == nil {
				delete(l, k)
			}
		}
		return []obj{l}
	}
	cases := []struct {
		body  obj
		param string
	}{
		{obj{"client_id": them.client, "lines": line(nil)}, "client_id"},
		{obj{"client_id": s.client, "lines": line(obj{"item_id": them.item})}, "lines[0].item_id"},
		{obj{"client_id": s.client, "lines": line(obj{"item_id": nil, "variant_id": them.teeS})}, "lines[0].variant_id"},
		{obj{"client_id": s.client, "lines": line(obj{"variant_id": s.teeS})}, "lines[0].variant_id"}, // a variant of another item
		{obj{"client_id": s.client, "store_id": them.store, "lines": line(nil)}, "store_id"},
		{obj{"client_id": s.client, "lines": line(obj{"item_id": nil})}, "lines[0].description"},
		{obj{"lines": line(nil)}, "client_id"},
		{obj{"client_id": s.client}, "lines"},
		{obj{"client_id": s.client, "lines": []obj{}}, "lines"},
		{obj{"client_id": s.client, "lines": line(nil), "colour": "red"}, "colour"},
		{obj{"client_id": s.client, "lines": line(obj{"qty_milli": -1000})}, "lines[0].qty_milli"},
		{obj{"client_id": s.client, "lines": line(obj{"qty_milli": 0})}, "lines[0].qty_milli"},
		{obj{"client_id": s.client, "lines": line(obj{"unit_price_cents": "1"})}, "lines[0].unit_price_cents"},
		{obj{"client_id": s.client, "lines": line(nil), "amount_incl_vat_cents": 100}, "amount_incl_vat_cents"},
		{obj{"client_id": s.client, "lines": line(obj{"amount_excl_vat_cents": 100})}, "lines[0].amount_excl_vat_cents"},
		{obj{"client_id": s.client, "lines": line(obj{"shipped_qty_milli": 1})}, "lines[0].shipped_qty_milli"},
		{obj{"client_id": s.client, "lines": line(nil), "payment_status": "paid"}, "payment_status"},
		{obj{"client_id": s.client, "lines": line(obj{"qty_milli": int64(1) << 62, "unit_price_cents": 1 << 40})}, "lines[0].qty_milli"},
		{obj{"client_id": s.client, "lines": line(nil), "date": "2026-13-01"}, "date"},
	}
	for _, c := range cases {
		wantParam(t, s.post(t, c.body).WantError(t, 400, "invalid_request"), c.param)
	}
	if s.orders() != 0 || s.lines() != 0 || s.paymentRows() != 0 {
		t.Fatalf("refused creates wrote %d orders, %d lines, %d payments", s.orders(), s.lines(), s.paymentRows())
	}

	// Another workspace's order is not found.
	theirs := them.post(t, obj{"client_id": them.client, "lines": []obj{{"item_id": them.item, "qty_milli": 1000, "unit_price_cents": 1}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Get(t, "/v1/sales-orders/"+theirs, key).WantError(t, 404, "not_found")
	env.Do(t, "PATCH", "/v1/sales-orders/"+theirs, key, obj{"notes": "mine"}).WantError(t, 404, "not_found")
	s.act(t, theirs, "confirm").WantError(t, 404, "not_found")
	s.act(t, theirs, "cancel").WantError(t, 404, "not_found")
	if o, _ := env.DB.Writer.SalesOrder.Get(t.Context(), theirs); o.Status != salesorder.StatusDraft || o.Notes != "" {
		t.Fatalf("another workspace's order changed: %v", o)
	}

	// An edit naming another workspace's item writes nothing.
	mine := s.post(t, obj{"client_id": s.client, "lines": line(nil)}).WantStatus(t, 201).JSON(t)["id"].(string)
	e := env.Do(t, "PATCH", "/v1/sales-orders/"+mine, key, obj{"notes": "changed", "lines": line(obj{"item_id": them.item})}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "lines[0].item_id")
	wantParam(t, env.Do(t, "PATCH", "/v1/sales-orders/"+mine, key, obj{"store_id": s.store}).WantError(t, 400, "invalid_request"), "store_id")
	wantParam(t, env.Do(t, "PATCH", "/v1/sales-orders/"+mine, key, obj{"client_id": them.client}).WantError(t, 400, "invalid_request"), "client_id")
	if g := env.Get(t, "/v1/sales-orders/"+mine, key).JSON(t); g["notes"] != "" || g["client_id"] != s.client || len(g["lines"].([]any)) != 1 {
		t.Fatalf("a refused edit changed the order: %v", g)
	}

	// A viewer and a custom role that only reads orders cannot write them.
	s.ws.Role(t, "clerk", "sales-orders:read,clients:write")
	for _, k := range []string{s.ws.NewKey(t, access.KeySpec{Role: access.RoleViewer}), s.ws.NewKey(t, access.KeySpec{Role: "clerk"})} {
		env.Do(t, "POST", "/v1/sales-orders", k, obj{"client_id": s.client, "lines": line(nil)}).WantError(t, 403, "permission_denied")
		env.Do(t, "PATCH", "/v1/sales-orders/"+mine, k, obj{"notes": "x"}).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", "/v1/sales-orders/"+mine+"/confirm", k, nil).WantError(t, 403, "permission_denied")
		env.Get(t, "/v1/sales-orders/"+mine, k).WantStatus(t, 200)
	}
	if o, _ := env.DB.Writer.SalesOrder.Get(t.Context(), mine); o.Status != salesorder.StatusDraft || s.orders() != 1 {
		t.Fatalf("a reader wrote: %v", o)
	}
}

func TestSalesOrderIdempotencyAndConcurrentMoves(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShop(t, env)
	key := s.ws.Key
	body := obj{"client_id": s.client, "store_id": s.store, "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 500}},
		"payments": []obj{{"kind": "capture", "amount_cents": 500}}}
	first := env.Do(t, "POST", "/v1/sales-orders", key, body, "Idempotency-Key", "order-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/sales-orders", key, body, "Idempotency-Key", "order-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry was not a replay: %s", again.Body)
	}
	if s.orders() != 1 || s.paymentRows() != 1 || s.lines() != 1 {
		t.Fatalf("a retried create wrote %d orders, %d payments, %d lines", s.orders(), s.paymentRows(), s.lines())
	}

	race := func(reqs ...func() int) []int {
		out := make([]int, len(reqs))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Go(func() { <-start; out[i] = r() })
		}
		close(start)
		wg.Wait()
		return out
	}
	draft := obj{"client_id": s.client, "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 500}}}
	for round := range 3 {
		id := s.post(t, draft).WantStatus(t, 201).JSON(t)["id"].(string)
		var confirms, cancels []func() int
		for range 8 {
			confirms = append(confirms, func() int { return s.act(t, id, "confirm").Status })
			cancels = append(cancels, func() int { return s.act(t, id, "cancel").Status })
		}
		codes := race(append(confirms, cancels...)...)
		confirmed := tally(t, codes[:8], http.StatusOK, http.StatusConflict)
		cancelled := tally(t, codes[8:], http.StatusOK, http.StatusConflict)
		o, _ := env.DB.Writer.SalesOrder.Get(t.Context(), id)
		if confirmed > 1 || cancelled != 1 || o.Status != salesorder.StatusCancelled {
			t.Fatalf("round %d: %d confirms and %d cancels won, order %s: %v", round, confirmed, cancelled, o.Status, codes)
		}
	}
	// A cancel racing a shipment: exactly one wins.
	for round := range 5 {
		o := s.post(t, obj{"client_id": s.client, "status": "confirmed", "lines": []obj{{"item_id": s.item, "qty_milli": 1000, "unit_price_cents": 500}}}).WantStatus(t, 201).JSON(t)
		id := o["id"].(string)
		codes := race(
			func() int { return s.act(t, id, "cancel").Status },
			func() int {
				return env.Do(t, "POST", "/v1/shipments", key, obj{"sales_order_id": id}).Status
			})
		got, shipped := reloadOrder(t, env, id)
		cancelledWon, shippedWon := codes[0] == http.StatusOK, codes[1] == http.StatusCreated
		if cancelledWon == shippedWon || (cancelledWon && (got.Status != salesorder.StatusCancelled || shipped[lineIDs(t, o)[0]] != 0)) ||
			(shippedWon && got.Status != salesorder.StatusShipped) || codes[0] != http.StatusOK && codes[0] != http.StatusConflict ||
			codes[1] != http.StatusCreated && codes[1] != http.StatusConflict {
			t.Fatalf("round %d: cancel %d, ship %d, order %s %v", round, codes[0], codes[1], got.Status, shipped)
		}
	}
}
