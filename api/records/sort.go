package records

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/schema/field"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Sortable are the columns a list of r may be sorted by: every column its
// records show but structured ones (JSON).
func Sortable(r *resource.Resource) []string {
	var out []string
	for _, c := range Columns(r) {
		if c.Type != field.TypeJSON {
			out = append(out, c.Name)
		}
	}
	return out
}

// orderBy is s's ORDER BY: NULL sorts as the smallest value on both
// databases, and ties fall to the id in the same direction.
func (p *plan) orderBy(s Sort) string {
	dir, nulls := " ASC", " NULLS FIRST"
	if s.Desc {
		dir, nulls = " DESC", " NULLS LAST"
	}
	if !p.nullable[s.Column] {
		nulls = ""
	}
	if s.Column == "id" {
		return " ORDER BY t.id" + dir
	}
	return " ORDER BY t." + s.Column + dir + nulls + ", t.id" + dir
}

// after is the condition that keeps the rows after the row id in s's
// order (orderBy's): a keyset, so each page of an export is a bounded
// index read however deep it is. The row's value is read in place by a
// subquery, so it compares exactly as stored on either database.
func (p *plan) after(s Sort) string {
	op := " > "
	if s.Desc {
		op = " < "
	}
	if s.Column == "id" {
		return "t.id" + op + "?"
	}
	v := "(SELECT k." + s.Column + " FROM " + p.r.Table + " k WHERE k.id = ?)"
	if !p.nullable[s.Column] {
		return "(t." + s.Column + ", t.id)" + op + "(" + v + ", ?)"
	}
	c := "t." + s.Column
	if !s.Desc {
		// NULLs first: after a NULL come the NULLs of greater id, then every value.
		return "(" + c + op + v + " OR (" + c + " = " + v + " AND t.id" + op + "?) OR (" + v + " IS NULL AND (" +
			c + " IS NOT NULL OR t.id" + op + "?)))"
	}
	// NULLs last: after a value come the smaller values and every NULL.
	return "(" + c + op + v + " OR (" + c + " = " + v + " AND t.id" + op + "?) OR (" + v + " IS NOT NULL AND " + c +
		" IS NULL) OR (" + v + " IS NULL AND " + c + " IS NULL AND t.id" + op + "?))"
}

// exportPage is how many rows Each reads at a time.
const exportPage = 500

// indexed reports whether r's table has an index led by the workspace and
// col, so that keyset pages in col's order are short range reads.
func (p *plan) indexed(col string) bool {
	if col == "id" {
		return true
	}
	t := table(p.r.Table)
	return t != nil && slices.ContainsFunc(t.Indexes, func(ix *schema.Index) bool {
		return len(ix.Columns) >= 2 && ix.Columns[0].Name == "workspace_id" && ix.Columns[1].Name == col
	})
}

