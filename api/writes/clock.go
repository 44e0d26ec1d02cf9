package writes

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Some states follow the clock (Resource.Clock): an invoice past its due
// date becomes overdue, a promotion starts and ends by its dates. Moving
// records there is a write no request makes, and it is a write like the
// others: one transaction on the writer, one event per record moved with
// the record as GET shows it after and previous_attributes, and the
// webhook deliveries committed with them. The actor is {type: system, id:
// the job}.

// clockMove is one kind of such a move, with its arguments bound to a time.
type clockMove struct {
	r   *resource.Resource
	job string // the events' actor id
	// stale is the SQL condition (besides the workspace) selecting the
	// records the clock has overtaken; set is the SET clause moving them.
	stale     string
	staleArgs []any
	set       string
	setArgs   []any
}

// clockBatch bounds how many records one transaction moves, so a backlog
// never holds the writer long.
const clockBatch = 500

// run moves the stale records of workspace ws, a batch per transaction,
// and says how many moved.
func (m clockMove) run(ctx context.Context, db *database.DB, eng *records.Engine, ws string) (int64, error) {
	var w access.Workspace
	if err := db.ReadPool.QueryRowContext(ctx, db.Rebind("SELECT id, commerce_mode, commerce_module FROM workspaces WHERE id = ?"), ws).
		Scan(&w.ID, &w.CommerceMode, &w.CommerceModule); err != nil {
		return 0, err
	}
	var total int64
	for {
		n, err := m.batch(ctx, db, eng, w)
		total += int64(n)
		if err != nil || n < clockBatch {
			return total, err
		}
	}
}

// batch moves at most clockBatch records in one transaction. On
// PostgreSQL the rows are locked as they are picked, and a concurrent
// mover's pick re-checks the condition on the rows it waited for: each
// record moves, and is told of, once.
func (m clockMove) batch(ctx context.Context, db *database.DB, eng *records.Engine, w access.Workspace) (int, error) {
	q := &Request{Ctx: ctx, DB: db, Records: eng, Resource: m.r, System: m.job, Principal: &access.Principal{Workspace: w}}
	var changes []Change
	_, err := q.inTx(func(tx *ent.Tx) error {
		changes = changes[:0]
		pick := "SELECT id FROM " + m.r.Table + " WHERE workspace_id = ? AND (" + m.stale + ") ORDER BY id LIMIT ?"
		if q.locks() {
			pick += " FOR UPDATE"
		}
		ids, err := queryIDs(q, tx, pick, append(append([]any{w.ID}, m.staleArgs...), clockBatch))
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := q.settle(tx, m.r, ids...); err != nil {
			return err
		}
		ws := q.Workspace()
		before, err := eng.RenderMany(ctx, tx, m.r, ws, ids)
		if err != nil {
			return err
		}
		in := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
		args := append([]any{}, m.setArgs...)
		for _, id := range ids {
			args = append(args, id)
		}
		if _, err := tx.ExecContext(ctx, db.Rebind("UPDATE "+m.r.Table+" SET "+m.set+" WHERE id IN ("+in+")"), args...); err != nil {
			return err
		}
		after, err := eng.RenderMany(ctx, tx, m.r, ws, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if after[i] == nil {
				continue // out of the resource's scope: GET shows nothing to tell of
			}
			changes = append(changes, Change{Type: stateEvent(m.r, before[i], after[i]), Resource: m.r, ID: id,
				Object: after[i], Previous: previousAttributes(before[i], after[i])})
		}
		return nil
	}, func() Answer {
		return Answer{Status: http.StatusOK, Body: []byte{}, Changes: changes, Unchanged: len(changes) == 0}
	})
	return len(changes), err
}

// stateEvent is the type of the event of a record whose rendering moved
// from before to after: <object>.<status> when its status changed, else
// <object>.updated.
func stateEvent(r *resource.Resource, before, after []byte) string {
	var b, a struct{ Status string }
	_ = json.Unmarshal(before, &b)
	if json.Unmarshal(after, &a) == nil && a.Status != "" && a.Status != b.Status {
		return r.StateEvent(a.Status)
	}
	return r.Object() + ".updated"
}

// queryIDs reads one column of ids in tx.
func queryIDs(q *Request, tx *ent.Tx, query string, args []any) ([]string, error) {
	return database.QueryStrings(q.Ctx, tx, q.DB.Rebind(query), args...)
}
