package records

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// RenderMany is Render for several records of r, in the order asked, with
// one query for the rows and one per embed (a bulk write's answer, never N
// single reads). An id that is not found answers nil in its place.
func (e *Engine) RenderMany(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, ids []string) ([][]byte, error) {
	out, _, err := e.RenderStatuses(ctx, qr, r, ws, ids)
	return out, err
}

// RenderStatuses is RenderMany that also answers each record's status, read
// from the same row ("" when r has none or the id is not found): the event
// of a record a write touched is named for the status the write left.
func (e *Engine) RenderStatuses(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, ids []string) ([][]byte, []string, error) {
	out, statuses := make([][]byte, len(ids)), make([]string, len(ids))
	if len(ids) == 0 {
		return out, statuses, nil
	}
	p := e.plans[r]
	s, err := e.byID(ctx, qr, p, ws, "", ids)
	if err != nil {
		return nil, nil, err
	}
	at := make(map[string]int, len(s.ids))
	for i, id := range s.ids {
		at[id] = i
	}
	status, hasStatus := p.colIndex["status"]
	for i, id := range ids {
		if j, ok := at[id]; ok {
			out[i] = p.encode(make([]byte, 0, 1024), ws, s, j)
			if hasStatus {
				statuses[i], _ = value(s.rows[j][status]).(string)
			}
		}
	}
	return out, statuses, nil
}
