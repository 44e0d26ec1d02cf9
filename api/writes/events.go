package writes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// Every write appends its events in its own transaction, so an event exists
// exactly when its change does. They are written at the transaction's end
// (database.Deferred), with the touched records read there, so a batch of
// group-committed writes costs one read and one insert; a write about to
// change such a record again reads it first (settle).

// Change is one event an operation's transaction writes (Answer.Changes,
// or else from the declaration).
type Change struct {
	Type     string
	Resource *resource.Resource // whose read grant shows the event
	ID       string
	Object   []byte
	Previous []byte // previous_attributes, on updates
	// later: a touched or made record, whose Object and Type are read at
	// the transaction's end (or at settle).
	later *touched
}

// before is what a write's events need from before the change.
type before struct {
	record []byte // the record an update, action or delete changes
	parent state  // a sub-resource's parent (the invoice a payment is for)
}

// state is what tells whether a write changed a record besides its own:
// its status, and its updated_at, which every change of its row moves.
type state struct{ status, version string }

// watch reads, before the change, what the write's events compare with,
// under the rows' locks where writers run side by side, so that another
// write's change never reads as this one's.
func (q *Request) watch(tx *ent.Tx) (before, error) {
	var b before
	r := q.Resource
	// Waiting records this write may change are read now: its resource's,
	// its parent, and on a delete every one (cascades may take others).
	var whose *resource.Resource
	if q.Op.Kind != resource.Delete {
		whose = r
	}
	if err := q.settle(tx, whose); err != nil {
		return b, err
	}
	if r.Parent != nil && q.ID != "" {
		if err := q.settle(tx, r.Parent.Resource, q.ID); err != nil {
			return b, err
		}
	}
	// Lock order (docs/decisions.md): parent, record, the write's own rows.
	if r.Parent != nil && q.ID != "" {
		switch {
		case r.Parent.Resource.HasStatus():
			st, err := q.stateOf(tx, r.Parent.Resource, q.ID, q.locks())
			if err != nil {
				return b, err
			}
			b.parent = st
		case q.locks():
			if _, err := q.row(tx, r.Parent.Resource, q.ID, "", true); err != nil {
				return b, err
			}
		}
	}
	switch q.Op.Kind {
	case resource.Update, resource.Action, resource.Delete:
		id, parent := q.ID, ""
		if r.Parent != nil {
			id, parent = q.ChildID, q.ID
		}
		if id == "" {
			break
		}
		if q.locks() {
			if _, err := q.row(tx, r, id, parent, true); err != nil {
				return b, err
			}
		}
		rec, err := q.Records.Render(q.Ctx, tx, r, q.Workspace(), id, parent)
		if err != nil && !isNotFound(err) {
			return b, err
		}
		b.record = rec
	}
	return b, nil
}

