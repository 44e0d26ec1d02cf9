package web

import (
	"context"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
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

func (u *UI) prefill(c *fiber.Ctx, r *resource.Resource, rt api.Route) (formValues, error) {
	v := formValues{}
	for _, f := range rt.Op.Body {
		if f.IDOf != nil && c.Query(f.Name) != "" {
			v[f.Name] = c.Query(f.Name)
		}
	}
	if p, ok := prefills[r]; ok {
		if err := p(c.UserContext(), u, workspaceOf(c), v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// linkedCreates are the New buttons of a record's page for the creates
// that point at it.
func (u *UI) linkedCreates(c *fiber.Ctx, r *resource.Resource, id string) ([]recordAction, error) {
	ws := workspaceOf(c)
	var out []recordAction
	for _, other := range browsable() {
		rt, ok := api.FindRoute(other, resource.Create, "")
		if !ok || !writable(ws, other) {
			continue
		}
		for _, f := range rt.Op.Body {
			if f.IDOf != r || !f.Required {
				continue
			}
			if offer, ok := offers[other]; ok {
				yes, err := offer(c.UserContext(), u, ws, id)
				if err != nil {
					return nil, err
				}
				if !yes {
					continue
				}
			}
			out = append(out, recordAction{Name: "new-" + other.Name, Label: "New " + other.Singular, Summary: rt.Op.Summary,
				URL: wsURL(ws, "records", other.Name, "new") + "?" + url.Values{f.Name: {id}}.Encode(), Confirm: true})
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
