package writes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// Every committed write appends its events in its own transaction (see
// run): an event exists exactly when its change does. The types follow
// from the declarations (resource.EventType); data.object is the record as
// the write answers it, which is what GET shows right after.

// Change is one event an operation's transaction writes. Operations that
// change several records at once (a bulk upsert) list theirs in
// Answer.Changes; every other write gets its event from its declaration.
type Change struct {
	Type     string
	Resource *resource.Resource // whose read grant shows the event
	ID       string
	Object   []byte
	Previous []byte // previous_attributes, on updates
}

// before is what a write's events need from before the change.
type before struct {
	record []byte // the record an update, action or delete changes
	parent state  // a sub-resource's parent (the invoice a payment is for)
}

// state is what tells whether a write changed a record besides its own:
// its status, and its updated_at, which every change of its row moves.
type state struct{ status, version string }

// watch reads, in the write's transaction and before the change, what its
// events compare with. Where writers run side by side it reads under the
// rows' locks: a parent's state first (a parent with a status, as
// sub-resource writes lock it first), then the record. A change another
// write commits before this one's own lock must not read as this write's
// (in previous_attributes, or as the parent's event).
func (q *Request) watch(tx *ent.Tx) (before, error) {
	var b before
	r := q.Resource
	if r.Parent != nil && r.Parent.Resource.HasStatus() && q.ID != "" {
		st, err := q.stateOf(tx, r.Parent.Resource, q.ID, q.locks())
		if err != nil {
			return b, err
		}
		b.parent = st
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
			if err := q.lock(tx, r, id, parent); err != nil {
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

// lock takes the row of record id of r (a child of parent, for a
// sub-resource) until commit; no row is no lock, and the write answers 404.
// It is taken before the write's own locks, so it is the weaker NO KEY
// UPDATE, which an UPDATE that keeps the row's key takes anyway: FOR UPDATE
// would also block a concurrent write whose foreign key points at this row
// (a category moved under it), which may hold a lock this write waits for
// next (the category tree's), and PostgreSQL would break the deadlock by
// failing one of them.
func (q *Request) lock(tx *ent.Tx, r *resource.Resource, id, parent string) error {
	query, args := "SELECT 1 FROM "+r.Table+" WHERE id = ? AND workspace_id = ? FOR NO KEY UPDATE", []any{id, q.Workspace().ID}
	if r.Parent != nil {
		query, args = "SELECT 1 FROM "+r.Table+" WHERE id = ? AND "+r.Parent.FK+" = ? FOR NO KEY UPDATE", []any{id, parent}
	}
	var one int
	if err := queryRow(q, tx, query, args, &one); err != nil && !isNoRows(err) {
		return err
	}
	return nil
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

// touched is another record a write changes besides its own (the invoice
// a credit note is applied to, the order a shipment ships); status is its
// status before, and made tells a record the write created.
type touched struct {
	r      *resource.Resource
	id     string
	status string
	made   bool
}

// touch notes, before changing it, another record the write changes, with
// the status the write read it in (its lock or its load): it gets its own
// event, <object>.<new status> when its status moved, else <object>.updated.
func (q *Request) touch(r *resource.Resource, id, status string) {
	q.touched = append(q.touched, touched{r: r, id: id, status: status})
}

// made notes another record the write created: it gets <object>.created.
func (q *Request) made(r *resource.Resource, id string) {
	q.touched = append(q.touched, touched{r: r, id: id, made: true})
}

// others are the events of the records a write touched.
func (q *Request) others(tx *ent.Tx) ([]Change, error) {
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
		rec, status, err := q.Records.RenderStatus(q.Ctx, tx, t.r, q.Workspace(), t.id)
		if err != nil {
			return nil, err
		}
		typ := t.r.Object() + ".updated"
		switch {
		case t.made:
			typ = t.r.Object() + ".created"
		case t.r.HasStatus() && status != t.status:
			typ = t.r.StateEvent(status)
		}
		out = append(out, Change{Type: typ, Resource: t.r, ID: t.id, Object: rec})
	}
	return out, nil
}

// changes are the events of a write that answered a with res.
func (q *Request) changes(tx *ent.Tx, a Answer, res Result, b before) ([]Change, error) {
	others, err := q.others(tx)
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
	// The parent changes with its sub-resource when the write moved its row
	// (a payment moves its invoice's balance): its status event when its
	// status moved, else <parent>.updated.
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

// insertEvents appends n events (ent/schema/events.go) in one statement.
func insertEvents(n int) string {
	return "INSERT INTO events (id, workspace_id, created_at, updated_at, seq, type, object_type, object_id, data, previous, " +
		"request_id, actor_type, actor_id) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}

// eventsPerInsert bounds one statement's events (13 arguments each) well
// below both databases' limits on arguments.
const eventsPerInsert = 64

// nextSeq is each workspace's next event number in the open SQLite
// transaction.
var nextSeq database.TxMemo[int64]

// emit appends changes as events. On PostgreSQL their numbers come from the
// workspace's "events" counter, whose row stays locked until commit: a
// workspace's events commit in the order of their numbers, so a consumer
// paging by them never skips one that commits late. SQLite's single writer
// gives that order by itself.
func (q *Request) emit(tx *ent.Tx, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	ws := q.Workspace().ID
	var first int64
	if q.locks() {
		var err error
		if first, err = reserve(q.Ctx, tx, ws, "events", int64(len(changes))); err != nil {
			return err
		}
	} else {
		// SQLite's one writer already runs writes one at a time, in commit
		// order: the next number is the last one plus one, read once per
		// transaction (group commit shares one among queued writes). A
		// write undone by its savepoint leaves a gap, which paging by
		// number does not mind.
		var ok bool
		if first, ok = nextSeq.Get(q.DB, tx, ws); !ok {
			if err := queryRow(q, tx, "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE workspace_id = ?", []any{ws}, &first); err != nil {
				return err
			}
		}
		nextSeq.Put(q.DB, tx, ws, first+int64(len(changes)))
	}
	actorType, actorID := "api_key", q.Principal.Key.ID
	switch {
	case q.System != "":
		actorType, actorID = "system", q.System
	case q.Principal.Admin != "":
		actorType, actorID = "admin", q.Principal.Admin
	}
	// A write's events go in one statement rather than ent's builder: its
	// SQL depends only on how many there are, so the driver's statement
	// cache answers it.
	now := time.Now().UTC()
	events := make([]*ent.Event, len(changes))
	for i, c := range changes {
		events[i] = &ent.Event{ID: ids.At("evt", now), WorkspaceID: ws, CreatedAt: now, UpdatedAt: now, Seq: first + int64(i),
			Type: c.Type, ObjectType: c.Resource.Name, ObjectID: c.ID, RequestID: q.RequestID, ActorType: actorType, ActorID: actorID}
	}
	for start := 0; start < len(changes); start += eventsPerInsert {
		end := min(start+eventsPerInsert, len(changes))
		args := make([]any, 0, 13*(end-start))
		for i, c := range changes[start:end] {
			e := events[start+i]
			var previous any
			if c.Previous != nil {
				previous = string(c.Previous)
			}
			args = append(args, e.ID, ws, now, now, e.Seq, e.Type, e.ObjectType, e.ObjectID, string(c.Object), previous, e.RequestID, actorType, actorID)
		}
		if _, err := tx.ExecContext(q.Ctx, q.DB.Rebind(insertEvents(end-start)), args...); err != nil {
			return err
		}
	}
	// The endpoints' delivery jobs commit with the events (webhooks.Enqueue).
	n, err := webhooks.Enqueue(q.Ctx, q.DB, tx, ws, events)
	q.deliveries += n
	return err
}
