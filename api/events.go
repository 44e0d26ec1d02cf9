package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// GET /v1/events and /v1/events/{id}: the workspace's change log, newest
// first, on every plan. A key sees the events of the resources its role
// may read. Pages follow the list convention (limit, offset, meta.total),
// plus Stripe's cursors: starting_after (older than an event) and
// ending_before (newer than one), by the events' commit order, so a
// consumer catching up neither misses nor repeats one while more arrive.

// eventJSON is an event as the API shows it; a webhook sends the same.
type eventJSON = webhooks.Event

const eventColumns = webhooks.EventColumns

var scanEvent = webhooks.ScanEvent

// readable is the SQL condition on object_type the caller's key may see.
func readable(c *fiber.Ctx) (string, []any) {
	p := principal(c)
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

func (s *Server) getEvent(c *fiber.Ctx) error {
	cond, args := readable(c)
	args = append([]any{principal(c).Workspace.ID, c.Params("id")}, args...)
	row := s.DB.Read.QueryRowContext(c.UserContext(), s.DB.Rebind("SELECT "+eventColumns+" FROM events WHERE workspace_id = ? AND id = ? AND "+cond), args...)
	e, _, err := scanEvent(row)
	if err == sql.ErrNoRows {
		return apierr.NotFound("event")
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, b)
}

func (s *Server) listEvents(c *fiber.Ctx) error {
	ctx := c.UserContext()
	ws := principal(c).Workspace.ID
	cond, rargs := readable(c)
	where := []string{"workspace_id = ?", cond}
	args := append([]any{ws}, rargs...)
	limit, offset := DefaultLimit, 0
	var after, before string
	var err error
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if err != nil {
			return
		}
		key, val := string(k), string(v)
		if ok, e := pageParam(key, val, &limit, &offset); ok {
			err = e
			return
		}
		switch key {
		case "type":
			cond, targs, e := typeCondition(val)
			if e != nil {
				err = e
				return
			}
			where = append(where, cond)
			args = append(args, targs...)
		case "created[gte]", "created[lt]":
			t, e := time.Parse(time.RFC3339Nano, val)
			if e != nil {
				err = apierr.Invalid(key, "%s must be an RFC 3339 time, e.g. 2026-11-25T10:00:00Z", key)
				return
			}
			op := ">="
			if key == "created[lt]" {
				op = "<"
			}
			where = append(where, "created_at "+op+" ?")
			args = append(args, t.UTC())
			if op == ">=" {
				// The same bound on the id, which the primary key serves:
				// an event's id is made no earlier than its created_at.
				where = append(where, "id >= ?")
				args = append(args, ids.Floor("evt", t))
			}
		case "starting_after":
			after = val
		case "ending_before":
			before = val
		default:
			err = apierr.Invalid(key, "unknown query parameter %q", key)
		}
	})
	if err != nil {
		return err
	}
	if after != "" && before != "" {
		return apierr.Invalid("ending_before", "send starting_after or ending_before, not both")
	}
	if (after != "" || before != "") && offset > 0 {
		return apierr.Invalid("offset", "offset does not combine with starting_after or ending_before")
	}
	order := "DESC"
	for _, cur := range []struct{ param, id, op string }{{"starting_after", after, "<"}, {"ending_before", before, ">"}} {
		if cur.id == "" {
			continue
		}
		seq, err := s.eventSeq(ctx, ws, cur.id)
		if err != nil {
			return err
		}
		if seq < 0 {
			return apierr.Invalid(cur.param, "no such event: %s", cur.id)
		}
		where = append(where, "seq "+cur.op+" ?")
		args = append(args, seq)
		if cur.op == ">" {
			order = "ASC" // the page right after the cursor, then shown newest first
		}
	}
	w := strings.Join(where, " AND ")
	var total int64
	if err := s.DB.Read.QueryRowContext(ctx, s.DB.Rebind("SELECT COUNT(*) FROM events WHERE "+w), args...).Scan(&total); err != nil {
		return err
	}
	q := "SELECT " + eventColumns + " FROM events WHERE " + w + " ORDER BY seq " + order +
		" LIMIT " + strconv.Itoa(limit+1) + " OFFSET " + strconv.Itoa(offset)
	rs, err := s.DB.Read.QueryContext(ctx, s.DB.Rebind(q), args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	page := []eventJSON{}
	for rs.Next() {
		e, _, err := scanEvent(rs)
		if err != nil {
			return err
		}
		page = append(page, e)
	}
	if err := rs.Err(); err != nil {
		return err
	}
	more := len(page) > limit
	if more {
		page = page[:limit]
	}
	if order == "ASC" {
		for i, j := 0, len(page)-1; i < j; i, j = i+1, j-1 {
			page[i], page[j] = page[j], page[i]
		}
	}
	var out struct {
		Data []eventJSON `json:"data"`
		Meta struct {
			Limit   int   `json:"limit"`
			Offset  int   `json:"offset"`
			Total   int64 `json:"total"`
			HasMore bool  `json:"has_more"`
		} `json:"meta"`
	}
	out.Data = page
	out.Meta.Limit, out.Meta.Offset, out.Meta.Total, out.Meta.HasMore = limit, offset, total, more
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, b)
}

// typePattern is one element of ?type=: an exact event type, or the start
// of types followed by .* (invoice.*). Nothing in it is a wildcard or an
// escape of the database's, so every database answers alike.
var typePattern = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*(\.\*)?$`)

// typeCondition is the SQL condition of ?type=, a comma list of patterns.
// A prefix is compared by substr, not LIKE: LIKE ignores case on SQLite
// and has its own wildcards and escapes; the comparison here is exact and
// case-sensitive on both databases.
func typeCondition(val string) (string, []any, error) {
	var or []string
	var args []any
	for _, t := range strings.Split(val, ",") {
		t = strings.TrimSpace(t)
		if len(t) > 100 || !typePattern.MatchString(t) {
			return "", nil, apierr.Invalid("type", "type is one event type or a comma list of them; a type may end in .* "+
				"to match every type that starts so (invoice.paid,quote.*); no other wildcard or escape")
		}
		if prefix, ok := strings.CutSuffix(t, "*"); ok {
			or = append(or, "substr(type, 1, "+strconv.Itoa(len(prefix))+") = ?")
			args = append(args, prefix)
			continue
		}
		or = append(or, "type = ?")
		args = append(args, t)
	}
	return "(" + strings.Join(or, " OR ") + ")", args, nil
}

// eventSeq is the number of the workspace's event id, or -1.
func (s *Server) eventSeq(ctx context.Context, ws, id string) (int64, error) {
	var seq int64
	err := s.DB.Read.QueryRowContext(ctx, s.DB.Rebind("SELECT seq FROM events WHERE workspace_id = ? AND id = ?"), ws, id).Scan(&seq)
	if err == sql.ErrNoRows {
		return -1, nil
	}
	return seq, err
}
