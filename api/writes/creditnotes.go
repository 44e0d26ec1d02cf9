package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// creditNoteKind is how credit notes are made and edited (documents.go).
var creditNoteKind = &docKind{
	r: resource.CreditNotes, party: "client", numbers: numbering.CreditNotes,
	create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.CreditNoteMutation](tx.CreditNote.Create())
	},
	update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.CreditNoteMutation](tx.CreditNote.UpdateOneID(id))
	},
	fill:  fillFromInvoice,
	check: checkCreditedInvoice,
}

// creditedInvoice reads the workspace's invoice a body names in
// invoice_id; lock holds its row until the transaction ends.
func (q *Request) creditedInvoice(tx *ent.Tx, id string, lock bool) (*ent.Invoice, error) {
	query := tx.Invoice.Query().Where(invoice.ID(id), invoice.WorkspaceID(q.Workspace().ID))
	if lock {
		query = forUpdate(q, query)
	}
	inv, err := query.Select(invoice.FieldID, invoice.FieldStatus, invoice.FieldCurrencyCode, invoice.FieldClientID,
		invoice.FieldClientName, invoice.FieldRemainingCents, invoice.FieldPaidCents, invoice.FieldCreditedCents).Only(q.Ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.Invalid("invoice_id", "no such invoice in this workspace")
	}
	return inv, err
}

// fillFromInvoice gives a credit note its invoice's client and currency
// where the body sets none (the client's currency may differ from it).
func fillFromInvoice(q *Request, tx *ent.Tx, p *party) error {
	id, ok := q.Body.String("invoice_id")
	if !ok {
		return nil
	}
	inv, err := q.creditedInvoice(tx, id, false)
	if err != nil {
		return err
	}
	if p.id == nil && p.name == "" {
		p.id, p.name = inv.ClientID, inv.ClientName
	}
	if !q.Body.Has("currency_code") {
		p.currency = inv.CurrencyCode
	}
	return nil
}

// notePartyMismatch says what of a credit note's client (by id, else by
// name) and currency does not match its invoice ("" when all does).
func notePartyMismatch(n *ent.CreditNote, inv *ent.Invoice) (field, why string) {
	switch {
	case inv.ClientID != nil && (n.ClientID == nil || *n.ClientID != *inv.ClientID),
		inv.ClientID == nil && (n.ClientID != nil || n.ClientName != inv.ClientName):
		return "client_id", "the invoice is another client's"
	case n.CurrencyCode != inv.CurrencyCode:
		return "currency_code", "the invoice is in " + inv.CurrencyCode + ", the credit note in " + n.CurrencyCode
	}
	return "", ""
}

// mismatchError is a 400 naming the field of the body at fault: invoice_id
// when the body sets it, else the party field it changed.
func (q *Request) mismatchError(field, why string) error {
	param := "invoice_id"
	if !q.Body.Has(param) {
		param = field
		if field == "client_id" && !q.Body.Has("client_id") && q.Body.Has("client_name") {
			param = "client_name"
		}
	}
	return apierr.Invalid(param, "a credit note credits an invoice of its own client and currency: %s", why)
}

func (q *Request) creditNote(tx *ent.Tx, id string) (*ent.CreditNote, error) {
	return tx.CreditNote.Query().Where(creditnote.ID(id)).
		Select(creditnote.FieldID, creditnote.FieldInvoiceID, creditnote.FieldClientID, creditnote.FieldClientName,
			creditnote.FieldCurrencyCode, creditnote.FieldAmountInclVatCents).Only(q.Ctx)
}

// checkCreditedInvoice vets a saved credit note's invoice_id against its
// client and currency, after every create and edit.
func checkCreditedInvoice(q *Request, tx *ent.Tx, id string) error {
	n, err := q.creditNote(tx, id)
	if err != nil {
		return err
	}
	if n.InvoiceID == nil {
		return nil
	}
	inv, err := q.creditedInvoice(tx, *n.InvoiceID, false)
	if err != nil {
		return err
	}
	if field, why := notePartyMismatch(n, inv); field != "" {
		return q.mismatchError(field, why)
	}
	return nil
}

// applyCreditNote applies an issued credit note to an invoice by the
// payments' balance rules (balance.take). Both rows are locked, so
// concurrent applications and payments never take more than is open.
func applyCreditNote(q *Request) (Result, error) {
	// It changes an invoice's balance, as a payment does: the key's role
	// must write invoices too.
	if err := q.Principal.Gate(resource.Invoices, resource.Write); err != nil {
		return Result{}, err
	}
	return q.move(func(tx *ent.Tx, _ string) error {
		n, err := q.creditNote(tx, q.ID)
		if err != nil {
			return err
		}
		id, named := q.Body.String("invoice_id")
		switch {
		case named && n.InvoiceID != nil && id != *n.InvoiceID:
			return apierr.Invalid("invoice_id", "this credit note was made against %s; it applies to that invoice only", *n.InvoiceID)
		case !named && n.InvoiceID == nil:
			return apierr.Invalid("invoice_id", "invoice_id is required: this credit note was not made against an invoice")
		case !named:
			id = *n.InvoiceID
		}
		inv, err := q.creditedInvoice(tx, id, true)
		if err != nil {
			return err
		}
		if field, why := notePartyMismatch(n, inv); field != "" {
			return apierr.Invalid("invoice_id", "a credit note credits an invoice of its own client and currency: %s", why)
		}
		b := balance{what: "invoice", takes: paymentOp(resource.InvoicePayments), status: string(inv.Status), currency: inv.CurrencyCode, remaining: inv.RemainingCents, paid: inv.PaidCents}
		after, err := b.take(n.AmountInclVatCents, "credit note", "invoice_id")
		if err != nil {
			return err
		}
		if after != b {
			if err := q.touch(tx, resource.Invoices, inv.ID, string(inv.Status)); err != nil {
				return err
			}
			if err := tx.Invoice.Update().Where(invoice.ID(inv.ID)).SetRemainingCents(after.remaining).
				SetCreditedCents(inv.CreditedCents + n.AmountInclVatCents).SetStatus(invoice.Status(after.status)).Exec(q.Ctx); err != nil {
				return err
			}
		}
		return tx.CreditNote.Update().Where(creditnote.ID(q.ID)).SetInvoiceID(inv.ID).Exec(q.Ctx)
	})
}
