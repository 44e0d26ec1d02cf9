package writes_test

import (
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/returnrequest"
)

// shopOrder is an online order of two lines, paid in full: A (2 × 10.00 +
// 20 % VAT = 24.00) and B (1 × 5.00, no VAT); total 29.00.
type shopOrder struct {
	env        *apitest.Env
	ws         *apitest.Workspace
	id, a, b   string
	shipA      string // the shipment of line A
	shipB      string // the shipment of line B
	storeID    string
	offlineID  string
	totalCents float64
}

func newShopOrder(t *testing.T, env *apitest.Env) *shopOrder {
	t.Helper()
	ws := env.Workspace(t, "business", true, true)
	st, err := env.DB.Writer.Store.Create().SetWorkspaceID(ws.ID).SetName("Shop").SetFreeAddress("shop.example").Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lines := []obj{
		{"description": "A", "qty_milli": 2000, "unit_price_cents": 1000, "vat_rate_bp": 2000},
		{"description": "B", "qty_milli": 1000, "unit_price_cents": 500},
	}
	o := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Ada", "store_id": st.ID, "lines": lines,
		"payments": []obj{{"kind": "capture", "amount_cents": 2900}}}).WantStatus(t, 201).JSON(t)
	s := &shopOrder{env: env, ws: ws, id: o["id"].(string), storeID: st.ID, totalCents: o["amount_incl_vat_cents"].(float64)}
	ls := o["lines"].([]any)
	s.a, s.b = ls[0].(obj)["id"].(string), ls[1].(obj)["id"].(string)
	ship := func(line string, qty int) string {
		return env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": s.id,
			"lines": []obj{{"order_line_id": line, "qty_milli": qty}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	}
	s.shipA, s.shipB = ship(s.a, 2000), ship(s.b, 1000)
	s.offlineID = env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Bob", "lines": lines}).WantStatus(t, 201).JSON(t)["id"].(string)
	return s
}

func (s *shopOrder) deliver(t *testing.T, shp string) {
	t.Helper()
	s.env.Do(t, "PATCH", "/v1/shipments/"+shp, s.ws.Key, obj{"sales_order_id": s.id, "status": "delivered"}).WantStatus(t, 200)
}

func (s *shopOrder) open(t *testing.T, body obj) (obj, *apierr.Error) {
	t.Helper()
	res, e := adminWrite(t, s.env, s.ws.ID, resource.Returns, resource.Create, "", "", body)
	if e != nil {
		return nil, e
	}
	return wantOK(t, res, e, 201), nil
}

func (s *shopOrder) act(t *testing.T, id, action string, body any) (obj, *apierr.Error) {
	t.Helper()
	res, e := adminWrite(t, s.env, s.ws.ID, resource.Returns, resource.Action, action, id, body)
	if e != nil {
		return nil, e
	}
	return wantOK(t, res, e, 200), nil
}