// row reports whether record id of r is in the caller's workspace (a child
// of parent, for a sub-resource) and, with lock set, locks it until commit.
// NO KEY UPDATE, not FOR UPDATE: the latter also blocks writes whose foreign
// key points at the row, which could deadlock with this one.
func (q *Request) row(tx *ent.Tx, r *resource.Resource, id, parent string, lock bool) (bool, error) {
	query, args := "SELECT 1 FROM "+r.Table+" WHERE id = ? AND workspace_id = ?", []any{id, q.Workspace().ID}
	if r.Parent != nil {
		query, args = "SELECT 1 FROM "+r.Table+" WHERE id = ? AND "+r.Parent.FK+" = ?", []any{id, parent}
	}
	if lock {
		query += " FOR NO KEY UPDATE"
	}
	var one int
	err := queryRow(q, tx, query, args, &one)
	if isNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

func isNotFound(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Status == http.StatusNotFound
}

// stateOf reads a record's state in tx (zero when there is no record),
// locking its row until commit when lock is set.
func (q *Request) stateOf(tx *ent.Tx, r *resource.Resource, id string, lock bool) (state, error) {
	var st state
	query := "SELECT status, CAST(updated_at AS TEXT) FROM " + r.Table + " WHERE id = ? AND workspace_id = ?"
	if lock {
		query += " FOR UPDATE"
	}
	err := queryRow(q, tx, query, []any{id, q.Workspace().ID}, &st.status, &st.version)
	if isNoRows(err) {
		return state{}, nil
	}
	return st, err
}

// touched is another record a write changes (a shipment's order); status
// is its status before, made a record the write created.
type touched struct {
	r      *resource.Resource
	id     string
	status string
	made   bool
}

// touch notes, before changing it, another record the write changes, with
// the status it was read in: it gets <object>.<new status> or .updated.
func (q *Request) touch(tx *ent.Tx, r *resource.Resource, id, status string) error {
	q.touched = append(q.touched, touched{r: r, id: id, status: status})
	return q.settle(tx, r, id)
}

// made notes another record the write created: it gets <object>.created.
func (q *Request) made(r *resource.Resource, id string) {
	q.touched = append(q.touched, touched{r: r, id: id, made: true})
}

// queued is an event waiting for the end of its transaction.
type queued struct {
	q     *Request // its write, which hears of the deliveries
	e     *ent.Event
	c     Change
	eps   []ent.WebhookEndpoint // the endpoints enabled at its write
	later bool                  // eps are read as the events are written
}

// queue is a transaction's events, and on SQLite each workspace's next number.
type queue struct {
	events []*queued
	next   map[string]int64
}

var eventQueue = database.NewDeferred(writeEvents)

// settle reads now the waiting records among ids of r (all, with r nil):
// the caller is about to change them again.
func (q *Request) settle(tx *ent.Tx, r *resource.Resource, ids ...string) error {
	if !recordEvents {
		return nil
	}
	return readTouched(tx, eventQueue.In(q.DB, tx).waiting(r, ids...))
}

// waiting are the queued events whose touched records are not read yet,
// among ids of r (every one, with r nil; every id, with none).
func (qu *queue) waiting(r *resource.Resource, ids ...string) []*queued {
	var out []*queued
	for _, ev := range qu.events {
		if ev.c.later != nil && ev.c.Object == nil && (r == nil || ev.c.Resource == r && (len(ids) == 0 || slices.Contains(ids, ev.c.ID))) {
			out = append(out, ev)
		}
	}
	return out
}

// readTouched reads touched records, one query per workspace and resource,
// and types each event by its record's status.
func readTouched(tx *ent.Tx, events []*queued) error {
	type group struct {
		q   *Request
		r   *resource.Resource
		evs []*queued
	}
	var groups []*group
	for _, ev := range events {
		i := slices.IndexFunc(groups, func(g *group) bool {
			return g.r == ev.c.Resource && g.q.Workspace().ID == ev.q.Workspace().ID
		})
		if i < 0 {
			i = len(groups)
			groups = append(groups, &group{q: ev.q, r: ev.c.Resource})
		}
		groups[i].evs = append(groups[i].evs, ev)
	}
	for _, g := range groups {
		ids := make([]string, len(g.evs))
		for i, ev := range g.evs {
			ids[i] = ev.c.ID
		}
		recs, statuses, err := g.q.Records.RenderStatuses(context.WithoutCancel(g.q.Ctx), tx, g.r, g.q.Workspace(), ids)
		if err != nil {
			return err
		}
		for i, ev := range g.evs {
			if recs[i] == nil {
				return fmt.Errorf("writes: %s %s, touched in this transaction, is gone by its end", g.r.Singular, ev.c.ID)
			}
			t := ev.c.later
			typ := g.r.Object() + ".updated"
			switch {
			case t.made:
				typ = g.r.Object() + ".created"
			case g.r.HasStatus() && statuses[i] != t.status:
				typ = g.r.StateEvent(statuses[i])
			}
			ev.c.Object, ev.c.Type, ev.e.Type = recs[i], typ, typ
		}
	}
	return nil
}

// others are the events of the records a write touched, read at the end
// of its transaction.
func (q *Request) others() ([]Change, error) {
	var out []Change
	for _, t := range q.touched {
		declared := q.Op.Touches
		if t.made {
			declared = q.Op.Makes
		}
		if !slices.Contains(declared, t.r) {
			// Its events would be missing from the published types.
			return nil, fmt.Errorf("writes: %s %s changes %s, which its declaration's Makes or Touches does not list", q.Resource.Name, q.Op.Kind, t.r.Name)
		}
		out = append(out, Change{Resource: t.r, ID: t.id, later: &t})
	}
	return out, nil
}

// changes are the events of a write that answered a with res.
func (q *Request) changes(tx *ent.Tx, a Answer, res Result, b before) ([]Change, error) {
	others, err := q.others()
	if err != nil {
		return nil, err
	}
	if a.Changes != nil {
		return append(a.Changes, others...), nil
	}
	var out []Change
	if !a.Unchanged {
		c := Change{Type: q.Resource.EventType(q.Op, a.Status == http.StatusCreated), Resource: q.Resource, ID: a.ID, Object: res.Body}
		switch q.Op.Kind {
		case resource.Delete:
			c.ID, c.Object = q.ID, b.record
			if q.Resource.Parent != nil {
				c.ID = q.ChildID
			}
		case resource.Update, resource.Action:
			c.Previous = previousAttributes(b.record, res.Body)
		}
		out = append(out, c)
	}
	// A parent whose row the write moved (a payment's invoice) gets its
	// status event, or <parent>.updated.
	if p := q.Resource.Parent; p != nil && b.parent.status != "" {
		st, err := q.stateOf(tx, p.Resource, q.ID, false)
		if err != nil {
			return nil, err
		}
		typ := ""
		switch {
		case st.status == "":
		case st.status != b.parent.status:
			typ = p.Resource.StateEvent(st.status)
		case st.version != b.parent.version:
			typ = p.Resource.Object() + ".updated"
		}
		if typ != "" {
			rec, err := q.Records.Render(q.Ctx, tx, p.Resource, q.Workspace(), q.ID, "")
			if err != nil {
				return nil, err
			}
			out = append(out, Change{Type: typ, Resource: p.Resource, ID: q.ID, Object: rec})
		}
	}
	return append(out, others...), nil
}

// previousAttributes are the top-level fields of before whose values
// after changed, with their values before (updated_at aside: it always
// moves). Nil when there is no before.
func previousAttributes(before, after []byte) []byte {
	if before == nil || after == nil {
		return nil
	}
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return nil
	}
	prev := map[string]json.RawMessage{}
	for k, v := range b {
		if k != "updated_at" && !bytes.Equal(v, a[k]) {
			prev[k] = v
		}
	}
	out, _ := json.Marshal(prev)
	return out
}

