package writes

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/orderline"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/ent/shipment"
	"github.com/ledgerbase/ledgerbase/ent/shipmentevent"
)

// shipmentSteps orders the statuses; a shipment only moves forward.
var shipmentSteps = map[shipment.Status]int{shipment.StatusShipped: 0, shipment.StatusInTransit: 1, shipment.StatusDelivered: 2}

// createShipment ships the given lines of an order (all that remains when
// omitted). The order's row is locked first, so concurrent shipments of one
// order never ship more than was ordered.
func createShipment(q *Request) (Result, error) {
	v, ws := q.Body, q.Principal.Workspace.ID
	soID, _ := v.String("sales_order_id")
	if st, ok := v.String("status"); ok && st != string(shipment.StatusShipped) {
		return Result{}, apierr.Invalid("status", "a new shipment is shipped; move it to in_transit or delivered with PATCH")
	}
	want, err := requestedLines(v, "ship")
	if err != nil {
		return Result{}, err
	}
	var shpID string
	return q.inTx(func(tx *ent.Tx) error {
		order, err := lockOrder(q, tx, ws, soID)
		if err != nil {
			return err
		}
		if !q.Op.Allowed(string(order.Status)) {
			return apierr.Conflict("invalid_state_transition", "a %s order cannot be shipped", order.Status)
		}
		lines, err := tx.OrderLine.Query().Where(orderline.SalesOrderID(order.ID)).
			Order(ent.Asc(orderline.FieldPosition), ent.Asc(orderline.FieldID)).All(q.Ctx)
		if err != nil {
			return err
		}
		ship, err := linesToShip(lines, want)
		if err != nil {
			return err
		}
		// Its lines are part of the order: it is touched before they change.
		if err := q.touch(tx, resource.SalesOrders, order.ID, string(order.Status)); err != nil {
			return err
		}
		shipped := map[string]int64{}
		for _, l := range ship {
			shipped[l.OrderLineID] = l.QtyMilli
			if err := tx.OrderLine.UpdateOneID(l.OrderLineID).AddShippedQtyMilli(l.QtyMilli).Exec(q.Ctx); err != nil {
				return err
			}
		}
		complete := true
		for _, l := range lines {
			if l.ShippedQtyMilli+shipped[l.ID] < l.QtyMilli {
				complete = false
			}
		}
		status, shipping := salesorder.StatusPartiallyShipped, salesorder.ShippingStatusPartiallyShipped
		if complete {
			status, shipping = salesorder.StatusShipped, salesorder.ShippingStatusShipped
		}
		u := tx.SalesOrder.UpdateOneID(order.ID).SetStatus(status)
		if order.Online {
			u.SetShippingStatus(shipping)
		}
		if err := u.Exec(q.Ctx); err != nil {
			return err
		}
		nums, err := numbering.Shipments.Allocate(q.Ctx, q.DB, tx, ws, 1, func(cand []string) (map[string]bool, error) {
			used, err := tx.Shipment.Query().Where(shipment.WorkspaceID(ws), shipment.NumberIn(cand...)).Select(shipment.FieldNumber).Strings(q.Ctx)
			return setOf(used), err
		})
		if err != nil {
			return err
		}
		c := tx.Shipment.Create().SetWorkspaceID(ws).SetSalesOrderID(order.ID).SetNumber(nums[0]).
			SetLines(ship).SetShippedAt(time.Now().UTC())
		if err := applyShipment(c.Mutation(), q); err != nil {
			return err
		}
		return insert(q.Ctx, c.Mutation(), c.Exec, &shpID)
	}, func() Answer { return record(http.StatusCreated, resource.Shipments, shpID, "") })
}

// requestedLines reads lines of order lines and quantities to verb (ship,
// return); nil means everything that remains.
func requestedLines(v Values, verb string) ([]shape.ShipmentLine, error) {
	given, ok := v.Objects("lines")
	if !ok {
		return nil, nil
	}
	if len(given) == 0 {
		return nil, apierr.Invalid("lines", "lines must not be empty; omit it to %s everything that remains", verb)
	}
	out := make([]shape.ShipmentLine, len(given))
	seen := map[string]bool{}
	for i, l := range given {
		id, _ := l.String("order_line_id")
		qty, _ := l.Int("qty_milli")
		if seen[id] {
			return nil, apierr.Invalid(fmt.Sprintf("lines[%d].order_line_id", i), "order line %q appears twice", id)
		}
		if qty <= 0 {
			return nil, apierr.Invalid(fmt.Sprintf("lines[%d].qty_milli", i), "lines[%d].qty_milli must be positive (thousandths: 1000 is one unit)", i)
		}
		seen[id] = true
		out[i] = shape.ShipmentLine{OrderLineID: id, QtyMilli: qty}
	}
	return out, nil
}

