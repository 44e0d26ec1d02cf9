package rest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/orderline"
	"github.com/ledgerbase/ledgerbase/ent/promotion"
	"github.com/ledgerbase/ledgerbase/ent/promotioncode"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/ent/shipment"
	"github.com/ledgerbase/ledgerbase/ent/shipmentevent"
)

// order makes a confirmed sales order with lines of the given quantities
// (thousandths); online orders start not_shipped. Orders have no write
// endpoint, so the fixture goes through ent.
func order(t *testing.T, env *apitest.Env, ws string, online bool, qty ...int64) (*ent.SalesOrder, []*ent.OrderLine) {
	t.Helper()
	c := env.DB.Writer.SalesOrder.Create().SetWorkspaceID(ws).SetNumber("SO-1").SetDate("2026-01-31").
		SetStatus(salesorder.StatusConfirmed).SetOnline(online)
	if online {
		c.SetShippingStatus(salesorder.ShippingStatusNotShipped).SetPaymentStatus(salesorder.PaymentStatusPaid)
	}
	o, err := c.Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]*ent.OrderLine, len(qty))
	for i, q := range qty {
		if lines[i], err = env.DB.Writer.OrderLine.Create().SetWorkspaceID(ws).SetSalesOrderID(o.ID).SetPosition(i).
			SetSku(fmt.Sprintf("SKU-%d", i)).SetQtyMilli(q).Save(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return o, lines
}

func reloadOrder(t *testing.T, env *apitest.Env, id string) (*ent.SalesOrder, map[string]int64) {
	t.Helper()
	o, err := env.DB.Writer.SalesOrder.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := env.DB.Writer.OrderLine.Query().Where(orderline.SalesOrderID(id)).All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string]int64{}
	for _, l := range ls {
		shipped[l.ID] = l.ShippedQtyMilli
	}
	return o, shipped
}

func countShipments(t *testing.T, env *apitest.Env, orderID string) int {
	t.Helper()
	n, err := env.DB.Writer.Shipment.Query().Where(shipment.SalesOrderID(orderID)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestShipPartThenTheRestOfAnOnlineOrder(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, ls := order(t, env, ws.ID, true, 3000, 2000)

	first := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID, "carrier": "UPS", "tracking_no": "1Z1",
		"lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1000}}, "packages": []obj{{"tracking_no": "1Z1", "weight_g": 800}},
		"cost_cents": 590}).WantStatus(t, 201).JSON(t)
	if first["number"] != "SHP-000001" || first["status"] != "shipped" || first["carrier"] != "UPS" || first["cost_cents"] != 590.0 {
		t.Fatalf("first shipment: %v", first)
	}
	if lines, _ := first["lines"].([]any); len(lines) != 1 || lines[0].(obj)["qty_milli"] != 1000.0 {
		t.Fatalf("first shipment lines: %v", first["lines"])
	}
	got, shipped := reloadOrder(t, env, o.ID)
	if got.Status != salesorder.StatusPartiallyShipped || *got.ShippingStatus != salesorder.ShippingStatusPartiallyShipped || shipped[ls[0].ID] != 1000 {
		t.Fatalf("after part: %s %v %v", got.Status, *got.ShippingStatus, shipped)
	}
	so := env.Get(t, "/v1/sales-orders/"+o.ID, ws.Key).WantStatus(t, 200).JSON(t)
	if so["shipping_status"] != "partially_shipped" {
		t.Fatalf("sales order read: %v", so)
	}

	rest := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID}).WantStatus(t, 201).JSON(t)
	lines, _ := rest["lines"].([]any)
	if rest["number"] != "SHP-000002" || len(lines) != 2 || lines[0].(obj)["qty_milli"] != 2000.0 || lines[1].(obj)["qty_milli"] != 2000.0 {
		t.Fatalf("rest: %v", rest)
	}
	got, shipped = reloadOrder(t, env, o.ID)
	if got.Status != salesorder.StatusShipped || *got.ShippingStatus != salesorder.ShippingStatusShipped || shipped[ls[0].ID] != 3000 || shipped[ls[1].ID] != 2000 {
		t.Fatalf("after rest: %s %v %v", got.Status, *got.ShippingStatus, shipped)
	}
	env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID}).WantError(t, 409, "over_shipment")
	e := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID,
		"lines": []obj{{"order_line_id": ls[1].ID, "qty_milli": 1}}}).WantError(t, 409, "over_shipment")
	wantParam(t, e, "lines[0].qty_milli")
	if n := countShipments(t, env, o.ID); n != 2 {
		t.Fatalf("%d shipments, want 2", n)
	}
	list := env.Get(t, "/v1/shipments?sales_order_id="+o.ID, ws.Key).WantStatus(t, 200).JSON(t)
	if list["meta"].(obj)["total"] != 2.0 {
		t.Fatalf("list: %v", list["meta"])
	}
}

