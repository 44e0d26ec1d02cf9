package writes

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/orderline"
	"github.com/ledgerbase/ledgerbase/ent/payment"
	"github.com/ledgerbase/ledgerbase/ent/returnrequest"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/ent/shipment"
)

// Returns (RMA) take back delivered goods of an online order: at most what
// its delivered shipments carried, less what its other returns take back.

// Returnable is one order line and how much of it may still come back.
type Returnable struct {
	Line     *ent.OrderLine
	QtyMilli int64 // delivered less already returned
}

// returnable lists the order's lines with what may still come back, in
// the order's line order.
func returnable(ctx context.Context, c *ent.Client, orderID string) ([]Returnable, error) {
	lines, err := c.OrderLine.Query().Where(orderline.SalesOrderID(orderID)).
		Order(ent.Asc(orderline.FieldPosition), ent.Asc(orderline.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	left := map[string]int64{}
	shps, err := c.Shipment.Query().Where(shipment.SalesOrderID(orderID), shipment.StatusEQ(shipment.StatusDelivered)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range shps {
		for _, l := range s.Lines {
			left[l.OrderLineID] += l.QtyMilli
		}
	}
	rets, err := c.ReturnRequest.Query().Where(returnrequest.SalesOrderID(orderID), returnrequest.StatusNEQ(returnrequest.StatusRejected)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rets {
		for _, l := range r.Lines {
			left[l.OrderLineID] -= l.QtyMilli
		}
	}
	out := make([]Returnable, len(lines))
	for i, l := range lines {
		out[i] = Returnable{Line: l, QtyMilli: max(0, left[l.ID])}
	}
	return out, nil
}

// ReturnableLines is what of an order of the workspace may still come
// back, for a form to offer; nil when the workspace has no such order.
func ReturnableLines(ctx context.Context, c *ent.Client, workspaceID, orderID string) ([]Returnable, error) {
	ok, err := c.SalesOrder.Query().Where(salesorder.WorkspaceID(workspaceID), salesorder.ID(orderID)).Exist(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return returnable(ctx, c, orderID)
}

// openReturn opens a return of the body's lines (all returnable when
// omitted). The order's row is locked first, so concurrent returns of one
// order never take back more than was delivered.
func openReturn(q *Request) (Result, error) {
	v, ws := q.Body, q.Workspace().ID
	soID, _ := v.String("sales_order_id")
	reason, _ := v.String("reason")
	reason = strings.TrimSpace(reason)
	number, hasNumber := v.String("number")
	if hasNumber && strings.TrimSpace(number) == "" {
		return Result{}, apierr.Invalid("number", "number cannot be empty; omit it to have one allocated")
	}
	want, err := requestedLines(v, "return")
	if err != nil {
		return Result{}, err
	}
	given, _ := v.Objects("lines")
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		order, err := lockOrder(q, tx, ws, soID)
		if err != nil {
			return err
		}
		if !order.Online {
			return apierr.Invalid("sales_order_id", "returns are for online orders; %s is not one", order.Number)
		}
		avail, err := returnable(q.Ctx, tx.Client(), order.ID)
		if err != nil {
			return err
		}
		lines, err := returnLines(avail, want, order.Number)
		if err != nil {
			return err
		}
		for i := range lines {
			lines[i].Reason = reason
			if i < len(given) {
				if r, ok := given[i].String("reason"); ok && strings.TrimSpace(r) != "" {
					lines[i].Reason = strings.TrimSpace(r)
				}
			}
		}
		num, err := q.docNumber(tx, resource.Returns, numbering.Returns, number)
		if err != nil {
			return err
		}
		r, err := tx.ReturnRequest.Create().SetWorkspaceID(ws).SetSalesOrderID(order.ID).SetNumber(num).
			SetReason(reason).SetLines(lines).SetCurrencyCode(order.CurrencyCode).Save(q.Ctx)
		if err != nil {
			return err
		}
		id = r.ID
		return nil
	}, func() Answer { return record(http.StatusCreated, resource.Returns, id, "") })
}

// returnLines checks the wanted lines (nil: everything) against what may come back.
func returnLines(avail []Returnable, want []shape.ShipmentLine, orderNumber string) ([]shape.ReturnLine, error) {
	byID := map[string]Returnable{}
	var all []shape.ReturnLine
	for _, a := range avail {
		byID[a.Line.ID] = a
		if a.QtyMilli > 0 {
			all = append(all, shape.ReturnLine{OrderLineID: a.Line.ID, QtyMilli: a.QtyMilli})
		}
	}
	if want == nil {
		if len(all) == 0 {
			return nil, apierr.Conflict("over_return", "nothing of order %s is left to return: a return takes back delivered goods not returned yet", orderNumber)
		}
		return all, nil
	}
	out := make([]shape.ReturnLine, len(want))
	for i, w := range want {
		a, ok := byID[w.OrderLineID]
		if !ok {
			return nil, apierr.Invalid(fmt.Sprintf("lines[%d].order_line_id", i), "%q is not a line of order %s", w.OrderLineID, orderNumber)
		}
		if w.QtyMilli > a.QtyMilli {
			e := apierr.Conflict("over_return", "line %d (%s) has %s delivered and not yet returned; %s asked",
				a.Line.Position, a.Line.Description, qtyText(a.QtyMilli), qtyText(w.QtyMilli))
			e.Param = fmt.Sprintf("lines[%d].qty_milli", i)
			return nil, e
		}
		out[i] = shape.ReturnLine{OrderLineID: w.OrderLineID, QtyMilli: w.QtyMilli}
	}
	return out, nil
}

// refundReturn refunds a received return, by default all its lines were
// sold for (returnWorth) up to the order's captured money not yet refunded,
// as a refund payment on the order, whose payment_status follows.
func refundReturn(q *Request) (Result, error) {
	amount, given := q.Body.Int("amount_cents")
	ws := q.Workspace().ID
	var payID string
	return q.move(func(tx *ent.Tx, _ string) error {
		r, err := tx.ReturnRequest.Query().Where(returnrequest.ID(q.ID), returnrequest.WorkspaceID(ws)).Only(q.Ctx)
		if err != nil {
			return err
		}
		order, err := lockOrder(q, tx, ws, r.SalesOrderID)
		if err != nil {
			return err
		}
		worth, err := returnWorth(q.Ctx, tx, r)
		if err != nil {
			return err
		}
		pays, err := tx.Payment.Query().Where(payment.WorkspaceID(ws), payment.SalesOrderID(order.ID), payment.StatusEQ(payment.StatusSucceeded)).
			Order(ent.Asc(payment.FieldCreatedAt), ent.Asc(payment.FieldID)).All(q.Ctx)
		if err != nil {
			return err
		}
		var captured, refunded int64
		hist := make([]storePayment, 0, len(pays)+1)
		for _, p := range pays {
			switch p.Kind {
			case payment.KindCapture:
				captured += p.AmountCents
			case payment.KindRefund:
				refunded += p.AmountCents
			}
			hist = append(hist, storePayment{kind: p.Kind, amount: p.AmountCents})
		}
		most := min(worth, captured-refunded)
		if !given {
			amount = most
		}
		if amount <= 0 || amount > most {
			cur := order.CurrencyCode
			e := apierr.Conflict("amount_exceeds_balance", "at most %s can be refunded: the returned lines are worth %s and %s of the order's payments is not refunded yet",
				amountText(max(most, 0), cur), amountText(worth, cur), amountText(captured-refunded, cur))
			e.Param = "amount_cents"
			return e
		}
		hist = append(hist, storePayment{kind: payment.KindRefund, amount: amount})
		status, err := paymentState(order.AmountInclVatCents, order.CurrencyCode, hist, "amount_cents")
		if err != nil {
			return err
		}
		pc := tx.Payment.Create().SetWorkspaceID(ws).SetSalesOrderID(order.ID).SetKind(payment.KindRefund).
			SetCurrencyCode(order.CurrencyCode).SetAmountCents(amount)
		if order.ChannelID != nil {
			pc.SetStoreID(*order.ChannelID)
		}
		if err := insert(q.Ctx, pc.Mutation(), pc.Exec, &payID); err != nil {
			return err
		}
		q.made(resource.Payments, payID)
		if err := q.touch(tx, resource.SalesOrders, order.ID, string(order.Status)); err != nil {
			return err
		}
		if err := tx.SalesOrder.UpdateOneID(order.ID).SetPaymentStatus(status).Exec(q.Ctx); err != nil {
			return err
		}
		return tx.ReturnRequest.UpdateOneID(r.ID).SetRefundCents(amount).
			SetRefundOutcome(returnrequest.RefundOutcomeRefunded).SetRefundedAt(time.Now().UTC()).Exec(q.Ctx)
	})
}

// returnWorth is what a return's lines were sold for, incl. VAT, each
// line's share rounded half away from zero.
func returnWorth(ctx context.Context, tx *ent.Tx, r *ent.ReturnRequest) (int64, error) {
	ids := make([]string, len(r.Lines))
	for i, l := range r.Lines {
		ids[i] = l.OrderLineID
	}
	lines, err := tx.OrderLine.Query().Where(orderline.IDIn(ids...), orderline.SalesOrderID(r.SalesOrderID)).All(ctx)
	if err != nil {
		return 0, err
	}
	byID := map[string]*ent.OrderLine{}
	for _, l := range lines {
		byID[l.ID] = l
	}
	var parts []money.Part
	for _, rl := range r.Lines {
		if l := byID[rl.OrderLineID]; l != nil && l.QtyMilli != 0 {
			parts = append(parts, money.Part{Amount: l.AmountInclVatCents, Qty: min(rl.QtyMilli, l.QtyMilli), Of: l.QtyMilli})
		}
	}
	return money.Parts("amount_cents", parts)
}

// rejectReturn rejects a return: its refund outcome is rejected too.
func rejectReturn(q *Request) (Result, error) {
	return q.move(func(tx *ent.Tx, _ string) error {
		return tx.ReturnRequest.UpdateOneID(q.ID).SetRefundOutcome(returnrequest.RefundOutcomeRejected).Exec(q.Ctx)
	})
}
