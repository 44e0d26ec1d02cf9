package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
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
	registerAction(resource.Invoices, "void", voidUnpaid(resource.InvoicePayments, "; credit it instead"))
}
