package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// Bills are documents with lines from a vendor: made and edited like
// invoices (documents.go); open makes the total owed, so bill payments
// (payments.go) apply; void follows the invoices' rule.
func init() {
	registerDocument(&docKind{
		r: resource.Bills, party: "vendor", numbers: series{"bills", "BILL"}, balance: true,
		create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) (string, error)) {
			c := tx.Bill.Create()
			return c.Mutation(), func(ctx context.Context) (string, error) {
				row, err := c.Save(ctx)
				if err != nil {
					return "", err
				}
				return row.ID, nil
			}
		},
		update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
			u := tx.Bill.UpdateOneID(id)
			return u.Mutation(), u.Exec
		},
	})
	registerAction(resource.Bills, "void", voidUnpaid(resource.BillPayments, "", nil))
}
