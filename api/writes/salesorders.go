package writes

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/orderline"
	"github.com/ledgerbase/ledgerbase/ent/payment"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/ent/store"
	"github.com/ledgerbase/ledgerbase/ent/variant"
)

// Sales orders are documents whose lines are rows of their own (order
// lines, with what has shipped), and an online order carries its store's
// payment transactions.

var (
	// orderParty is what setParty needs of a sales order.
	orderParty = &docKind{r: resource.SalesOrders, party: "client"}
	// orderOwnFields are set by the operations; the rest are columns.
	orderOwnFields = append([]string{"store_id", "status", "payments"}, docOwnFields...)
)

// orderLine is a line as sent, priced; variantID and the DocLine's ItemID
// are what it sells.
type orderLine struct {
	shape.DocLine
	variantID *string
	sku       string
}

// orderLines reads and prices a body's lines; an order has at least one.
func orderLines(v Values) ([]orderLine, money.Totals, error) {
	raw, _ := v.Objects("lines")
	if len(raw) == 0 {
		return nil, money.Totals{}, apierr.Invalid("lines", "a sales order needs at least one line")
	}
	priced, t, err := money.Lines(v) // an order's lines have no discount
	lines := make([]orderLine, len(raw))
	for i, l := range raw {
		lines[i].DocLine = priced[i]
		if id, ok := l.String("variant_id"); ok {
			lines[i].variantID = &id
		}
		lines[i].sku, _ = l.String("sku")
	}
	return lines, t, err
}

// resolveLines checks that every item and variant named is the
// workspace's, takes a variant's item as the line's, and fills sku and
// description from them where the line has none.
func (q *Request) resolveLines(tx *ent.Tx, lines []orderLine) error {
	ws := q.Workspace().ID
	var varIDs []string
	for _, l := range lines {
		if l.variantID != nil {
			varIDs = append(varIDs, *l.variantID)
		}
	}
	variants := map[string]*ent.Variant{}
	if len(varIDs) > 0 {
		vs, err := tx.Variant.Query().Where(variant.IDIn(varIDs...), variant.WorkspaceID(ws)).All(q.Ctx)
		if err != nil {
			return err
		}
		for _, v := range vs {
			variants[v.ID] = v
		}
	}
	var itemIDs []string
	for i, l := range lines {
		p := fmt.Sprintf("lines[%d]", i)
		if l.variantID != nil {
			v := variants[*l.variantID]
			if v == nil {
				return apierr.Invalid(p+".variant_id", "no such variant in this workspace")
			}
			if l.ItemID != nil && *l.ItemID != v.ItemID {
				return apierr.Invalid(p+".variant_id", "variant %s is a variant of item %s, not of %s", v.ID, v.ItemID, *l.ItemID)
			}
			lines[i].ItemID = &v.ItemID
		}
		if lines[i].ItemID != nil {
			itemIDs = append(itemIDs, *lines[i].ItemID)
		} else if strings.TrimSpace(l.Description) == "" {
			return apierr.Invalid(p+".description", "a line with neither item_id nor variant_id needs a description")
		}
	}
	items := map[string]*ent.Item{}
	if len(itemIDs) > 0 {
		is, err := tx.Item.Query().Where(item.IDIn(itemIDs...), item.WorkspaceID(ws)).
			Select(item.FieldID, item.FieldName, item.FieldNumber).All(q.Ctx)
		if err != nil {
			return err
		}
		for _, it := range is {
			items[it.ID] = it
		}
	}
	for i, l := range lines {
		if l.ItemID == nil {
			continue
		}
		it := items[*l.ItemID]
		if it == nil {
			return apierr.Invalid(fmt.Sprintf("lines[%d].item_id", i), "no such item in this workspace")
		}
		sku, desc := it.Number, it.Name
		if l.variantID != nil {
			v := variants[*l.variantID]
			sku = v.Sku
			// Options in axis-name order: a map has none of its own.
			var vals []string
			for _, k := range slices.Sorted(maps.Keys(v.Options)) {
				vals = append(vals, v.Options[k])
			}
			if len(vals) > 0 {
				desc += " – " + strings.Join(vals, " / ")
			}
		}
		if l.sku == "" {
			lines[i].sku = sku
		}
		if l.Description == "" {
			lines[i].Description = desc
		}
	}
	return nil
}

