package writes

import (
	entgo "entgo.io/ent"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/address"
	"github.com/ledgerbase/ledgerbase/ent/predicate"
)

func addressEnum(column, value string) entgo.Value {
	switch column {
	case address.FieldKind:
		return address.Kind(value)
	case address.FieldPreferredLanguage:
		return address.PreferredLanguage(value)
	}
	return value
}

// defaultFlags are the two "default of a kind" columns and their kinds.
var defaultFlags = []struct {
	column string
	kind   address.Kind
}{{address.FieldDefaultBilling, address.KindBilling}, {address.FieldDefaultShipping, address.KindShipping}}

// lockClient checks the client exists in the caller's workspace and locks
// its row (PostgreSQL), so two "make default" calls cannot both win.
func (q *Request) lockClient(tx *ent.Tx) error {
	found, err := q.row(tx, resource.Clients, q.ID, "", q.locks())
	if err != nil {
		return err
	}
	if !found {
		return apierr.NotFound("client")
	}
	return nil
}

// createAddress adds an address. Making it a default clears the previous
// one; the first of a kind becomes its default unless the body says otherwise.
func createAddress(q *Request) (Result, error) {
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		if err := q.lockClient(tx); err != nil {
			return err
		}
		c := tx.Address.Create().SetWorkspaceID(q.Workspace().ID).SetClientID(q.ID)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, addressEnum); err != nil {
			return err
		}
		kind := address.KindBilling
		if k, ok := q.Body.String(address.FieldKind); ok {
			kind = address.Kind(k)
		}
		for _, d := range defaultFlags {
			if q.Body.Has(d.column) || d.kind != kind {
				continue
			}
			has, err := tx.Address.Query().Where(address.ClientID(q.ID), defaultIs(d.column)).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if !has {
				if err := c.Mutation().SetField(d.column, true); err != nil {
					return err
				}
			}
		}
		row, err := c.Save(q.Ctx)
		if err != nil {
			return err
		}
		id = row.ID
		return q.clearOtherDefaults(tx, row)
	}, func() Answer { return record(created(true), resource.Addresses, id, q.ID) })
}

// updateAddress updates an address of the client; default_billing or
// default_shipping true makes it that kind's default and clears the previous.
func updateAddress(q *Request) (Result, error) {
	return q.inTx(func(tx *ent.Tx) error {
		if err := q.lockClient(tx); err != nil {
			return err
		}
		u := tx.Address.Update().Where(address.ID(q.ChildID), address.ClientID(q.ID), address.WorkspaceID(q.Workspace().ID))
		if err := applyBody(u.Mutation(), q.Op.Body, q.Body, addressEnum); err != nil {
			return err
		}
		if err := updated(q.Ctx, u.Save, "address"); err != nil {
			return err
		}
		row, err := tx.Address.Get(q.Ctx, q.ChildID)
		if err != nil {
			return err
		}
		return q.clearOtherDefaults(tx, row)
	}, func() Answer { return record(created(false), resource.Addresses, q.ChildID, q.ID) })
}

func defaultIs(column string) predicate.Address {
	return predicate.Address(entsql.FieldEQ(column, true))
}

// clearOtherDefaults takes each default the address holds away from the
// client's other addresses, in the same transaction.
func (q *Request) clearOtherDefaults(tx *ent.Tx, a *ent.Address) error {
	others := tx.Address.Update().Where(address.ClientID(q.ID), address.IDNEQ(a.ID))
	switch {
	case a.DefaultBilling && a.DefaultShipping:
		others = others.Where(address.Or(address.DefaultBilling(true), address.DefaultShipping(true))).
			SetDefaultBilling(false).SetDefaultShipping(false)
	case a.DefaultBilling:
		others = others.Where(address.DefaultBilling(true)).SetDefaultBilling(false)
	case a.DefaultShipping:
		others = others.Where(address.DefaultShipping(true)).SetDefaultShipping(false)
	default:
		return nil
	}
	return others.Exec(q.Ctx)
}
