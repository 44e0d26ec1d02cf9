package records

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// strategy names one shortcut of the list pipeline. Each answers exactly
// what the plain path (COUNT(*), one newest-first page query) answers; the
// tests compare every page with and without it.
type strategy uint8

const (
	// unchangedPages: when nothing was committed since a page's records
	// were cached (SQLite's data version), the page's ids are read from
	// the index alone (cache.go). The render cache is switched by SetCache.
	unchangedPages strategy = 1 << iota
	// searchKeys: a q on a whole list is counted by the search, which
	// also picks the page's keys when that is cheap (shortcut.Set.Find).
	searchKeys
	// deepSkip: a deep offset of a whole list skips whole days by their
	// counts (shortcut.Set.Skip), then only the rest of its day.
	deepSkip
	// countedTotals: totals of whole lists, and of lists with one enum or
	// boolean filter, come from the counters triggers keep.
	countedTotals
	// unchangedLists: a list's whole answer is kept, and served again
	// while its table's version (shortcut.Set.Version) is the one it was
	// answered at.
	unchangedLists
)

// strategies are the strategies by name (ent/shortcut lists every name).
var strategies = map[string]strategy{
	"unchangedPages": unchangedPages,
	"searchKeys":     searchKeys,
	"deepSkip":       deepSkip,
	"countedTotals":  countedTotals,
	"unchangedLists": unchangedLists,
}

func (e *Engine) uses(s strategy) bool { return e.off&s == 0 }

// search narrows the list to the rows matching q (searchKeys: and counts
// them, and picks the page's keys, when the search can).
func (e *Engine) search(ctx context.Context, p *plan, ws Workspace, pg Page, lq *listQuery) error {
	// A sorted list cannot take the search's page, picked newest first.
	whole := e.uses(searchKeys) && !lq.filtered && p.r.Scope == "" && p.r.Parent == nil && pg.Sort.Column == ""
	f, err := e.sc.Find(ctx, p.search, ws.ID, pg.Q, whole, pg.Offset, pg.Limit)
	if err != nil {
		return apierr.Internal(err)
	}
	lq.filtered = true
	if f.Cond == "" {
		return nil // q holds no word: every row matches
	}
	lq.where += " AND " + f.Cond
	lq.args = append(lq.args, f.Args...)
	lq.total, lq.counted = f.Total, f.Counted
	if f.Page {
		lq.offset, lq.ids = 0, f.IDs // the condition keeps the page's rows alone
	}
	return nil
}

// countedTotal is the list's total from the counters, when they hold it.
func (e *Engine) countedTotal(ctx context.Context, r *resource.Resource, ws Workspace, pg Page, lq *listQuery) (int64, bool) {
	if !e.uses(countedTotals) || r.Parent != nil {
		return 0, false
	}
	switch {
	case !lq.filtered:
		return e.sc.Count(ctx, ws.ID, r.Table, r.Scope)
	case len(pg.Filters) == 1 && pg.Q == "" && pg.Filters[0].values() != nil:
		// One enum or boolean filter: each value is counted too.
		var total int64
		for _, v := range pg.Filters[0].values() {
			n, ok := e.sc.Count(ctx, ws.ID, e.sc.ValueKey(r.Table, pg.Filters[0].Column, v), r.Scope)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	}
	return 0, false
}

// deepOffset is where skipping whole days by their counts starts to pay.
const deepOffset = 5000

// skipDays turns a deep offset of a whole list into a condition on the
// day it falls in and the offset within it.
func (e *Engine) skipDays(ctx context.Context, p *plan, ws Workspace, lq *listQuery) {
	if !e.uses(deepSkip) || lq.offset < deepOffset || lq.filtered || p.r.Parent != nil || p.r.Scope != "" || lq.order != newestFirst {
		return
	}
	if cond, arg, rest, ok := e.sc.Skip(ctx, ws.ID, p.r.Table, lq.offset); ok {
		lq.where += " AND " + cond
		lq.args = append(lq.args, arg)
		lq.offset = rest
	}
}

// pageSQL selects sel of one page of the rows lq keeps, in its order; the
// offset is its last argument.
func pageSQL(p *plan, sel string, lq *listQuery, limit int) string {
	return "SELECT " + sel + " FROM " + p.r.Table + " t WHERE " + lq.where + lq.order + database.LimitOffset(limit)
}