// saveLines writes the order's lines, numbered from 1 as the demo's are.
func (q *Request) saveLines(tx *ent.Tx, orderID string, lines []orderLine) error {
	creates := make([]*ent.OrderLineCreate, len(lines))
	for i, l := range lines {
		creates[i] = tx.OrderLine.Create().SetWorkspaceID(q.Workspace().ID).SetSalesOrderID(orderID).SetPosition(i + 1).
			SetNillableItemID(l.ItemID).SetNillableVariantID(l.variantID).SetSku(l.sku).SetDescription(l.Description).
			SetQtyMilli(l.QtyMilli).SetUnitPriceCents(l.UnitPriceCents).SetVatRateBp(l.VATRateBasisPoints).
			SetAmountExclVatCents(l.AmountExclVATCents).SetVatAmountCents(l.VATAmountCents).SetAmountInclVatCents(l.AmountInclVATCents)
	}
	return tx.OrderLine.CreateBulk(creates...).Exec(q.Ctx)
}

// storePayment is one transaction of an online order at its store.
type storePayment struct {
	kind        payment.Kind
	amount, fee int64
	ref         string
}

// paymentState is the payment_status an online order's transactions, in
// order, give it against its total (in currency). Captures beyond the
// total or refunds beyond the captured are refused, naming param (or each
// transaction).
func paymentState(total int64, currency string, pays []storePayment, param string) (salesorder.PaymentStatus, error) {
	var captured, refunded int64
	authorized := false
	for i, p := range pays {
		at := param
		if at == "" {
			at = fmt.Sprintf("payments[%d].amount_cents", i)
		}
		switch p.kind {
		case payment.KindAuthorize:
			authorized = true
		case payment.KindVoid:
			authorized = false
		// Compared before adding, so no sum can pass int64.
		case payment.KindCapture:
			if p.amount > total-captured {
				return "", apierr.Invalid(at, "a capture of %s after %s captured exceeds the order's total of %s",
					amountText(p.amount, currency), amountText(captured, currency), amountText(total, currency))
			}
			captured += p.amount
		case payment.KindRefund:
			if p.amount > captured-refunded {
				return "", apierr.Invalid(at, "a refund of %s after %s refunded exceeds the %s captured before it",
					amountText(p.amount, currency), amountText(refunded, currency), amountText(captured, currency))
			}
			refunded += p.amount
		}
	}
	switch {
	case refunded > 0 && refunded == captured:
		return salesorder.PaymentStatusRefunded, nil
	case refunded > 0:
		return salesorder.PaymentStatusPartiallyRefunded, nil
	case captured > 0 && captured == total:
		return salesorder.PaymentStatusPaid, nil
	case captured > 0 || authorized:
		return salesorder.PaymentStatusAuthorized, nil
	}
	return salesorder.PaymentStatusUnpaid, nil
}

// storePayments reads the body's payments.
func storePayments(v Values) []storePayment {
	raw, _ := v.Objects("payments")
	out := make([]storePayment, len(raw))
	for i, p := range raw {
		k, _ := p.String("kind")
		out[i].kind = payment.Kind(k)
		out[i].amount, _ = p.Int("amount_cents")
		out[i].fee, _ = p.Int("fee_cents")
		out[i].ref, _ = p.String("external_id")
	}
	return out
}

