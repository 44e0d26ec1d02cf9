package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
)

// A create whose body names another record by a required id (Field.IDOf:
// a return's sales_order_id) is offered on that record's page, and its
// form opens with the id filled in; a resource's prefill may fill more
// (the lines a return can take back).

// prefill fills a New form from what its creator knows: the ids its
// query names (?sales_order_id=so_...), then the resource's own prefill.
type prefillFunc func(ctx context.Context, u *UI, ws *ent.Workspace, v formValues) error

var prefills = map[*resource.Resource]prefillFunc{resource.Returns: prefillReturn}

// offerable says whether a record's page offers the create: the record
// can take one now (an order with goods left to return).
type offerFunc func(ctx context.Context, u *UI, ws *ent.Workspace, id string) (bool, error)

var offers = map[*resource.Resource]offerFunc{resource.Returns: returnOffered}

// offered drops a record page's "New …" action (see actionsOf) whose
// resource says the record cannot take one now (an order with nothing
// left to return).
func (u *UI) offered(c *fiber.Ctx, actions []recordAction, id string) ([]recordAction, error) {
	ws := workspaceOf(c)
	out := actions[:0]
	for _, a := range actions {
		keep := true
		for other, offer := range offers {
			if a.Name != "new-"+other.Name {
				continue
			}
			yes, err := offer(c.UserContext(), u, ws, id)
			if err != nil {
				return nil, err
			}
			keep = yes
		}
		if keep {
			out = append(out, a)
		}
	}
	return out, nil
}

// prefillReturn offers every line of the order that can still come back,
// with all of it: the admin lowers or blanks what stays with the customer.
func prefillReturn(ctx context.Context, u *UI, ws *ent.Workspace, v formValues) error {
	so := v["sales_order_id"]
	if so == "" {
		return nil
	}
	lines, err := writes.ReturnableLines(ctx, u.db.Reader, ws.ID, so)
	if err != nil {
		return err
	}
	i := 0
	for _, l := range lines {
		if l.QtyMilli > 0 {
			v["lines["+itoa(i)+"].order_line_id"] = l.Line.ID
			v["lines["+itoa(i)+"].qty_milli"] = itoa(int(l.QtyMilli))
			i++
		}
	}
	return nil
}

func returnOffered(ctx context.Context, u *UI, ws *ent.Workspace, id string) (bool, error) {
	o, err := u.db.Reader.SalesOrder.Get(ctx, id)
	if ent.IsNotFound(err) || err == nil && (o.WorkspaceID != ws.ID || !o.Online) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	lines, err := writes.ReturnableLines(ctx, u.db.Reader, ws.ID, id)
	if err != nil {
		return false, err
	}
	for _, l := range lines {
		if l.QtyMilli > 0 {
			return true, nil
		}
	}
	return false, nil
}
