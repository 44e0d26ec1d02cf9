package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/quote"
)

// invoiceKind is how invoices are made and edited (documents.go).
var invoiceKind = &docKind{
	r: resource.Invoices, party: "client", numbers: numbering.Invoices, balance: true,
	create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.InvoiceMutation](tx.Invoice.Create())
	},
	update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.InvoiceMutation](tx.Invoice.UpdateOneID(id))
	},
}

// deleteInvoice deletes a draft and unlinks what pointed at it: its quote
// is accepted again, its order not invoiced, its credit notes (none
// applied) against no invoice.
func deleteInvoice(q *Request) (Result, error) {
	return q.removing(func(tx *ent.Tx) error {
		ws := q.Workspace().ID
		if err := tx.Quote.Update().Where(quote.WorkspaceID(ws), quote.InvoiceID(q.ID)).
			SetStatus(quote.StatusAccepted).ClearInvoiceID().Exec(q.Ctx); err != nil {
			return err
		}
		if err := unlinkOrder(q, tx); err != nil {
			return err
		}
		return tx.CreditNote.Update().Where(creditnote.WorkspaceID(ws), creditnote.InvoiceID(q.ID)).ClearInvoiceID().Exec(q.Ctx)
	})
}

// uncredited is the rule of an invoice's void: refused when a credit note
// was applied to it (the note would credit nothing); else the order it
// was made of is no longer invoiced (unlinkOrder).
func uncredited(q *Request, tx *ent.Tx) error {
	credited, err := tx.Invoice.Query().Where(invoice.ID(q.ID), invoice.CreditedCentsGT(0)).Exist(q.Ctx)
	if err != nil {
		return err
	}
	if credited {
		return stateConflict("an invoice with an applied credit note cannot be voided")
	}
	return unlinkOrder(q, tx)
}