func (s *shopOrder) returns(t *testing.T) int {
	t.Helper()
	n, err := s.env.DB.Writer.ReturnRequest.Query().Where(returnrequest.WorkspaceID(s.ws.ID)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// What comes back is bounded by what was delivered less what earlier
// returns take back; everything else is refused and writes nothing.
func TestReturnsTakeBackOnlyDeliveredGoods(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShopOrder(t, env)
	_, e := s.open(t, obj{"sales_order_id": s.id})
	wantRefused(t, e, 409, "over_return", "")
	s.deliver(t, s.shipA)

	_, e = s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.b, "qty_milli": 1000}}})
	wantRefused(t, e, 409, "over_return", "lines[0].qty_milli") // B shipped, not delivered
	_, e = s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 2001}}})
	wantRefused(t, e, 409, "over_return", "lines[0].qty_milli")
	other := env.Workspace(t, "business", true, true)
	theirs := newShopOrder(t, env)
	for _, c := range []struct {
		body  obj
		param string
	}{
		{obj{}, "sales_order_id"},
		{obj{"sales_order_id": "so_nope"}, "sales_order_id"},
		{obj{"sales_order_id": theirs.id}, "sales_order_id"},
		{obj{"sales_order_id": s.offlineID}, "sales_order_id"},
		{obj{"sales_order_id": s.id, "lines": []obj{}}, "lines"},
		{obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": "sol_nope", "qty_milli": 1}}}, "lines[0].order_line_id"},
		{obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": theirs.a, "qty_milli": 1}}}, "lines[0].order_line_id"},
		{obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 0}}}, "lines[0].qty_milli"},
		{obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a}}}, "lines[0].qty_milli"},
		{obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 1}, {"order_line_id": s.a, "qty_milli": 1}}}, "lines[1].order_line_id"},
		{obj{"sales_order_id": s.id, "number": " "}, "number"},
		{obj{"sales_order_id": s.id, "status": "refunded"}, "status"},
	} {
		_, e := s.open(t, c.body)
		wantRefused(t, e, 400, "invalid_request", c.param)
	}
	_, e = adminWrite(t, env, other.ID, resource.Returns, resource.Create, "", "", obj{"sales_order_id": s.id})
	wantRefused(t, e, 400, "invalid_request", "sales_order_id")
	if n := s.returns(t); n != 0 {
		t.Fatalf("refusals wrote %d returns", n)
	}

	r1, e := s.open(t, obj{"sales_order_id": s.id, "reason": "Too big", "lines": []obj{{"order_line_id": s.a, "qty_milli": 1500, "reason": "Wrong size"}}})
	if e != nil {
		t.Fatal(e)
	}
	l := r1["lines"].([]any)[0].(obj)
	if r1["status"] != "requested" || r1["refund_outcome"] != "pending" || r1["sales_order_id"] != s.id || r1["reason"] != "Too big" ||
		!strings.HasPrefix(r1["number"].(string), "RMA-") || l["order_line_id"] != s.a || l["qty_milli"] != 1500.0 || l["reason"] != "Wrong size" {
		t.Fatalf("return %v", r1)
	}
	_, e = s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 501}}})
	wantRefused(t, e, 409, "over_return", "lines[0].qty_milli")
	_, e = s.open(t, obj{"sales_order_id": s.id, "number": r1["number"]})
	wantRefused(t, e, 409, "duplicate", "number")
	s.deliver(t, s.shipB)
	rest, e := s.open(t, obj{"sales_order_id": s.id, "number": "RMA-MINE"}) // everything left: 0.5 A and B
	if e != nil {
		t.Fatal(e)
	}
	ls := rest["lines"].([]any)
	if rest["number"] != "RMA-MINE" || len(ls) != 2 || ls[0].(obj)["qty_milli"] != 500.0 || ls[1].(obj)["order_line_id"] != s.b {
		t.Fatalf("the rest: %v", rest)
	}
	_, e = s.open(t, obj{"sales_order_id": s.id})
	wantRefused(t, e, 409, "over_return", "")

	// A rejected return gives its goods back to what may be returned.
	if _, e := s.act(t, rest["id"].(string), "reject", nil); e != nil {
		t.Fatal(e)
	}
	again, e := s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.b, "qty_milli": 1000}}})
	if e != nil || again["lines"].([]any)[0].(obj)["qty_milli"] != 1000.0 {
		t.Fatalf("after reject: %v %v", again, e)
	}
}

