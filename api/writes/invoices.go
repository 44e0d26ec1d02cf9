package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/invoicepayment"
)

func init() {
	registerDocument(&docKind{
		r: resource.Invoices, party: "client", numbers: series{"invoices", "INV"}, balance: true,
		create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) (string, error)) {
			c := tx.Invoice.Create()
			return c.Mutation(), func(ctx context.Context) (string, error) {
				row, err := c.Save(ctx)
				if err != nil {
					return "", err
				}
				return row.ID, nil
			}
		},
		update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
			u := tx.Invoice.UpdateOneID(id)
			return u.Mutation(), u.Exec
		},
	})
	registerAction(resource.Invoices, "void", voidInvoice)
}

// voidInvoice refuses once money was received: a completed payment must
// be refunded or credited, not hidden by a void.
func voidInvoice(q *Request) (Result, error) {
	return q.move(func(tx *ent.Tx, _ string) error {
		paid, err := tx.InvoicePayment.Query().
			Where(invoicepayment.InvoiceID(q.ID), invoicepayment.StatusEQ(invoicepayment.StatusCompleted)).Exist(q.Ctx)
		if err != nil {
			return err
		}
		if paid {
			return stateConflict("an invoice with a completed payment cannot be voided; credit it instead")
		}
		// A void invoice is owed nothing.
		return tx.Invoice.Update().Where(invoice.ID(q.ID)).SetRemainingCents(0).Exec(q.Ctx)
	})
}