// linesToShip checks the wanted lines against what remains on the order.
func linesToShip(lines []*ent.OrderLine, want []shape.ShipmentLine) ([]shape.ShipmentLine, error) {
	byID := make(map[string]*ent.OrderLine, len(lines))
	for _, l := range lines {
		byID[l.ID] = l
	}
	if want == nil {
		var all []shape.ShipmentLine
		for _, l := range lines {
			if rest := l.QtyMilli - l.ShippedQtyMilli; rest > 0 {
				all = append(all, shape.ShipmentLine{OrderLineID: l.ID, QtyMilli: rest})
			}
		}
		if len(all) == 0 {
			return nil, apierr.Conflict("over_shipment", "nothing is left to ship on this order")
		}
		return all, nil
	}
	for i, w := range want {
		l := byID[w.OrderLineID]
		if l == nil {
			p := fmt.Sprintf("lines[%d].order_line_id", i)
			return nil, apierr.Invalid(p, "%q is not a line of this order", w.OrderLineID)
		}
		if rest := l.QtyMilli - l.ShippedQtyMilli; w.QtyMilli > rest {
			e := apierr.Conflict("over_shipment", "line %d (%s) has %s left to ship; %s asked", l.Position, l.Description, qtyText(rest), qtyText(w.QtyMilli))
			e.Param = fmt.Sprintf("lines[%d].qty_milli", i)
			return nil, e
		}
	}
	return want, nil
}

// lockOrder reads the body's order, locked until commit on PostgreSQL.
func lockOrder(q *Request, tx *ent.Tx, ws, id string) (*ent.SalesOrder, error) {
	o, err := forUpdate(q, tx.SalesOrder.Query().Where(salesorder.WorkspaceID(ws), salesorder.ID(id))).Only(q.Ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.Invalid("sales_order_id", "no such sales order %q in this workspace", id)
	}
	return o, err
}

// applyShipment sets the descriptive fields sent (both on POST and PATCH);
// the order, lines and status are the callers' to set.
func applyShipment(m *ent.ShipmentMutation, q *Request) error {
	v := q.Body
	if err := applyBody(m, q.Op.Body, v, nil, "sales_order_id", "lines", "packages", "status"); err != nil {
		return err
	}
	if ps, ok := v.Objects("packages"); ok {
		out := make([]shape.Package, len(ps))
		for i, p := range ps {
			out[i].TrackingNo, _ = p.String("tracking_no")
			out[i].WeightG, _ = p.Int("weight_g")
		}
		m.SetPackages(out)
	}
	return nil
}

// updateShipment changes a shipment's details and moves its status forward
// only; the last delivered shipment of a fully shipped order delivers it.
func updateShipment(q *Request) (Result, error) {
	v, ws := q.Body, q.Principal.Workspace.ID
	soID, _ := v.String("sales_order_id")
	if v.Has("lines") {
		return Result{}, apierr.Invalid("lines", "the lines of a shipment cannot change once shipped; create another shipment")
	}
	return q.inTx(func(tx *ent.Tx) error {
		s, err := tx.Shipment.Query().Where(shipment.WorkspaceID(ws), shipment.ID(q.ID)).Only(q.Ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("shipment")
		}
		if err != nil {
			return err
		}
		if s.SalesOrderID != soID {
			return apierr.Invalid("sales_order_id", "shipment %s belongs to sales order %s, not %q", s.ID, s.SalesOrderID, soID)
		}
		// The order is locked before the shipment is read again, as on
		// create, so deliveries of its shipments are decided one at a time.
		order, err := lockOrder(q, tx, ws, soID)
		if err != nil {
			return err
		}
		if s, err = tx.Shipment.Get(q.Ctx, s.ID); err != nil {
			return err
		}
		u := tx.Shipment.UpdateOneID(s.ID)
		if err := applyShipment(u.Mutation(), q); err != nil {
			return err
		}
		delivered := false
		if st, ok := v.String("status"); ok {
			to := shipment.Status(st)
			if shipmentSteps[to] < shipmentSteps[s.Status] {
				e := apierr.Conflict("invalid_state_transition", "a shipment moves only forward (shipped, in_transit, delivered); this one is %s", s.Status)
				e.Param = "status"
				return e
			}
			u.SetStatus(to)
			if to == shipment.StatusDelivered && s.Status != shipment.StatusDelivered {
				u.SetDeliveredAt(time.Now().UTC())
				delivered = true
			}
		}
		if err := u.Exec(q.Ctx); err != nil {
			return err
		}
		if !delivered || order.Status != salesorder.StatusShipped {
			return nil
		}
		pending, err := tx.Shipment.Query().Where(shipment.SalesOrderID(order.ID), shipment.StatusNEQ(shipment.StatusDelivered)).Exist(q.Ctx)
		if err != nil || pending {
			return err
		}
		if err := q.touch(tx, resource.SalesOrders, order.ID, string(order.Status)); err != nil {
			return err
		}
		ou := tx.SalesOrder.UpdateOneID(order.ID).SetStatus(salesorder.StatusDelivered)
		if order.Online {
			ou.SetShippingStatus(salesorder.ShippingStatusDelivered)
		}
		return ou.Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, resource.Shipments, q.ID, "") })
}

