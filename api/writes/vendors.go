package writes

import (
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/vendor"
)

var vendorEnum = enumColumn[vendor.PreferredLanguage](vendor.FieldPreferredLanguage)

func createVendor(q *Request) (Result, error) {
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		c := tx.Vendor.Create().SetWorkspaceID(q.Workspace().ID)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, vendorEnum); err != nil {
			return err
		}
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(created(true), resource.Vendors, id, "") })
}

func updateVendor(q *Request) (Result, error) {
	return q.inTx(func(tx *ent.Tx) error {
		u := tx.Vendor.Update().Where(vendor.ID(q.ID), vendor.WorkspaceID(q.Workspace().ID))
		if err := applyBody(u.Mutation(), q.Op.Body, q.Body, vendorEnum); err != nil {
			return err
		}
		return updated(q.Ctx, u.Save, "vendor")
	}, func() Answer { return record(created(false), resource.Vendors, q.ID, "") })
}
