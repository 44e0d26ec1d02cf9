package records

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// A list request refreshes clock-driven states and notes the data version,
// plans its WHERE, total and offset, reads the page's rows (from the render
// cache when it can) and encodes them. The plain path is COUNT(*) and one
// newest-first page query; every strategy (strategies.go) must answer
// exactly what it answers.

// Page is a validated list request.
type Page struct {
	Limit, Offset int
	Q             string
	// Filters maps a declared filter's column to its value (string or bool).
	Filters  []FilterValue
	ParentID string
	// Sort orders the list by one of Sortable's columns; zero: newest first.
	Sort Sort
}

// Sort is a list's order: by Column, ties broken by id in the same
// direction (so offset paging is stable).
type Sort struct {
	Column string
	Desc   bool
}

// FilterValue is one applied list filter.
type FilterValue struct {
	Column string
	// Value is a string or a bool; a []string matches any of its values.
	Value any
	// Bound compares instead of matching: ">=" or "<=" (a date range's ends).
	Bound string
}

// where is the filter's SQL condition on the row t, with its arguments.
func (f FilterValue) where() (string, []any) {
	if vs, ok := f.Value.([]string); ok {
		return "t." + f.Column + " IN (" + marks(len(vs)) + ")", anys(vs)
	}
	op := "="
	if f.Bound == ">=" || f.Bound == "<=" {
		op = f.Bound
	}
	return "t." + f.Column + " " + op + " ?", []any{f.Value}
}

// values are the values an equality filter matches, one counter each;
// nil for a range.
func (f FilterValue) values() []any {
	if f.Bound != "" {
		return nil
	}
	if vs, ok := f.Value.([]string); ok {
		return anys(vs)
	}
	return []any{f.Value}
}

// marks are n comma-separated placeholders.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func anys(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// listQuery is a planned list: the rows it selects and how to page them.
type listQuery struct {
	where    string // on the table aliased t
	args     []any
	filtered bool // where keeps fewer rows: whole-list counters do not answer
	total    int64
	counted  bool
	offset   int // into the rows of where
	// ids, when not nil, are the page's ids in order (the search read them).
	ids   []string
	order string // the ORDER BY
}

const newestFirst = " ORDER BY t.created_at DESC, t.id DESC"

// List answers a list envelope {data, meta} as JSON.
func (e *Engine) List(ctx context.Context, r *resource.Resource, ws Workspace, pg Page) ([]byte, error) {
	return e.AppendList(ctx, r, ws, pg, make([]byte, 0, 4096))
}