// createSalesOrder makes an order; with store_id an online order of that
// store, whose payments become its online payments. Online orders start
// confirmed (a shop pushes orders already placed), others draft.
func createSalesOrder(q *Request) (Result, error) {
	lines, tot, err := orderLines(q.Body)
	if err != nil {
		return Result{}, err
	}
	storeID, online := q.Body.String("store_id")
	pays := storePayments(q.Body)
	if len(pays) > 0 && !online {
		return Result{}, apierr.Invalid("payments", "payments are an online order's store transactions: send store_id with them")
	}
	status := salesorder.StatusDraft
	if online {
		status = salesorder.StatusConfirmed
	}
	if s, ok := q.Body.String("status"); ok {
		status = salesorder.Status(s)
	}
	ws := q.Workspace().ID
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		p, err := q.partyOf(tx, "client")
		if err != nil {
			return err
		}
		if p.id == nil && p.name == "" {
			return apierr.Invalid("client_id", "a sales order needs a client: client_id, or client_name alone")
		}
		c := tx.SalesOrder.Create().SetWorkspaceID(ws).SetStatus(status)
		if online {
			st, err := tx.Store.Query().Where(store.ID(storeID), store.WorkspaceID(ws)).Select(store.FieldCurrencyCode).Only(q.Ctx)
			if ent.IsNotFound(err) {
				return apierr.Invalid("store_id", "no such store in this workspace")
			} else if err != nil {
				return err
			}
			if _, sent := q.Body.String("currency_code"); !sent {
				p.currency = st.CurrencyCode // the shop sells in its currency
			}
		}
		if p.currency == "" {
			p.currency = "EUR"
		}
		if online {
			payStatus, err := paymentState(tot.InclVATCents, p.currency, pays, "")
			if err != nil {
				return err
			}
			c.SetOnline(true).SetChannelID(storeID).SetPaymentStatus(payStatus).SetShippingStatus(salesorder.ShippingStatusNotShipped)
		}
		if err := q.resolveLines(tx, lines); err != nil {
			return err
		}
		num, _ := q.Body.String("number")
		number, err := q.docNumber(tx, q.Resource, numbering.SalesOrders, num)
		if err != nil {
			return err
		}
		date, ok := q.Body.String("date")
		if !ok {
			date = today()
		}
		c.SetNumber(number).SetDate(date).SetAmountExclVatCents(tot.ExclVATCents).SetVatAmountCents(tot.VATCents).SetAmountInclVatCents(tot.InclVATCents)
		if err := setParty(c.Mutation(), orderParty, p, false); err != nil {
			return err
		}
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, nil, orderOwnFields...); err != nil {
			return err
		}
		if err := insert(q.Ctx, c.Mutation(), c.Exec, &id); err != nil {
			return err
		}
		if err := q.saveLines(tx, id, lines); err != nil {
			return err
		}
		if len(pays) == 0 {
			return nil
		}
		// A microsecond apart, so the transactions read back in the order
		// sent: the payment status is decided in that order.
		at := time.Now().UTC().Truncate(time.Microsecond)
		creates := make([]*ent.PaymentCreate, len(pays))
		for i, pay := range pays {
			t := at.Add(time.Duration(i) * time.Microsecond)
			creates[i] = tx.Payment.Create().SetWorkspaceID(ws).SetSalesOrderID(id).SetStoreID(storeID).SetKind(pay.kind).
				SetCurrencyCode(p.currency).SetAmountCents(pay.amount).SetFeeCents(pay.fee).SetProviderRef(pay.ref).
				SetCreatedAt(t).SetUpdatedAt(t)
		}
		return tx.Payment.CreateBulk(creates...).Exec(q.Ctx)
	}, func() Answer { return record(http.StatusCreated, q.Resource, id, "") })
}

