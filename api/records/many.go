package records

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// RenderMany is Render for several records of r, in the order asked, with
// one query for the rows and one per embed (a bulk write's answer, never N
// single reads). An id that is not found answers nil in its place.
func (e *Engine) RenderMany(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, ids []string) ([][]byte, error) {
	out := make([][]byte, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	p := e.plans[r]
	s, err := e.byID(ctx, qr, p, ws, "", ids)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(s.ids))
	for i, id := range s.ids {
		at[id] = i
	}
	for i, id := range ids {
		if j, ok := at[id]; ok {
			out[i] = p.encode(make([]byte, 0, 1024), ws, s, j)
		}
	}
	return out, nil
}