// emit queues changes as events. On SQLite the one writer commits in
// order: the next number is read once per (shared) transaction and counted
// on in its queue. On PostgreSQL the insert numbers them from the
// transaction's id (sqlstore.InsertEvents), with no lock shared with any
// other writer; readers show only settled numbers (database.SettledSeq).
func (q *Request) emit(tx *ent.Tx, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	ws := q.Workspace().ID
	queue := eventQueue.In(q.DB, tx)
	var first int64
	if q.locks() && !q.registered {
		// Readers would not wait for it, and could page past its events.
		return fmt.Errorf("writes: events of a transaction not registered as their writer")
	}
	if !q.locks() {
		var ok bool
		if first, ok = queue.next[ws]; !ok {
			if err := queryRow(q, tx, "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE workspace_id = ?", []any{ws}, &first); err != nil {
				return err
			}
		}
		if queue.next == nil {
			queue.next = map[string]int64{}
		}
		queue.next[ws] = first + int64(len(changes))
	}
	actorType, actorID := "api_key", q.Principal.Key.ID
	switch {
	case q.System != "":
		actorType, actorID = "system", q.System
	case q.Principal.Admin != "":
		actorType, actorID = "admin", q.Principal.Admin
	}
	// PostgreSQL reads them with the events' insert (writeEvents), in this
	// transaction too: one round trip less.
	later := q.locks()
	var eps []ent.WebhookEndpoint
	if !later {
		var err error
		if eps, err = webhooks.Endpoints(q.Ctx, tx, ws); err != nil {
			return err
		}
	}
	now := time.Now().UTC()
	evs := make([]*queued, len(changes))
	for i, c := range changes {
		evs[i] = &queued{q: q, c: c, eps: eps, later: later, e: &ent.Event{ID: ids.At("evt", now), WorkspaceID: ws, CreatedAt: now, UpdatedAt: now,
			Seq: first + int64(i), Type: c.Type, ObjectType: c.Resource.Name, ObjectID: c.ID, RequestID: q.RequestID,
			ActorType: actorType, ActorID: actorID}}
	}
	queue.events = append(queue.events, evs...)
	return nil
}

// writeEvents writes a transaction's events, and their delivery jobs, just
// before it commits.
func writeEvents(tx *ent.Tx, queue *queue) error {
	if err := readTouched(tx, queue.waiting(nil)); err != nil {
		return err
	}
	all := queue.events
	if len(all) == 0 {
		return nil
	}
	ctx, db := context.WithoutCancel(all[0].q.Ctx), all[0].q.DB
	if db.Dialect == dialect.Postgres && len(all) > database.MaxEventsPerTx {
		return database.ErrTooManyEvents // their seqs would run into the next transaction's
	}
	rows := make([]*ent.Event, len(all))
	for i, ev := range all {
		rows[i], ev.e.Data = ev.e, string(ev.c.Object)
		if ev.c.Previous != nil {
			p := string(ev.c.Previous)
			ev.e.Previous = &p
		}
	}
	// The endpoints read later: a request's transaction writes one
	// workspace's events, whose endpoints its insert reads.
	later := map[string][]ent.WebhookEndpoint{}
	for _, ev := range all {
		if ev.later {
			later[ev.e.WorkspaceID] = nil
		}
	}
	endpointsOf := ""
	for ws := range later {
		if len(later) == 1 {
			endpointsOf = ws
			break
		}
		eps, err := webhooks.Endpoints(ctx, tx, ws)
		if err != nil {
			return err
		}
		later[ws] = eps
	}
	eps, err := sqlstore.InsertEvents(ctx, db, tx, rows, endpointsOf)
	if err != nil {
		return err
	}
	if endpointsOf != "" {
		later[endpointsOf] = eps
	}
	for _, ev := range all {
		if ev.later {
			ev.eps = later[ev.e.WorkspaceID]
		}
	}
	// Each write's delivery jobs, for the endpoints enabled at its write.
	for start := 0; start < len(all); {
		q, end := all[start].q, start+1
		for end < len(all) && all[end].q == q {
			end++
		}
		events := make([]*ent.Event, 0, end-start)
		for _, ev := range all[start:end] {
			events = append(events, ev.e)
		}
		n, err := webhooks.Enqueue(context.WithoutCancel(q.Ctx), tx, q.Workspace().ID, all[start].eps, events)
		if err != nil {
			return err
		}
		q.deliveries += n
		start = end
	}
	return nil
}