// updateSalesOrder edits an order: anything while it is a draft (lines are
// replaced whole), only notes and shipping_address afterwards, nothing once
// cancelled. An online draft's payment status follows its new total.
func updateSalesOrder(q *Request) (Result, error) {
	var lines []orderLine
	var tot money.Totals
	if q.Body.Has("lines") {
		var err error
		if lines, tot, err = orderLines(q.Body); err != nil {
			return Result{}, err
		}
	}
	return q.inTx(func(tx *ent.Tx) error {
		st, err := q.state(tx)
		if err != nil {
			return err
		}
		if st != string(salesorder.StatusDraft) {
			if err := q.checkEdit(st); err != nil { // the declared edit's states: not cancelled
				return err
			}
			if err := q.lateOnly(st); err != nil {
				return err
			}
		}
		o, err := tx.SalesOrder.Query().Where(salesorder.ID(q.ID)).Select(salesorder.FieldOnline, salesorder.FieldCurrencyCode).Only(q.Ctx)
		if err != nil {
			return err
		}
		u := tx.SalesOrder.Update().Where(salesorder.ID(q.ID))
		m := u.Mutation()
		if q.Body.Has("client_id") || q.Body.Has("client_name") || q.Body.Has("currency_code") {
			p, err := q.partyOf(tx, "client")
			if err != nil {
				return err
			}
			if _, sent := q.Body.String("currency_code"); o.Online && !sent {
				p.currency = "" // an online order stays in its store's currency
			}
			if err := setParty(m, orderParty, p, q.Body.IsNull("client_id")); err != nil {
				return err
			}
		}
		if q.Body.Has("lines") {
			if err := q.resolveLines(tx, lines); err != nil {
				return err
			}
			cur := o.CurrencyCode
			if c, sent := q.Body.String("currency_code"); sent {
				cur = c
			}
			if err := q.replaceLines(tx, u, o.Online, cur, lines, tot); err != nil {
				return err
			}
		}
		if num, ok := q.Body.String("number"); ok {
			if err := q.numberFree(tx, q.Resource, num, q.ID); err != nil {
				return err
			}
			u.SetNumber(num)
		}
		if date, ok := q.Body.String("date"); ok {
			u.SetDate(date)
		}
		if err := applyBody(m, q.Op.Body, q.Body, nil, orderOwnFields...); err != nil {
			return err
		}
		return u.Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, q.Resource, q.ID, "") })
}

// replaceLines swaps a draft's lines for new ones (a draft has shipped
// nothing) and sets the totals and, online, the payment status they give
// (in currency, the order's after the edit).
func (q *Request) replaceLines(tx *ent.Tx, u *ent.SalesOrderUpdate, online bool, currency string, lines []orderLine, tot money.Totals) error {
	if _, err := tx.OrderLine.Delete().Where(orderline.SalesOrderID(q.ID)).Exec(q.Ctx); err != nil {
		return err
	}
	if err := q.saveLines(tx, q.ID, lines); err != nil {
		return err
	}
	u.SetAmountExclVatCents(tot.ExclVATCents).SetVatAmountCents(tot.VATCents).SetAmountInclVatCents(tot.InclVATCents)
	if !online {
		return nil
	}
	rows, err := tx.Payment.Query().Where(payment.SalesOrderID(q.ID)).
		Order(ent.Asc(payment.FieldCreatedAt), ent.Asc(payment.FieldID)).All(q.Ctx)
	if err != nil {
		return err
	}
	pays := make([]storePayment, len(rows))
	for i, r := range rows {
		pays[i] = storePayment{kind: r.Kind, amount: r.AmountCents}
	}
	ps, err := paymentState(tot.InclVATCents, currency, pays, "lines")
	if err != nil {
		return err
	}
	u.SetPaymentStatus(ps)
	return nil
}

// cancelSalesOrder refuses once anything has shipped (a return undoes it),
// even on a confirmed order whose lines record shipped quantities.
func cancelSalesOrder(q *Request) (Result, error) {
	return q.move(func(tx *ent.Tx, _ string) error {
		shipped, err := tx.OrderLine.Query().Where(orderline.SalesOrderID(q.ID), orderline.ShippedQtyMilliGT(0)).Exist(q.Ctx)
		if err != nil {
			return err
		}
		if shipped {
			return stateConflict("a sales order with shipped goods cannot be cancelled")
		}
		return nil
	})
}

