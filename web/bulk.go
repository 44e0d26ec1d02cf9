package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// maxSelected bounds the records one bulk action takes: a page at most.
const maxSelected = api.MaxLimit

// sendRoute is whether r's records have a send the workspace may run.
func sendRoute(ws *ent.Workspace, r *resource.Resource) bool {
	_, ok := api.FindRoute(r, resource.Action, "send")
	return ok && writable(ws, r)
}

// bulkResult is one selected record's outcome.
type bulkResult struct {
	ID, Name, Href string
	Problem        string // why it was refused; "" when it was sent
}

type bulkData struct {
	page
	R        *resource.Resource
	Back     string
	Sent     int
	Refused  []bulkResult
	Accepted []bulkResult
}

// bulkAction runs "Export selected" or "Send selected" on the ids a list's
// checkboxes sent.
func (u *UI) bulkAction(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil {
		return u.notFound(c)
	}
	if err := access.GatePlan(access.WorkspaceOf(ws), r); err != nil {
		return u.fail(c, http.StatusForbidden, "Not available", gateMessage(err))
	}
	var picked []string
	for _, v := range c.Context().PostArgs().PeekMulti("id") {
		if id := string(v); id != "" && !slices.Contains(picked, id) {
			picked = append(picked, id)
		}
	}
	back := wsURL(ws, "records", r.Name)
	switch {
	case len(picked) == 0:
		return u.fail(c, http.StatusBadRequest, "Nothing selected", "Select the rows to act on with their checkboxes, then choose the action.")
	case len(picked) > maxSelected:
		return u.fail(c, http.StatusBadRequest, "Too many selected", "Select at most "+itoa(maxSelected)+" records at once; export the list for more.")
	}
	switch c.FormValue("do") {
	case "export":
		ctx, wsr := c.UserContext(), recordsWorkspace(ws)
		// The selected records are at most a page: read them now, in the order ticked.
		recs, err := u.core.Records.RenderMany(ctx, u.db.ReadPool, r, wsr, picked)
		if err != nil {
			return u.internal(c, err)
		}
		u.streamCSV(c, csvName(r.Name+"-selected", time.Now()), func(ctx context.Context, w io.Writer) error {
			return u.writeCSV(ctx, w, ws, r, func(fn func([]byte) error) error {
				for _, b := range recs {
					if b != nil { // not in this workspace, or deleted
						if err := fn(b); err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
		return nil
	case "send":
		rt, ok := api.FindRoute(r, resource.Action, "send")
		if !ok || !writable(ws, r) {
			return u.fail(c, http.StatusBadRequest, "Cannot send", "The "+humanizeLower(r.Name)+" have no send.")
		}
		return u.sendSelected(c, ws, r, rt, picked, back)
	}
	return u.fail(c, http.StatusBadRequest, "No such action", "Choose Export selected or Send selected.")
}

// sendSelected sends each record through the same write as its page's
// Send (and /v1's POST …/send), keyed by the form's token and the id, so a
// form sent twice sends nothing twice; it reports what was sent and what
// was refused, and why.
func (u *UI) sendSelected(c *fiber.Ctx, ws *ent.Workspace, r *resource.Resource, rt api.Route, picked []string, back string) error {
	d := bulkData{page: u.pageOf(c, "Send "+humanizeLower(r.Name), "rec:"+r.Name), R: r, Back: back}
	idem := c.FormValue(idemName)
	names, err := u.namesOf(c.UserContext(), ws, picked)
	if err != nil {
		return u.internal(c, err)
	}
	for _, id := range picked {
		res := bulkResult{ID: id, Name: names[id], Href: wsURL(ws, "records", r.Name, url.PathEscape(id))}
		if res.Name == "" {
			res.Name = id
		}
		key := ""
		if idem != "" {
			key = idem + ":" + id
		}
		if _, e := u.write(c, rt, id, "", nil, key); e != nil {
			if e.Status >= 500 {
				return u.internal(c, e)
			}
			res.Problem = capitalize(e.Message) + "."
			d.Refused = append(d.Refused, res)
			continue
		}
		d.Sent++
		d.Accepted = append(d.Accepted, res)
	}
	status := http.StatusOK
	if d.Sent == 0 {
		status = http.StatusConflict
	}
	return render(c, status, bulkView(d))
}