func TestRetriedShipmentWithIdempotencyKeyShipsOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, ls := order(t, env, ws.ID, true, 3000)
	body := obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1000}}}
	first := env.Do(t, "POST", "/v1/shipments", ws.Key, body, "Idempotency-Key", "ship-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/shipments", ws.Key, body, "Idempotency-Key", "ship-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry was not a replay: %s\n%s", again.Header, again.Body)
	}
	if _, shipped := reloadOrder(t, env, o.ID); shipped[ls[0].ID] != 1000 || countShipments(t, env, o.ID) != 1 {
		t.Fatalf("a retried shipment shipped twice: %v", shipped)
	}
	// Without the key a repeat is a second shipment, as asked.
	env.Do(t, "POST", "/v1/shipments", ws.Key, body).WantStatus(t, 201)
	if _, shipped := reloadOrder(t, env, o.ID); shipped[ls[0].ID] != 2000 {
		t.Fatalf("shipped %v", shipped)
	}
}

func TestShipmentCreateRules(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, ls := order(t, env, ws.ID, false, 2000)
	other, otherLines := order(t, env, ws.ID, false, 1000)
	cancelled, _ := order(t, env, ws.ID, false, 1000)
	env.DB.Writer.SalesOrder.UpdateOneID(cancelled.ID).SetStatus(salesorder.StatusCancelled).ExecX(t.Context())
	foreignWS := env.Workspace(t, "business", true, false)
	foreign, _ := order(t, env, foreignWS.ID, false, 1000)

	cases := []struct {
		body          obj
		status        int
		code, param   string
		checkNoChange string
	}{
		{obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 2001}}}, 409, "over_shipment", "lines[0].qty_milli", o.ID},
		{obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": otherLines[0].ID, "qty_milli": 1}}}, 400, "invalid_request", "lines[0].order_line_id", o.ID},
		{obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 0}}}, 400, "invalid_request", "lines[0].qty_milli", o.ID},
		{obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": -5}}}, 400, "invalid_request", "lines[0].qty_milli", o.ID},
		{obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1}, {"order_line_id": ls[0].ID, "qty_milli": 1}}}, 400, "invalid_request", "lines[1].order_line_id", o.ID},
		{obj{"sales_order_id": o.ID, "lines": []obj{}}, 400, "invalid_request", "lines", o.ID},
		{obj{"sales_order_id": o.ID, "status": "delivered"}, 400, "invalid_request", "status", o.ID},
		{obj{"lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1}}}, 400, "invalid_request", "sales_order_id", o.ID},
		{obj{"sales_order_id": "so_missing"}, 400, "invalid_request", "sales_order_id", o.ID},
		{obj{"sales_order_id": foreign.ID}, 400, "invalid_request", "sales_order_id", foreign.ID},
		{obj{"sales_order_id": cancelled.ID}, 409, "invalid_state_transition", "", cancelled.ID},
		{obj{"sales_order_id": o.ID, "packages": []obj{{"weight_g": -1}}}, 400, "invalid_request", "packages[0].weight_g", o.ID},
	}
	for i, c := range cases {
		e := env.Do(t, "POST", "/v1/shipments", ws.Key, c.body).WantError(t, c.status, c.code)
		if c.param != "" {
			wantParam(t, e, c.param)
		}
		got, shipped := reloadOrder(t, env, c.checkNoChange)
		for _, q := range shipped {
			if q != 0 || got.Status == salesorder.StatusPartiallyShipped || countShipments(t, env, c.checkNoChange) != 0 {
				t.Fatalf("case %d: a refused shipment changed the order: %s %v", i, got.Status, shipped)
			}
		}
	}
	if n := countShipments(t, env, other.ID); n != 0 {
		t.Fatalf("another order got %d shipments", n)
	}
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", "/v1/shipments", viewer, obj{"sales_order_id": o.ID}).WantError(t, 403, "permission_denied")
	if countShipments(t, env, o.ID) != 0 {
		t.Fatal("a viewer shipped")
	}
	noCommerce := env.Workspace(t, "business", false, false)
	env.Do(t, "POST", "/v1/shipments", noCommerce.Key, obj{"sales_order_id": o.ID}).WantError(t, 403, "commerce_mode_required")
}

