package web

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
)

// Where a create's rows are not what sourceRows takes (a return takes back
// what was delivered and not yet returned, as api/writes decides), the
// resource has rows of its own.

// ownRowsFunc gives the rows a create of a resource takes from the record
// id names; ok is false when the workspace has no such record.
type ownRowsFunc func(ctx context.Context, u *UI, ws *ent.Workspace, id string) (src rowSourceOf, ok bool, err error)

var ownRows = map[*resource.Resource]ownRowsFunc{resource.Returns: returnRows}

// ownSource is the own rows of s's resource from the record v names.
func (u *UI) ownSource(c *fiber.Ctx, s formSpec, v formValues) (rowSourceOf, bool, bool) {
	own, has := ownRows[s.R]
	if !has {
		return rowSourceOf{}, false, false
	}
	id := ""
	for _, f := range s.RT.Op.Body {
		if val := strings.TrimSpace(v[f.Name]); strings.HasSuffix(f.Name, "_id") && val != "" && byIDPrefix(val) != nil {
			id = val // the record the create names (a return's order)
			break
		}
	}
	if id == "" {
		return rowSourceOf{}, false, true
	}
	src, ok, err := own(c.UserContext(), u, workspaceOf(c), id)
	if err != nil {
		u.log.Error("admin form rows", "path", c.Path(), "err", err)
		return rowSourceOf{}, false, true
	}
	return src, ok, true
}

// offered drops a record page's "New …" action (see actionsOf) whose
// resource has own rows and none are left of the record, and the payment
// of a document that has nothing left to pay (see settled).
func (u *UI) offered(c *fiber.Ctx, r *resource.Resource, actions []recordAction, id string, rec record) ([]recordAction, error) {
	ws := workspaceOf(c)
	out := actions[:0]
	for _, a := range actions {
		keep := !settled(r, rec) || !strings.HasPrefix(a.Name, "add-") || !paysDocument(r, strings.TrimPrefix(a.Name, "add-"))
		if op, ok := r.Action(a.Name); ok && made(op, rec) {
			keep = false // an order's invoice, once made
		}
		for other, own := range ownRows {
			if a.Name != "new-"+other.Name {
				continue
			}
			src, ok, err := own(c.UserContext(), u, ws, id)
			if err != nil {
				return nil, err
			}
			keep = ok && len(src.Rows) > 0
		}
		if keep {
			out = append(out, a)
		}
	}
	return out, nil
}

// settled is a document that keeps a balance (docKinds' Balance: an
// invoice, a bill) with none of it remaining: the API takes no payment
// above the open balance, so a paid one takes none worth recording here.
func settled(r *resource.Resource, rec record) bool {
	n, ok := rec.get("remaining_cents").(json.Number)
	return docKinds[r].Balance && ok && n.String() == "0"
}

// paysDocument is whether sub, a sub-resource of r by name, is r's
// payments: its create moves the document's balance (an amount paid).
func paysDocument(r *resource.Resource, sub string) bool {
	for _, s := range children(r) {
		if s.Name != sub {
			continue
		}
		op, ok := s.Op(resource.Create)
		return ok && slices.ContainsFunc(op.Body, func(f resource.Field) bool { return f.Name == "amount_incl_vat_cents" })
	}
	return false
}

// returnRows are an online order's lines with what may still come back,
// all of it prefilled: the admin lowers or blanks what stays.
func returnRows(ctx context.Context, u *UI, ws *ent.Workspace, id string) (rowSourceOf, bool, error) {
	o, err := u.db.Reader.SalesOrder.Get(ctx, id)
	if ent.IsNotFound(err) || err == nil && (o.WorkspaceID != ws.ID || !o.Online) {
		return rowSourceOf{}, false, nil
	}
	if err != nil {
		return rowSourceOf{}, false, err
	}
	lines, err := writes.ReturnableLines(ctx, u.db.Reader, ws.ID, id)
	if err != nil {
		return rowSourceOf{}, false, err
	}
	src := rowSourceOf{Field: "order_line_id"}
	for _, l := range lines {
		qty := strconv.FormatInt(l.QtyMilli, 10)
		label := strings.TrimSpace(l.Line.Description+" "+l.Line.Sku) + " · " + showNumber("qty_milli", json.Number(qty), nil).Text + " returnable"
		src.Choices = append(src.Choices, choice{Value: l.Line.ID, Label: label})
		if l.QtyMilli > 0 {
			src.Rows = append(src.Rows, map[string]string{"order_line_id": l.Line.ID, "qty_milli": unitText(resource.Field{Type: resource.Integer, Unit: resource.Thousandths}, l.QtyMilli, "")})
		}
	}
	return src, true, nil
}

// made reports whether rec links a record of a resource op makes (an
// order's invoice_id): the action would be refused.
func made(op resource.Op, rec record) bool {
	for _, m := range op.Makes {
		if textOf(rec.get(strings.ReplaceAll(m.Singular, " ", "_")+"_id")) != "" {
			return true
		}
	}
	return false
}