// addTrackingEvents stores one event, or {events: [...]}, on a shipment.
// A carrier_event_id already stored is skipped by the database (ON CONFLICT
// DO NOTHING), so concurrent deliveries of one event store it once.
func addTrackingEvents(q *Request) (Result, error) {
	events, err := trackingEvents(q)
	if err != nil {
		return Result{}, err
	}
	ws := q.Principal.Workspace.ID
	stored := 0
	return q.inTx(func(tx *ent.Tx) error {
		ok, err := tx.Shipment.Query().Where(shipment.WorkspaceID(ws), shipment.ID(q.ID)).Exist(q.Ctx)
		if err != nil {
			return err
		}
		if !ok {
			return apierr.NotFound("shipment")
		}
		creates := make([]*ent.ShipmentEventCreate, len(events))
		newIDs := make([]string, len(events))
		for i, e := range events {
			newIDs[i] = ids.New("sev")
			at, _ := e.String("occurred_at")
			t, _ := time.Parse(time.RFC3339, at)
			c := tx.ShipmentEvent.Create().SetID(newIDs[i]).SetWorkspaceID(ws).SetShipmentID(q.ID).SetOccurredAt(t.UTC())
			if err := applyBody(c.Mutation(), resource.TrackingEventFields(), e, nil, "occurred_at"); err != nil {
				return err
			}
			creates[i] = c
		}
		err = tx.ShipmentEvent.CreateBulk(creates...).
			OnConflictColumns(shipmentevent.FieldShipmentID, shipmentevent.FieldCarrierEventID).DoNothing().Exec(q.Ctx)
		if err != nil {
			return err
		}
		stored, err = tx.ShipmentEvent.Query().Where(shipmentevent.IDIn(newIDs...)).Count(q.Ctx)
		return err
	}, func() Answer { return repeated(record(created(stored > 0), resource.Shipments, q.ID, ""), stored == 0) })
}

// trackingEvents splits the body: {events: [...]} or one event object,
// each checked against the declared tracking event fields.
func trackingEvents(q *Request) ([]Values, error) {
	fields, key := resource.TrackingEventFields(), q.Op.BulkKey
	one := func(m map[string]any, path string) (Values, error) {
		v, err := body.Check(m, fields, path)
		if err != nil {
			return v, err
		}
		if s, ok := v.String("carrier_event_id"); ok && strings.TrimSpace(s) == "" {
			return v, apierr.Invalid(path+"carrier_event_id", "%scarrier_event_id must not be blank; omit it when the carrier gives none", path)
		}
		return v, nil
	}
	raw, batch := q.Raw[key]
	if !batch {
		v, err := one(q.Raw, "")
		return []Values{v}, err
	}
	for k := range q.Raw {
		if k != key {
			return nil, apierr.Invalid(k, "unknown field %q next to %s; send one event or {\"%s\": [...]}", k, key, key)
		}
	}
	list, ok := raw.([]any)
	switch {
	case !ok:
		return nil, apierr.Invalid(key, "%s must be an array of events", key)
	case len(list) == 0:
		return nil, apierr.Invalid(key, "%s must not be empty", key)
	case len(list) > q.Op.BulkMax:
		return nil, apierr.Invalid(key, "%s has %d events; at most %d per call", key, len(list), q.Op.BulkMax)
	}
	out := make([]Values, len(list))
	for i, el := range list {
		p := fmt.Sprintf("%s[%d]", key, i)
		m, ok := el.(map[string]any)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be an object", p)
		}
		v, err := one(m, p+".")
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