func TestShipmentStatusMovesOnlyForward(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, ls := order(t, env, ws.ID, true, 2000)
	a := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1000}}}).WantStatus(t, 201).JSON(t)
	b := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID}).WantStatus(t, 201).JSON(t)
	pa, pb := "/v1/shipments/"+a["id"].(string), "/v1/shipments/"+b["id"].(string)

	e := env.Do(t, "PATCH", pa, ws.Key, obj{"status": "in_transit"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "sales_order_id")
	other, _ := order(t, env, ws.ID, true, 1000)
	e = env.Do(t, "PATCH", pa, ws.Key, obj{"sales_order_id": other.ID, "status": "in_transit"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "sales_order_id")
	e = env.Do(t, "PATCH", pa, ws.Key, obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1}}}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "lines")

	moved := env.Do(t, "PATCH", pa, ws.Key, obj{"sales_order_id": o.ID, "status": "in_transit", "tracking_no": "TRK"}).WantStatus(t, 200).JSON(t)
	if moved["status"] != "in_transit" || moved["tracking_no"] != "TRK" || moved["delivered_at"] != nil || moved["number"] != a["number"] {
		t.Fatalf("in transit: %v", moved)
	}
	e = env.Do(t, "PATCH", pa, ws.Key, obj{"sales_order_id": o.ID, "status": "shipped"}).WantError(t, 409, "invalid_state_transition")
	wantParam(t, e, "status")
	if got := env.Get(t, pa, ws.Key).JSON(t); got["status"] != "in_transit" {
		t.Fatalf("a refused move changed the shipment: %v", got)
	}
	done := env.Do(t, "PATCH", pa, ws.Key, obj{"sales_order_id": o.ID, "status": "delivered"}).WantStatus(t, 200).JSON(t)
	if done["status"] != "delivered" || done["delivered_at"] == nil || done["tracking_no"] != "TRK" {
		t.Fatalf("delivered: %v", done)
	}
	if got, _ := reloadOrder(t, env, o.ID); got.Status != salesorder.StatusShipped {
		t.Fatalf("order delivered while a shipment is still on its way: %s", got.Status)
	}
	// Skipping straight to delivered is allowed; the last delivery delivers the order.
	env.Do(t, "PATCH", pb, ws.Key, obj{"sales_order_id": o.ID, "status": "delivered"}).WantStatus(t, 200)
	got, _ := reloadOrder(t, env, o.ID)
	if got.Status != salesorder.StatusDelivered || *got.ShippingStatus != salesorder.ShippingStatusDelivered {
		t.Fatalf("order after every delivery: %s %v", got.Status, *got.ShippingStatus)
	}
	env.Do(t, "PATCH", pb, ws.Key, obj{"sales_order_id": o.ID, "status": "in_transit"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/shipments/shp_missing", ws.Key, obj{"sales_order_id": o.ID}).WantError(t, 404, "not_found")
}

func TestTrackingEventsAreStoredOnceInTimelineOrder(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, _ := order(t, env, ws.ID, true, 1000)
	s := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID}).WantStatus(t, 201).JSON(t)
	path := "/v1/shipments/" + s["id"].(string) + "/events"

	r := env.Do(t, "POST", path, ws.Key, obj{"carrier_event_id": "ev-2", "occurred_at": "2026-02-02T10:00:00+01:00", "status": "in_transit", "location": "Lyon"}).WantStatus(t, 201).JSON(t)
	if evs, _ := r["events"].([]any); len(evs) != 1 || evs[0].(obj)["location"] != "Lyon" || r["id"] != s["id"] {
		t.Fatalf("one event: %v", r)
	}
	env.Do(t, "POST", path, ws.Key, obj{"carrier_event_id": "ev-2", "occurred_at": "2026-02-02T09:00:00Z"}).WantStatus(t, 200)
	r = env.Do(t, "POST", path, ws.Key, obj{"events": []obj{
		{"carrier_event_id": "ev-3", "occurred_at": "2026-02-03T08:00:00Z", "status": "delivered"},
		{"carrier_event_id": "ev-1", "occurred_at": "2026-02-01T08:00:00Z", "status": "picked_up"},
		{"carrier_event_id": "ev-2", "occurred_at": "2026-02-02T09:00:00Z"},
		{"carrier_event_id": "ev-3", "occurred_at": "2026-02-03T08:00:00Z"},
		{"occurred_at": "2026-02-01T12:00:00Z", "description": "no carrier id"},
	}}).WantStatus(t, 201).JSON(t)
	evs, _ := r["events"].([]any)
	var order []string
	for _, e := range evs {
		id, _ := e.(obj)["carrier_event_id"].(string)
		order = append(order, id)
	}
	if fmt.Sprint(order) != "[ev-1  ev-2 ev-3]" {
		t.Fatalf("timeline %v, want ev-1, the event without id, ev-2, ev-3", order)
	}
	if evs[2].(obj)["occurred_at"] != "2026-02-02T09:00:00Z" {
		t.Fatalf("occurred_at not kept in UTC: %v", evs[2])
	}
	if got := env.Get(t, "/v1/shipments/"+s["id"].(string), ws.Key).JSON(t); len(got["events"].([]any)) != 4 {
		t.Fatalf("GET timeline: %v", got["events"])
	}

	count := func() int {
		n, err := env.DB.Writer.ShipmentEvent.Query().Where(shipmentevent.ShipmentID(s["id"].(string))).Count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bad := []struct {
		body  any
		param string
	}{
		{obj{"events": []obj{{"carrier_event_id": "ev-9", "occurred_at": "2026-02-04T08:00:00Z"}, {"carrier_event_id": "ev-10"}}}, "events[1].occurred_at"},
		{obj{"events": []obj{{"occurred_at": "yesterday"}}}, "events[0].occurred_at"},
		{obj{"events": []obj{}}, "events"},
		{obj{"events": []obj{{"occurred_at": "2026-02-04T08:00:00Z"}}, "extra": 1}, "extra"},
		{obj{"occurred_at": "2026-02-04T08:00:00Z", "carrier_event_id": ""}, "carrier_event_id"},
		{obj{"occurred_at": "2026-02-04T08:00:00Z", "colour": "x"}, "colour"},
	}
	for _, b := range bad {
		wantParam(t, env.Do(t, "POST", path, ws.Key, b.body).WantError(t, 400, "invalid_request"), b.param)
	}
	many := make([]obj, 101)
	for i := range many {
		many[i] = obj{"occurred_at": "2026-02-04T08:00:00Z"}
	}
	wantParam(t, env.Do(t, "POST", path, ws.Key, obj{"events": many}).WantError(t, 400, "invalid_request"), "events")
	if n := count(); n != 4 {
		t.Fatalf("refused event posts stored events: %d", n)
	}
	env.Do(t, "POST", "/v1/shipments/shp_missing/events", ws.Key, obj{"occurred_at": "2026-02-04T08:00:00Z"}).WantError(t, 404, "not_found")
	other := env.Workspace(t, "business", true, false)
	env.Do(t, "POST", path, other.Key, obj{"occurred_at": "2026-02-04T08:00:00Z"}).WantError(t, 404, "not_found")
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", path, viewer, obj{"occurred_at": "2026-02-04T08:00:00Z"}).WantError(t, 403, "permission_denied")
	if n := count(); n != 4 {
		t.Fatalf("refused event posts stored events: %d", n)
	}
}