// approve → receive → refund, or reject before receiving; the refund is at
// most what was paid for the lines and becomes a refund of the order.
func TestReturnStatesAndRefundBounds(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShopOrder(t, env)
	s.deliver(t, s.shipA)
	s.deliver(t, s.shipB)
	r, e := s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 1500}}})
	if e != nil {
		t.Fatal(e)
	}
	id := r["id"].(string)
	for _, a := range []string{"receive", "refund"} {
		_, e := s.act(t, id, a, nil)
		wantRefused(t, e, 409, "invalid_state_transition", "")
	}
	if r, e = s.act(t, id, "approve", nil); e != nil || r["status"] != "approved" {
		t.Fatalf("approve: %v %v", r, e)
	}
	_, e = s.act(t, id, "approve", nil)
	wantRefused(t, e, 409, "invalid_state_transition", "")
	if r, e = s.act(t, id, "receive", nil); e != nil || r["status"] != "received" {
		t.Fatalf("receive: %v %v", r, e)
	}
	_, e = s.act(t, id, "reject", nil)
	wantRefused(t, e, 409, "invalid_state_transition", "")
	// 1.5 of line A's 2 units of 24.00: 18.00.
	_, e = s.act(t, id, "refund", obj{"amount_cents": 1801})
	wantRefused(t, e, 409, "amount_exceeds_balance", "amount_cents")
	_, e = s.act(t, id, "refund", obj{"amount_cents": 0})
	wantRefused(t, e, 400, "invalid_request", "amount_cents")
	other := env.Workspace(t, "business", true, true)
	_, e = adminWrite(t, env, other.ID, resource.Returns, resource.Action, "refund", id, obj{"amount_cents": 1})
	wantRefused(t, e, 404, "not_found", "")
	if r, e = s.act(t, id, "refund", obj{"amount_cents": 1800}); e != nil {
		t.Fatal(e)
	}
	if r["status"] != "refunded" || r["refund_cents"] != 1800.0 || r["refund_outcome"] != "refunded" || r["refunded_at"] == nil {
		t.Fatalf("refunded: %v", r)
	}
	_, e = s.act(t, id, "refund", obj{"amount_cents": 1})
	wantRefused(t, e, 409, "invalid_state_transition", "")
	order := env.Get(t, "/v1/sales-orders/"+s.id, s.ws.Key).WantStatus(t, 200).JSON(t)
	if order["payment_status"] != "partially_refunded" {
		t.Fatalf("order after the refund: %v", order["payment_status"])
	}
	pays := env.Get(t, "/v1/payments?sales_order_id="+s.id, s.ws.Key).WantStatus(t, 200).JSON(t)["data"].([]any)
	refund := pays[0].(obj)
	if len(pays) != 2 || refund["kind"] != "refund" || refund["amount_cents"] != 1800.0 || refund["store_id"] != s.storeID {
		t.Fatalf("payments: %v", pays)
	}

	// The rest: 0.5 A (6.00) and B (5.00); 11.00 of 29.00 is left unrefunded,
	// so the whole 11.00 by default, and the order is refunded.
	rest, e := s.open(t, obj{"sales_order_id": s.id})
	if e != nil {
		t.Fatal(e)
	}
	rid := rest["id"].(string)
	for _, a := range []string{"approve", "receive"} {
		if _, e := s.act(t, rid, a, nil); e != nil {
			t.Fatal(e)
		}
	}
	if rest, e = s.act(t, rid, "refund", nil); e != nil || rest["refund_cents"] != 1100.0 {
		t.Fatalf("default refund: %v %v", rest, e)
	}
	if ps := env.Get(t, "/v1/sales-orders/"+s.id, s.ws.Key).JSON(t)["payment_status"]; ps != "refunded" {
		t.Fatalf("order payment status %v", ps)
	}
	rejected, _ := s.open(t, obj{"sales_order_id": s.id})
	if rejected != nil {
		t.Fatalf("everything came back already, yet: %v", rejected)
	}

	want := "return.created return.approved return.received return.refunded online_payment.created sales_order.updated " +
		"return.created return.approved return.received return.refunded online_payment.created sales_order.updated"
	var got []string
	for _, ty := range eventTypes(t, env, s.ws.Key) {
		if strings.HasPrefix(ty, "return.") || ty == "online_payment.created" || (ty == "sales_order.updated" && len(got) > 0) {
			got = append(got, ty)
		}
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// A rejected return ends without a refund; only a partial capture bounds
// the refund below the lines' worth.
func TestReturnRejectAndPartlyPaidOrders(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShopOrder(t, env)
	s.deliver(t, s.shipA)
	r, _ := s.open(t, obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 1000}}})
	id := r["id"].(string)
	if _, e := s.act(t, id, "approve", nil); e != nil {
		t.Fatal(e)
	}
	if r, e := s.act(t, id, "reject", nil); e != nil || r["status"] != "rejected" || r["refund_outcome"] != "rejected" || r["refund_cents"] != 0.0 {
		t.Fatalf("reject: %v %v", r, e)
	}
	for _, a := range []string{"approve", "receive", "refund", "reject"} {
		_, e := s.act(t, id, a, nil)
		wantRefused(t, e, 409, "invalid_state_transition", "")
	}

	// An order of which only 10.00 was captured refunds at most 10.00.
	lines := []obj{{"description": "C", "qty_milli": 1000, "unit_price_cents": 5000}}
	o := env.Do(t, "POST", "/v1/sales-orders", s.ws.Key, obj{"client_name": "Cy", "store_id": s.storeID, "lines": lines,
		"payments": []obj{{"kind": "authorize", "amount_cents": 5000}, {"kind": "capture", "amount_cents": 1000}}}).WantStatus(t, 201).JSON(t)
	shp := env.Do(t, "POST", "/v1/shipments", s.ws.Key, obj{"sales_order_id": o["id"]}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "PATCH", "/v1/shipments/"+shp, s.ws.Key, obj{"sales_order_id": o["id"], "status": "delivered"}).WantStatus(t, 200)
	c, e := s.open(t, obj{"sales_order_id": o["id"]})
	if e != nil {
		t.Fatal(e)
	}
	for _, a := range []string{"approve", "receive"} {
		if _, e := s.act(t, c["id"].(string), a, nil); e != nil {
			t.Fatal(e)
		}
	}
	_, e = s.act(t, c["id"].(string), "refund", obj{"amount_cents": 1001})
	wantRefused(t, e, 409, "amount_exceeds_balance", "amount_cents")
	if c, e = s.act(t, c["id"].(string), "refund", nil); e != nil || c["refund_cents"] != 1000.0 {
		t.Fatalf("refund of a partly paid order: %v %v", c, e)
	}
}

// Concurrent returns of one order's lines never take back more than was
// delivered.
func TestConcurrentReturnsNeverExceedWhatWasDelivered(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	s := newShopOrder(t, env)
	s.deliver(t, s.shipA)
	made, over := racing(t, 6, "over_return", func() *apierr.Error {
		_, e := adminWrite(t, env, s.ws.ID, resource.Returns, resource.Create, "", "",
			obj{"sales_order_id": s.id, "lines": []obj{{"order_line_id": s.a, "qty_milli": 1000}}})
		return e
	})
	if made != 2 || over != 4 || s.returns(t) != 2 {
		t.Fatalf("%d opened, %d refused, %d stored", made, over, s.returns(t))
	}
}
