package writes

import (
	"strings"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/customer"
)

// extRef is a parsed external_ref; an empty connection is null.
type extRef struct{ system, connection, id string }

// key is the unique ext_key column: the three parts joined by a separator
// no part may contain, so a null connection still makes one unique key.
func (r extRef) key() string { return r.system + "\x1f" + r.connection + "\x1f" + r.id }

// parseRef reads external_ref in its string form "system:connection:id"
// (the id may itself contain colons; "system::id" has no connection) or
// its object form {system, connection_id, external_id}.
func parseRef(v Values) (*extRef, error) {
	const p = "external_ref"
	if !v.Has(p) {
		return nil, nil
	}
	var r extRef
	switch x := v.Raw(p).(type) {
	case string:
		parts := strings.SplitN(x, ":", 3)
		if len(parts) != 3 {
			return nil, apierr.Invalid(p, `external_ref must look like "system:connection:id" ("system::id" without a connection)`)
		}
		r = extRef{parts[0], parts[1], parts[2]}
	case Values:
		r.system, _ = x.String("system")
		r.connection, _ = x.String("connection_id")
		r.id, _ = x.String("external_id")
	}
	r.system, r.connection, r.id = strings.TrimSpace(r.system), strings.TrimSpace(r.connection), strings.TrimSpace(r.id)
	switch {
	case r.system == "":
		return nil, apierr.Invalid(p+".system", "external_ref needs a system")
	case r.id == "":
		return nil, apierr.Invalid(p+".external_id", "external_ref needs an external id")
	case strings.ContainsRune(r.system+r.connection+r.id, '\x1f'):
		return nil, apierr.Invalid(p, "external_ref contains a control character")
	}
	return &r, nil
}

// setRefFields stores the normalized ref and its unique key on any mutation
// of a record that keeps one (clients, invoices).
func setRefFields(m entgo.Mutation, r *extRef) error {
	set := map[string]any{"ext_system": r.system, "ext_external_id": r.id, "ext_key": r.key()}
	if r.connection == "" {
		if err := m.ClearField("ext_connection_id"); err != nil {
			return internalf("clear ext_connection_id: %w", err)
		}
	} else {
		set["ext_connection_id"] = r.connection
	}
	return setFields(m, set)
}

var clientEnum = enumColumn[customer.PreferredLanguage](customer.FieldPreferredLanguage)

// createClient creates a client, or — when external_ref matches a client of
// the workspace — updates that one and answers 200 (DESIGN.md).
func createClient(q *Request) (Result, error) {
	ref, err := parseRef(q.Body)
	if err != nil {
		return Result{}, err
	}
	ws := q.Workspace().ID
	var id string
	isNew := true
	return q.inTx(func(tx *ent.Tx) error {
		isNew = true
		if ref != nil {
			found, err := tx.Customer.Query().Where(customer.WorkspaceID(ws), customer.ExtKey(ref.key())).Only(q.Ctx)
			switch {
			case err == nil:
				id, isNew = found.ID, false
				u := tx.Customer.UpdateOneID(id)
				if err := applyBody(u.Mutation(), q.Op.Body, q.Body, clientEnum, "external_ref"); err != nil {
					return err
				}
				return u.Exec(q.Ctx)
			case !ent.IsNotFound(err):
				return err
			}
		}
		c := tx.Customer.Create().SetWorkspaceID(ws)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, clientEnum, "external_ref"); err != nil {
			return err
		}
		if ref != nil {
			_ = setRefFields(c.Mutation(), ref) // the client mutation has every field
		}
		// Two creates of one new ref race only on PostgreSQL: the loser hits the
		// unique (workspace_id, ext_key) index and inTx retries it as an update.
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(created(isNew), resource.Clients, id, "") })
}

// updateClient applies a PATCH; a new external_ref must not belong to
// another client of the workspace.
func updateClient(q *Request) (Result, error) {
	ref, err := parseRef(q.Body)
	if err != nil {
		return Result{}, err
	}
	ws := q.Workspace().ID
	return q.inTx(func(tx *ent.Tx) error {
		if ref != nil {
			other, err := tx.Customer.Query().Where(customer.WorkspaceID(ws), customer.ExtKey(ref.key()), customer.IDNEQ(q.ID)).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if other {
				return apierr.Conflict("duplicate", "another client already has this external_ref")
			}
		}
		u := tx.Customer.Update().Where(customer.ID(q.ID), customer.WorkspaceID(ws))
		if err := applyBody(u.Mutation(), q.Op.Body, q.Body, clientEnum, "external_ref"); err != nil {
			return err
		}
		if ref != nil {
			_ = setRefFields(u.Mutation(), ref) // the client mutation has every field
		}
		return updated(q.Ctx, u.Save, "client")
	}, func() Answer { return record(created(false), resource.Clients, q.ID, "") })
}