func TestConcurrentShipmentsNeverShipMoreThanOrdered(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, ls := order(t, env, ws.ID, true, 5000, 3000)
	const n = 16
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := obj{"sales_order_id": o.ID, "lines": []obj{{"order_line_id": ls[0].ID, "qty_milli": 1000}}}
			if i%4 == 3 { // some ask for everything that remains while others ship parts
				body = obj{"sales_order_id": o.ID}
			}
			r := env.Do(t, "POST", "/v1/shipments", ws.Key, body)
			statuses[i] = r.Status
			if r.Status != 201 {
				r.WantError(t, 409, "over_shipment")
			}
		})
	}
	wg.Wait()
	got, shipped := reloadOrder(t, env, o.ID)
	if shipped[ls[0].ID] != 5000 || shipped[ls[1].ID] != 3000 || got.Status != salesorder.StatusShipped {
		t.Fatalf("shipped %v, order %s (statuses %v)", shipped, got.Status, statuses)
	}
	ships, err := env.DB.Writer.Shipment.Query().Where(shipment.SalesOrderID(o.ID)).All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	total, created := map[string]int64{}, tally(t, statuses, 201, 409)
	for _, s := range ships {
		for _, l := range s.Lines {
			total[l.OrderLineID] += l.QtyMilli
		}
	}
	if total[ls[0].ID] != 5000 || total[ls[1].ID] != 3000 || created != len(ships) {
		t.Fatalf("shipments carry %v in %d shipments (%d answered 201)", total, len(ships), created)
	}
}