// invoiceSalesOrder makes a draft invoice of an order's client, currency,
// lines and notes and links both ways. The order's status stays (it follows
// shipping); the link is what makes a second call a conflict, and the
// order's row, locked by the state check, makes two racing calls one
// invoice. An order whose invoice was voided (the void unlinks it) may be
// invoiced again.
func invoiceSalesOrder(q *Request) (Result, error) {
	// It writes an invoice: the key's role must write invoices too.
	if err := q.Principal.Gate(resource.Invoices, resource.Write); err != nil {
		return Result{}, err
	}
	return q.inTx(func(tx *ent.Tx) error {
		if _, err := q.allowed(tx); err != nil {
			return err
		}
		o, err := tx.SalesOrder.Query().Where(salesorder.ID(q.ID)).Select(salesorder.FieldNumber, salesorder.FieldClientID,
			salesorder.FieldClientName, salesorder.FieldCurrencyCode, salesorder.FieldNotes, salesorder.FieldInvoiceID).Only(q.Ctx)
		if err != nil {
			return err
		}
		if o.InvoiceID != nil {
			inv, err := tx.Invoice.Query().Where(invoice.ID(*o.InvoiceID)).Select(invoice.FieldNumber).Only(q.Ctx)
			switch {
			case err == nil:
				return apierr.Conflict("already_invoiced", "sales order %s is already invoiced: invoice %s (%s); void that invoice to invoice the order again",
					o.Number, inv.Number, inv.ID)
			case !ent.IsNotFound(err):
				return err
			}
		}
		rows, err := tx.OrderLine.Query().Where(orderline.SalesOrderID(q.ID)).
			Order(ent.Asc(orderline.FieldPosition), ent.Asc(orderline.FieldID)).All(q.Ctx)
		if err != nil {
			return err
		}
		lines := make([]shape.DocLine, len(rows))
		for i, l := range rows {
			// A variant's line names its item, and its description the options.
			lines[i] = shape.DocLine{ItemID: l.ItemID, Description: l.Description, QtyMilli: l.QtyMilli,
				UnitPriceCents: l.UnitPriceCents, VATRateBasisPoints: lineRate(l)}
		}
		invID, err := q.makeInvoice(tx, party{id: o.ClientID, name: o.ClientName, currency: o.CurrencyCode}, lines, o.Notes, "sales_order_id")
		if err != nil {
			return err
		}
		return tx.SalesOrder.Update().Where(salesorder.ID(q.ID)).SetInvoiceID(invID).Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, q.Resource, q.ID, "") })
}

// lineRate is the VAT rate an order line was priced at; a line written
// before the rate was kept has it back from its amounts.
func lineRate(l *ent.OrderLine) int64 {
	switch {
	case l.VatRateBp != nil:
		return *l.VatRateBp
	case l.AmountExclVatCents == 0:
		return 0
	}
	return (l.VatAmountCents*10000 + l.AmountExclVatCents/2) / l.AmountExclVatCents
}

// unlinkOrder unlinks the invoice q names (voided or deleted) from the
// order it was made of, which may then be invoiced again; the order tells
// of it as sales_order.updated.
func unlinkOrder(q *Request, tx *ent.Tx) error {
	inv, err := tx.Invoice.Query().Where(invoice.ID(q.ID)).Select(invoice.FieldSalesOrderID).Only(q.Ctx)
	if err != nil || inv.SalesOrderID == nil {
		return err
	}
	o, err := tx.SalesOrder.Query().Where(salesorder.ID(*inv.SalesOrderID), salesorder.InvoiceID(q.ID)).
		Select(salesorder.FieldID, salesorder.FieldStatus).Only(q.Ctx)
	switch {
	case ent.IsNotFound(err): // the order no longer links it
		return nil
	case err != nil:
		return err
	}
	if err := q.touch(tx, resource.SalesOrders, o.ID, string(o.Status)); err != nil {
		return err
	}
	return tx.SalesOrder.Update().Where(salesorder.ID(o.ID)).ClearInvoiceID().Exec(q.Ctx)
}
