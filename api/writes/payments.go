package writes

import (
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/billpayment"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/invoicepayment"
)

// balance is what applying a payment needs of an invoice or a bill.
type balance struct {
	what string // "invoice" or "bill"
	// takes is the document's payment create: its declared From are the
	// states that take money (payments and applied credit notes alike).
	takes           *resource.Op
	status          string
	currency        string
	remaining, paid int64
}

// apply checks a payment against the document and returns its balance
// after it; only a completed payment moves money.
func (b balance) apply(v Values, completed bool) (after balance, err error) {
	if err := b.open("payment"); err != nil {
		return b, err
	}
	if c, ok := v.String("currency_code"); ok && c != b.currency {
		return b, apierr.Invalid("currency_code", "the %s is in %s; a payment in %s cannot be applied to it", b.what, b.currency, c)
	}
	amount, _ := v.Int("amount_incl_vat_cents")
	if !completed || amount == 0 {
		return b, nil
	}
	if after, err = b.take(amount, "payment", "amount_incl_vat_cents"); err != nil {
		return b, err
	}
	after.paid += amount
	return after, nil
}

// paymentOp is the declared payment create of r.
func paymentOp(r *resource.Resource) *resource.Op {
	for i := range r.Ops {
		if r.Ops[i].Kind == resource.Create {
			return &r.Ops[i]
		}
	}
	panic("writes: " + r.Name + " declares no create")
}

// open refuses money (by a payment, a credit note) on a document that is
// not open for it.
func (b balance) open(by string) error {
	if !b.takes.Allowed(b.status) {
		return apierr.Conflict("invalid_state_transition", "%s %s cannot take %ss", article(humanState(b.status)), b.what, by)
	}
	return nil
}

// take lowers the open balance by amount that by (a payment, a credit
// note) brings, and moves the status; the caller counts it as paid or
// credited. param is the body field a refusal concerns.
func (b balance) take(amount int64, by, param string) (after balance, err error) {
	if err := b.open(by); err != nil {
		return b, err
	}
	if amount > b.remaining {
		e := apierr.Conflict("amount_exceeds_balance", "the %s of %s exceeds the %s's open balance of %s", by,
			amountText(amount, b.currency), b.what, amountText(b.remaining, b.currency))
		e.Param = param
		return b, e
	}
	if amount == 0 {
		return b, nil
	}
	after = b
	after.remaining -= amount
	switch {
	case after.remaining == 0:
		after.status = "paid"
	case b.status != "overdue": // still past due with money open
		after.status = "partially_paid"
	}
	return after, nil
}

// alreadyRecorded answers a payment id the workspace has seen: the existing
// payment (200) when it is on this document, else a 409.
func alreadyRecorded(what, docID, existingDocID string) error {
	if docID != existingDocID {
		return apierr.Conflict("duplicate", "payment id already recorded on another %s", what)
	}
	return nil
}

func today() string { return time.Now().UTC().Format("2006-01-02") }

var invoicePaymentEnum = enumColumn[invoicepayment.Status](invoicepayment.FieldStatus)