func TestConcurrentEventPostsStoreOneCarrierEventOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, false)
	o, _ := order(t, env, ws.ID, true, 1000)
	s := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": o.ID}).WantStatus(t, 201).JSON(t)
	path := "/v1/shipments/" + s["id"].(string) + "/events"
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var body any = obj{"carrier_event_id": "dup-1", "occurred_at": "2026-03-01T10:00:00Z", "status": "in_transit"}
			if i%2 == 1 {
				body = obj{"events": []any{body}}
			}
			statuses[i] = env.Do(t, "POST", path, ws.Key, body).Status
		})
	}
	wg.Wait()
	created := tally(t, statuses, 201, 200)
	stored, err := env.DB.Writer.ShipmentEvent.Query().Where(shipmentevent.ShipmentID(s["id"].(string))).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if stored != 1 || created != 1 {
		t.Fatalf("%d events stored, %d answered 201; want 1 and 1 (%v)", stored, created, statuses)
	}
}

func TestPromotionCodes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	mk := func(ws string, kind promotion.Kind, status promotion.Status) string {
		return env.DB.Writer.Promotion.Create().SetWorkspaceID(ws).SetName("Promo").SetKind(kind).SetStatus(status).SaveX(t.Context()).ID
	}
	codePromo := mk(ws.ID, promotion.KindCode, promotion.StatusActive)
	auto := mk(ws.ID, promotion.KindAutomatic, promotion.StatusActive)
	archived := mk(ws.ID, promotion.KindCode, promotion.StatusArchived)
	other := env.Workspace(t, "business", false, false)
	foreign := mk(other.ID, promotion.KindCode, promotion.StatusActive)
	path := "/v1/promotions/" + codePromo + "/codes"

	c := env.Do(t, "POST", path, ws.Key, obj{"code": "Summer25", "max_uses": 100, "max_uses_per_customer": 1,
		"expires_at": "2026-09-01T00:00:00+02:00"}).WantStatus(t, 201).JSON(t)
	if c["code"] != "Summer25" || c["promotion_id"] != codePromo || c["max_uses"] != 100.0 || c["max_uses_per_customer"] != 1.0 ||
		c["expires_at"] != "2026-08-31T22:00:00Z" || c["times_used"] != 0.0 || c["code_key"] != nil {
		t.Fatalf("code: %v", c)
	}
	list := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t)
	if list["meta"].(obj)["total"] != 1.0 {
		t.Fatalf("codes list: %v", list)
	}
	count := func() int {
		n, err := env.DB.Writer.PromotionCode.Query().Where(promotioncode.WorkspaceID(ws.ID)).Count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Unique in the workspace ignoring case, across its promotions.
	second := mk(ws.ID, promotion.KindCode, promotion.StatusScheduled)
	wantParam(t, env.Do(t, "POST", "/v1/promotions/"+second+"/codes", ws.Key, obj{"code": "SUMMER25"}).WantError(t, 409, "duplicate"), "code")
	env.Do(t, "POST", "/v1/promotions/"+auto+"/codes", ws.Key, obj{"code": "AUTO"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/promotions/"+archived+"/codes", ws.Key, obj{"code": "OLD"}).WantError(t, 404, "not_found")
	env.Do(t, "POST", "/v1/promotions/"+foreign+"/codes", ws.Key, obj{"code": "THEIRS"}).WantError(t, 404, "not_found")
	for _, b := range []struct {
		body  obj
		param string
	}{
		{obj{"code": " "}, "code"},
		{obj{}, "code"},
		{obj{"code": "X", "max_uses": 0}, "max_uses"},
		{obj{"code": "X", "max_uses": 1, "max_uses_per_customer": 2}, "max_uses_per_customer"},
		{obj{"code": "X", "expires_at": "2026-09-01"}, "expires_at"},
	} {
		wantParam(t, env.Do(t, "POST", path, ws.Key, b.body).WantError(t, 400, "invalid_request"), b.param)
	}
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", path, viewer, obj{"code": "VIEW"}).WantError(t, 403, "permission_denied")
	if n := count(); n != 1 {
		t.Fatalf("refused codes were stored: %d", n)
	}
	// The same code in another workspace is fine.
	env.Do(t, "POST", "/v1/promotions/"+foreign+"/codes", other.Key, obj{"code": "summer25"}).WantStatus(t, 201)
	growth := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", path, growth.Key, obj{"code": "G"}).WantError(t, 403, "plan_required")
}
