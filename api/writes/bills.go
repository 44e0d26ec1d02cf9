package writes

import (
	"context"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// billKind is how bills, a vendor's documents, are made and edited
// (documents.go); open makes the total owed, so bill payments apply.
var billKind = &docKind{
	r: resource.Bills, party: "vendor", numbers: numbering.Bills, balance: true,
	create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.BillMutation](tx.Bill.Create())
	},
	update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.BillMutation](tx.Bill.UpdateOneID(id))
	},
}
