package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// The workspace's change log (GET /v1/events), newest first: a key sees the
// events of the resources its role may read. Besides limit and offset,
// the cursors starting_after and ending_before go by seq, and a page shows
// only settled events (database.SettledSeq), so a consumer catching up
// neither misses nor repeats one while more arrive.

// readable is the SQL condition on object_type the caller's key may see.
func readable(p *access.Principal) (string, []any) {
	var names []any
	for _, r := range resource.All {
		if r != resource.Me && p.Gate(r, resource.Read) == nil {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return "1 = 0", nil
	}
	return "object_type IN (" + strings.TrimSuffix(strings.Repeat("?,", len(names)), ",") + ")", names
}

// Event is the workspace's event id as JSON, if p's key may read it.
func (c *Core) Event(ctx context.Context, p *access.Principal, id string) ([]byte, error) {
	cond, args := readable(p)
	args = append([]any{p.Workspace.ID, id}, args...)
	row := c.DB.ReadPool.QueryRowContext(ctx, c.DB.Rebind("SELECT "+webhooks.EventColumns+" FROM events WHERE workspace_id = ? AND id = ? AND "+cond), args...)
	e, _, err := webhooks.ScanEvent(row)
	if err == sql.ErrNoRows {
		return nil, apierr.NotFound("event")
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// Events is a page of the workspace's events p's key may read, as JSON.
func (c *Core) Events(ctx context.Context, p *access.Principal, l List) ([]byte, error) {
	ws := p.Workspace.ID
	cond, rargs := readable(p)
	where := []string{"workspace_id = ?", cond}
	args := append([]any{ws}, rargs...)
	limit, offset, q := l.Limit, l.Offset, l.Events
	for _, types := range q.Types {
		cond, targs := typeCondition(types)
		where = append(where, cond)
		args = append(args, targs...)
	}
	for _, b := range q.Created {
		where = append(where, "created_at "+b.Op+" ?")
		args = append(args, b.At)
		if b.Op == ">=" {
			// The same bound on the id, which the primary key serves:
			// an event's id is made no earlier than its created_at.
			where = append(where, "id >= ?")
			args = append(args, ids.Floor("evt", b.At))
		}
	}
	if q.After != "" && q.Before != "" {
		return nil, apierr.Invalid("ending_before", "send starting_after or ending_before, not both")
	}
	if (q.After != "" || q.Before != "") && offset > 0 {
		return nil, apierr.Invalid("offset", "offset does not combine with starting_after or ending_before")
	}
	order := "DESC"
	for _, cur := range []struct{ param, id, op string }{{"starting_after", q.After, "<"}, {"ending_before", q.Before, ">"}} {
		if cur.id == "" {
			continue
		}
		seq, err := c.eventSeq(ctx, ws, cur.id)
		if err != nil {
			return nil, err
		}
		if seq < 0 {
			return nil, apierr.Invalid(cur.param, "no such event: %s", cur.id)
		}
		where = append(where, "seq "+cur.op+" ?")
		args = append(args, seq)
		if cur.op == ">" {
			order = "ASC" // the page right after the cursor, then shown newest first
		}
	}
	if c.DB.Dialect == dialect.Postgres {
		// Only settled events: no later commit can land among them.
		settled, err := c.DB.SettledSeq(ctx, ws, c.DB.EventsWait())
		if err != nil {
			return nil, err
		}
		where = append(where, "seq < ?")
		args = append(args, settled)
	}
	w := strings.Join(where, " AND ")
	var total int64
	if err := c.DB.ReadPool.QueryRowContext(ctx, c.DB.Rebind("SELECT COUNT(*) FROM events WHERE "+w), args...).Scan(&total); err != nil {
		return nil, err
	}
	sq := "SELECT " + webhooks.EventColumns + " FROM events WHERE " + w + " ORDER BY seq " + order +
		" LIMIT " + strconv.Itoa(limit+1) + " OFFSET " + strconv.Itoa(offset)
	rs, err := c.DB.ReadPool.QueryContext(ctx, c.DB.Rebind(sq), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	page := []webhooks.Event{}
	for rs.Next() {
		e, _, err := webhooks.ScanEvent(rs)
		if err != nil {
			return nil, err
		}
		page = append(page, e)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	more := len(page) > limit
	if more {
		page = page[:limit]
	}
	if order == "ASC" {
		slices.Reverse(page)
	}
	var out struct {
		Data []webhooks.Event `json:"data"`
		Meta struct {
			Limit   int   `json:"limit"`
			Offset  int   `json:"offset"`
			Total   int64 `json:"total"`
			HasMore bool  `json:"has_more"`
		} `json:"meta"`
	}
	out.Data = page
	out.Meta.Limit, out.Meta.Offset, out.Meta.Total, out.Meta.HasMore = limit, offset, total, more
	return json.Marshal(out)
}

// typePattern is one element of ?type=: an exact event type, or the start
// of types followed by .* (invoice.*). Nothing in it is a wildcard or an
// escape of the database's, so every database answers alike.
var typePattern = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*(\.\*)?$`)

// typeCondition is the SQL condition of one ?type=, a list of patterns
// checked by ParseList. A prefix is compared by substr, not LIKE: LIKE
// ignores case on SQLite and has its own wildcards and escapes; the
// comparison here is exact and case-sensitive on both databases.
func typeCondition(types []string) (string, []any) {
	var or []string
	var args []any
	for _, t := range types {
		if prefix, ok := strings.CutSuffix(t, "*"); ok {
			or = append(or, "substr(type, 1, "+strconv.Itoa(len(prefix))+") = ?")
			args = append(args, prefix)
			continue
		}
		or = append(or, "type = ?")
		args = append(args, t)
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// eventSeq is the number of the workspace's event id, or -1.
func (c *Core) eventSeq(ctx context.Context, ws, id string) (int64, error) {
	var seq int64
	err := c.DB.ReadPool.QueryRowContext(ctx, c.DB.Rebind("SELECT seq FROM events WHERE workspace_id = ? AND id = ?"), ws, id).Scan(&seq)
	if err == sql.ErrNoRows {
		return -1, nil
	}
	return seq, err
}