// AppendList appends the list envelope to b, which a caller may reuse.
func (e *Engine) AppendList(ctx context.Context, r *resource.Resource, ws Workspace, pg Page, b []byte) ([]byte, error) {
	p := e.plans[r]
	if err := e.refresh(ctx, r, ws); err != nil {
		return nil, err
	}
	dv, err := e.dataVersion(ctx, p, ws, pg)
	if err != nil {
		return nil, err
	}
	key := ""
	if dv != noVersion && e.lists != nil && e.uses(unchangedLists) {
		key = listKey(p, ws, pg)
		if a, ok := e.lists.GetIfPresent(key); ok && a.checked == dv {
			// Records the render cache no longer holds are read by id; the
			// version must then still be dv.
			out, ok, read, err := e.rowsAt(ctx, p, ws, pg.ParentID, a.ids, append(b, `{"data":[`...), dv, true)
			if err != nil {
				return nil, err
			}
			if ok && read {
				var v int64
				if v, err = e.version(ctx, p, ws); err != nil {
					return nil, err
				}
				ok = v == dv
			}
			if ok {
				return meta(out, pg, a.total), nil
			}
		}
	}
	lq, err := e.planList(ctx, p, ws, pg)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"data":[`...)
	ids := []string{}
	if int64(pg.Offset) < lq.total {
		if b, ids, err = e.page(ctx, p, ws, pg, lq, dv, b); err != nil {
			return nil, err
		}
	}
	if key != "" && ids != nil {
		// dv was read before every query of the answer: what they read
		// may be newer than dv, never older.
		e.lists.Set(key, listAnswer{checked: dv, ids: ids, total: lq.total})
	}
	return meta(b, pg, lq.total), nil
}

// listAnswer is a list's answer at version checked of its table (strategy
// unchangedLists): its total and its page's ids, whose records the render
// cache holds.
type listAnswer struct {
	checked int64
	ids     []string
	total   int64
}

// listKey names a list answer: the workspace, the resource, how records
// render there, and every parameter of the page.
func listKey(p *plan, ws Workspace, pg Page) string {
	k := fmt.Appendf(make([]byte, 0, 128), "%s\x00%p\x00%t\x00%d\x00%d\x00%s\x00%t\x00%q", ws.ID, p, ws.Commerce,
		pg.Limit, pg.Offset, pg.Sort.Column, pg.Sort.Desc, pg.Q)
	for _, f := range pg.Filters {
		k = fmt.Appendf(k, "\x00%s%s%#v", f.Column, f.Bound, f.Value)
	}
	return string(k)
}

// dataVersion (strategy unchangedPages) is read before anything else of
// a cached list: a page answered from the cache checks at its end that
// nothing was committed since, which covers every query of the request.
func (e *Engine) dataVersion(ctx context.Context, p *plan, ws Workspace, pg Page) (int64, error) {
	if pg.ParentID != "" {
		return noVersion, nil
	}
	return e.version(ctx, p, ws)
}

// planList builds the list's condition and counts its rows.
func (e *Engine) planList(ctx context.Context, p *plan, ws Workspace, pg Page) (*listQuery, error) {
	lq := &listQuery{where: p.where, args: p.args(ws, pg.ParentID), offset: pg.Offset, order: newestFirst}
	if pg.Sort.Column != "" {
		lq.order = p.orderBy(pg.Sort)
	}
	for _, f := range pg.Filters {
		cond, args := f.where()
		lq.where += " AND " + cond
		lq.args = append(lq.args, args...)
	}
	lq.filtered = len(pg.Filters) > 0
	if pg.Q != "" && len(p.search.Columns) > 0 {
		if err := e.search(ctx, p, ws, pg, lq); err != nil {
			return nil, err
		}
	}
	if !lq.counted {
		lq.total, lq.counted = e.countedTotal(ctx, p.r, ws, pg, lq)
	}
	if !lq.counted {
		q := "SELECT COUNT(*) FROM " + p.r.Table + " t WHERE " + lq.where
		if err := e.db.ReadPool.QueryRowContext(ctx, e.db.Rebind(q), lq.args...).Scan(&lq.total); err != nil {
			return nil, apierr.Internal(err)
		}
	}
	return lq, nil
}

// page appends the records of the page: from the render cache when the
// resource is cached, else encoded from its rows. ids are the page's, when
// the render cache holds every one of its records.
func (e *Engine) page(ctx context.Context, p *plan, ws Workspace, pg Page, lq *listQuery, dv int64, b []byte) ([]byte, []string, error) {
	e.skipDays(ctx, p, ws, lq)
	args := append(lq.args, lq.offset)
	if p.cacheable && e.cache != nil {
		if dv != noVersion {
			ids := "SELECT t.id FROM " + p.r.Table + " t WHERE " + lq.where + lq.order + database.LimitOffset(pg.Limit)
			if out, ids, err := e.pageUnchanged(ctx, p, ws, pg.ParentID, lq.ids, ids, args, b, dv); err != nil || ids != nil {
				return out, ids, err
			}
		}
		return e.pageCached(ctx, p, ws, pg.ParentID, pageSQL(p, p.keys, lq, pg.Limit), args, b, dv)
	}
	s, err := e.query(ctx, e.db.ReadPool, p, ws, pageSQL(p, p.selects, lq, pg.Limit), args)
	if err != nil {
		return nil, nil, err
	}
	for i := range s.rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.encode(b, ws, s, i)
	}
	return b, nil, nil
}

// meta closes a list envelope.
func meta(b []byte, pg Page, total int64) []byte {
	b = append(b, `],"meta":{"limit":`...)
	b = strconv.AppendInt(b, int64(pg.Limit), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(pg.Offset), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, `}}`...)
}