// recordInvoicePayment records a payment on an invoice; the body's id is the
// caller's, so the same id is recorded once.
func recordInvoicePayment(q *Request) (Result, error) {
	ws := q.Workspace().ID
	extID, _ := q.Body.String("id")
	var payID string
	isNew := true
	return q.inTx(func(tx *ent.Tx) error {
		isNew = true
		// Only the columns the rules need: the lines are JSON to decode.
		inv, err := forUpdate(q, tx.Invoice.Query().Where(invoice.ID(q.ID), invoice.WorkspaceID(ws))).
			Select(invoice.FieldID, invoice.FieldStatus, invoice.FieldCurrencyCode, invoice.FieldRemainingCents,
				invoice.FieldPaidCents, invoice.FieldClientID, invoice.FieldClientName).Only(q.Ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("invoice")
		} else if err != nil {
			return err
		}
		prev, err := tx.InvoicePayment.Query().Where(invoicepayment.WorkspaceID(ws), invoicepayment.ExternalID(extID)).
			Select(invoicepayment.FieldID, invoicepayment.FieldInvoiceID).Only(q.Ctx)
		if err == nil {
			payID, isNew = prev.ID, false
			return alreadyRecorded("invoice", inv.ID, prev.InvoiceID)
		} else if !ent.IsNotFound(err) {
			return err
		}
		status, _ := q.Body.String("status")
		b := balance{what: "invoice", takes: paymentOp(resource.InvoicePayments), status: string(inv.Status), currency: inv.CurrencyCode, remaining: inv.RemainingCents, paid: inv.PaidCents}
		after, err := b.apply(q.Body, status == "completed")
		if err != nil {
			return err
		}
		if _, err := q.partyOf(tx, "client"); err != nil { // a client_id of the workspace
			return err
		}
		c := tx.InvoicePayment.Create().SetWorkspaceID(ws).SetInvoiceID(inv.ID).SetExternalID(extID).
			SetCurrencyCode(inv.CurrencyCode).SetClientName(inv.ClientName).SetNillableClientID(inv.ClientID)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, invoicePaymentEnum, "id", "remaining_cents"); err != nil {
			return err
		}
		// The stored open balance is the invoice's after this payment, not the
		// caller's informational guess.
		if err := insert(q.Ctx, c.Mutation(), c.SetRemainingCents(after.remaining).Exec, &payID); err != nil {
			return err
		}
		if after == b {
			return nil
		}
		// Update, not UpdateOne: UpdateOne reads the whole row back.
		return tx.Invoice.Update().Where(invoice.ID(inv.ID)).SetRemainingCents(after.remaining).SetPaidCents(after.paid).
			SetStatus(invoice.Status(after.status)).Exec(q.Ctx)
	}, func() Answer { return repeated(record(created(isNew), resource.InvoicePayments, payID, q.ID), !isNew) })
}

var billPaymentEnum = enumColumn[billpayment.Status](billpayment.FieldStatus)

// recordBillPayment records a payment on a bill, by the same rules.
func recordBillPayment(q *Request) (Result, error) {
	ws := q.Workspace().ID
	extID, _ := q.Body.String("id")
	var payID string
	isNew := true
	return q.inTx(func(tx *ent.Tx) error {
		isNew = true
		bl, err := forUpdate(q, tx.Bill.Query().Where(bill.ID(q.ID), bill.WorkspaceID(ws))).
			Select(bill.FieldID, bill.FieldStatus, bill.FieldCurrencyCode, bill.FieldRemainingCents,
				bill.FieldPaidCents, bill.FieldVendorID, bill.FieldVendorName).Only(q.Ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("bill")
		} else if err != nil {
			return err
		}
		prev, err := tx.BillPayment.Query().Where(billpayment.WorkspaceID(ws), billpayment.ExternalID(extID)).
			Select(billpayment.FieldID, billpayment.FieldBillID).Only(q.Ctx)
		if err == nil {
			payID, isNew = prev.ID, false
			return alreadyRecorded("bill", bl.ID, prev.BillID)
		} else if !ent.IsNotFound(err) {
			return err
		}
		status := "completed"
		if s, ok := q.Body.String("status"); ok {
			status = s
		}
		b := balance{what: "bill", takes: paymentOp(resource.BillPayments), status: string(bl.Status), currency: bl.CurrencyCode, remaining: bl.RemainingCents, paid: bl.PaidCents}
		after, err := b.apply(q.Body, status == "completed")
		if err != nil {
			return err
		}
		if _, err := q.partyOf(tx, "vendor"); err != nil { // a vendor_id of the workspace
			return err
		}
		c := tx.BillPayment.Create().SetWorkspaceID(ws).SetBillID(bl.ID).SetExternalID(extID).SetDate(today()).
			SetCurrencyCode(bl.CurrencyCode).SetVendorName(bl.VendorName).SetNillableVendorID(bl.VendorID)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, billPaymentEnum, "id", "remaining_cents"); err != nil {
			return err
		}
		if err := insert(q.Ctx, c.Mutation(), c.SetRemainingCents(after.remaining).Exec, &payID); err != nil {
			return err
		}
		if after == b {
			return nil
		}
		return tx.Bill.Update().Where(bill.ID(bl.ID)).SetRemainingCents(after.remaining).SetPaidCents(after.paid).
			SetStatus(bill.Status(after.status)).Exec(q.Ctx)
	}, func() Answer { return repeated(record(created(isNew), resource.BillPayments, payID, q.ID), !isNew) })
}