// Each calls fn with every record of the list pg asks for (its q, filters
// and sort; not its limit and offset), rendered as a list renders it, in
// the list's order, never holding more than a page of them, whatever the
// list's length. In an indexed order (newest first, a number) it reads
// keyset pages, each a short read of its own, so no connection is held
// while fn writes. In another order it reads one sorted query as fn
// consumes it, a page of rows at a time: keyset pages there would each
// sort the whole list again.
func (e *Engine) Each(ctx context.Context, r *resource.Resource, ws Workspace, pg Page, fn func(rec []byte) error) error {
	p := e.plans[r]
	if err := e.refresh(ctx, r, ws); err != nil {
		return err
	}
	pg.Offset, pg.Limit = 0, exportPage
	s := pg.Sort
	if s.Column == "" {
		s = Sort{Column: "created_at", Desc: true}
	}
	pg.Sort = s
	lq := &listQuery{where: p.where, args: p.args(ws, pg.ParentID), order: p.orderBy(s)}
	for _, f := range pg.Filters {
		cond, args := f.where()
		lq.where += " AND " + cond
		lq.args = append(lq.args, args...)
	}
	lq.filtered = true // the search answers a condition, never a page
	if pg.Q != "" && len(p.search.Columns) > 0 {
		if err := e.search(ctx, p, ws, pg, lq); err != nil {
			return err
		}
	}
	b := make([]byte, 0, 1024)
	emit := func(sc *scanned, skip map[string]bool) error {
		for i, id := range sc.ids {
			if !skip[id] {
				b = p.encode(b[:0], ws, sc, i)
				if err := fn(b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if !p.indexed(s.Column) {
		return e.eachSorted(ctx, p, ws, "SELECT "+p.selects+" FROM "+p.r.Table+" t WHERE "+lq.where+lq.order, lq.args, emit)
	}
	after := p.after(s)
	var last []string // the previous page's ids, in order
	for {
		where, args := lq.where, lq.args
		var skip map[string]bool
		if len(last) > 0 {
			cursor, seen, err := e.cursor(ctx, p, ws, last)
			if err != nil {
				return err
			}
			if cursor == "" {
				return apierr.Internal(errCursorGone)
			}
			skip = seen
			where += " AND " + after
			args = slices.Clone(args)
			for range strings.Count(after, "?") {
				args = append(args, cursor)
			}
		}
		q := "SELECT " + p.selects + " FROM " + p.r.Table + " t WHERE " + where + lq.order + database.LimitOffset(exportPage)
		sc, err := e.query(ctx, e.db.ReadPool, p, ws, q, append(args, 0))
		if err != nil {
			return err
		}
		if err := emit(sc, skip); err != nil {
			return err
		}
		if len(sc.ids) < exportPage {
			return nil
		}
		last = sc.ids
	}
}

// eachSorted reads q's rows as they come, a page at a time (with the
// page's embeds), and hands each page to emit before reading on.
func (e *Engine) eachSorted(ctx context.Context, p *plan, ws Workspace, q string, args []any, emit func(*scanned, map[string]bool) error) error {
	rs, err := e.db.ReadPool.QueryContext(ctx, e.db.Rebind(q), args...)
	if err != nil {
		return apierr.Internal(err)
	}
	defer rs.Close()
	idIdx := p.colIndex["id"]
	sc := &scanned{}
	flush := func() error {
		if err := e.loadEmbeds(ctx, e.db.ReadPool, p, ws, sc); err != nil {
			return err
		}
		err := emit(sc, nil)
		sc = &scanned{}
		return err
	}
	for rs.Next() {
		d := p.dests()
		if err := rs.Scan(d...); err != nil {
			return apierr.Internal(err)
		}
		sc.rows = append(sc.rows, d)
		sc.ids = append(sc.ids, d[idIdx].(*sql.NullString).String)
		if len(sc.ids) == exportPage {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rs.Err(); err != nil {
		return apierr.Internal(err)
	}
	return flush()
}

type cursorError struct{}

func (cursorError) Error() string {
	return "records: every record of an export's page was deleted while it was read"
}

var errCursorGone error = cursorError{}

// cursor picks the newest row of the previous page that still exists to
// read on after (a record deleted between two pages must not end the
// export); the rows after it on that page were written already: seen.
func (e *Engine) cursor(ctx context.Context, p *plan, ws Workspace, last []string) (string, map[string]bool, error) {
	q := "SELECT t.id FROM " + p.r.Table + " t WHERE t.workspace_id = ? AND t.id IN (" + marks(len(last)) + ")"
	ids, err := database.QueryStrings(ctx, e.db.ReadPool, e.db.Rebind(q), append([]any{ws.ID}, anys(last)...)...)
	if err != nil {
		return "", nil, apierr.Internal(err)
	}
	exists := make(map[string]bool, len(ids))
	for _, id := range ids {
		exists[id] = true
	}
	seen := map[string]bool{}
	for i := len(last) - 1; i >= 0; i-- {
		if exists[last[i]] {
			return last[i], seen, nil
		}
		seen[last[i]] = true
	}
	return "", nil, nil
}
