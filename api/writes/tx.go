package writes

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// errRetry asks inTx to run the transaction again: a concurrent writer won a
// race on a unique key and a second attempt will see its row.
var errRetry = errors.New("writes: retry the transaction")

// Answer is what a write's transaction answers: a status and the record to
// show, or a Body the operation built (a bulk write's per-row answer).
type Answer struct {
	Status       int
	Resource     *resource.Resource
	ID, ParentID string
	Body         []byte
	// Unchanged: the write left the record as it was (a repeated payment id): no event.
	Unchanged bool
	// Changes replace the declared event (a bulk upsert's records).
	Changes []Change
}

// inTx runs do in one transaction and answers with the record read back in
// it, so the answer and its Idempotency-Key commit with the write or not at
// all. A lost race reruns do, whose rerun answers by the winner's row: a
// filled unique key, a broken shared transaction or errRetry three runs at
// most; a PostgreSQL deadlock or serialization failure after a random pause,
// for as long as retryBudget lasts.
func (q *Request) inTx(do func(tx *ent.Tx) error, then func() Answer) (Result, error) {
	return retrying(q.Ctx, func() (Result, error) { return q.tryTx(do, then) })
}

// retrying runs try until it succeeds or fails in a way a rerun does not
// mend (inTx).
func retrying(ctx context.Context, try func() (Result, error)) (Result, error) {
	start := time.Now()
	for attempt, conflicts := 0, 0; ; attempt++ {
		res, err := try()
		if err == nil {
			return res, nil
		}
		if errors.Is(err, idempotency.ErrTaken) {
			return Result{}, err // the caller replays the request that took the key
		}
		if conflict(err) {
			// The pause lets the winner commit before this one locks again.
			conflicts++
			pause := retryPause(conflicts)
			if time.Since(start)+pause < retryBudget {
				if !sleep(ctx, pause) {
					return Result{}, err
				}
				continue
			}
			slog.Warn("writes: a transaction kept losing to concurrent writers", "attempts", attempt+1, "error", err)
			return Result{}, err
		}
		retry := errors.Is(err, errRetry) || errors.Is(err, database.ErrBatchLost) || ent.IsConstraintError(err) || lostRace(err)
		if !retry || attempt-conflicts >= 2 {
			// As is: api/errors.go maps a database's refusal (a constraint,
			// a value it cannot hold) to 400/409 and anything else to 500.
			return Result{}, err
		}
	}
}

// retryBudget bounds the reruns of a write that lost to concurrent writers.
const retryBudget = 3 * time.Second

// retryPause is a random pause before the nth rerun, growing with n, so
// writers that collided do not collide again in step.
func retryPause(n int) time.Duration {
	ceiling := min(2*time.Millisecond<<min(n-1, 6), 100*time.Millisecond)
	return time.Duration(rand.Int64N(int64(ceiling))) + time.Millisecond/4
}

// sleep waits d unless ctx ends first; it reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (q *Request) tryTx(do func(tx *ent.Tx) error, then func() Answer) (res Result, err error) {
	inTx := q.DB.InTx
	registers := recordEvents && q.locks()
	if registers {
		// Registered as it begins, before it has an id (database/horizon.go).
		inTx = func(ctx context.Context, fn func(tx *ent.Tx) error) error {
			return q.DB.InEventWriterTx(ctx, q.Workspace().ID, fn)
		}
	}
	err = inTx(q.Ctx, func(tx *ent.Tx) error {
		q.registered = registers
		var err error
		res, err = q.run(tx, do, then)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	if q.deliveries > 0 || q.mails > 0 {
		webhooks.Wake() // the first attempt need not wait for the next poll
	}
	return res, nil
}

// run is the transaction's work: the key's check, the operation, its
// answer, its events, and the key kept with it.
func (q *Request) run(tx *ent.Tx, do func(tx *ent.Tx) error, then func() Answer) (Result, error) {
	if q.Idem != nil {
		if err := q.Idem.Begin(q.Ctx, tx); err != nil {
			return Result{}, err
		}
	}
	q.touched = q.touched[:0] // a rerun of the transaction starts over
	q.deliveries, q.mails = 0, 0
	var b before
	var err error
	if recordEvents {
		if b, err = q.watch(tx); err != nil {
			return Result{}, err
		}
	}
	if err := do(tx); err != nil {
		return Result{}, err
	}
	a := then()
	res := Result{Status: a.Status, Body: a.Body}
	if a.Body == nil {
		if res.Body, err = q.Records.Render(q.Ctx, tx, a.Resource, q.Workspace(), a.ID, a.ParentID); err != nil {
			return Result{}, err
		}
	}
	if q.Idem != nil {
		if err := q.Idem.Keep(q.Ctx, tx, res.Status, res.Body); err != nil {
			return Result{}, err
		}
	}
	if recordEvents {
		// Last: nothing after the events may fail and undo the write without them.
		changes, err := q.changes(tx, a, res, b)
		if err != nil {
			return Result{}, err
		}
		if err := q.emit(tx, changes); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// MoveStale is a move of the clock (api/clock) by the job q.System: at most
// limit records of q.Resource that stale (SQL, with args) selects move to
// status to in one transaction, each with its event. Rows are locked as
// picked, so each record moves, and is told of, once. It says how many moved.
func (q *Request) MoveStale(to, stale string, args []any, at time.Time, limit int) (int, error) {
	r, ws := q.Resource, q.Workspace()
	var changes []Change
	_, err := q.inTx(func(tx *ent.Tx) error {
		changes = changes[:0]
		pick := "SELECT id FROM " + r.Table + " WHERE workspace_id = ? AND (" + stale + ") ORDER BY id LIMIT ?"
		if q.locks() {
			pick += " FOR UPDATE"
		}
		ids, err := database.QueryStrings(q.Ctx, tx, q.DB.Rebind(pick), append(append([]any{ws.ID}, args...), limit)...)
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := q.settle(tx, r, ids...); err != nil {
			return err
		}
		before, err := q.Records.RenderMany(q.Ctx, tx, r, ws, ids)
		if err != nil {
			return err
		}
		if err := sqlstore.SetStatus(q.Ctx, q.DB, tx, r.Table, to, at, ids...); err != nil {
			return err
		}
		after, err := q.Records.RenderMany(q.Ctx, tx, r, ws, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if after[i] != nil { // nil: out of the resource's scope, GET shows nothing to tell of
				changes = append(changes, Change{Type: r.StateEvent(to), Resource: r, ID: id, Object: after[i],
					Previous: previousAttributes(before[i], after[i])})
			}
		}
		return nil
	}, func() Answer {
		return Answer{Status: http.StatusOK, Body: []byte{}, Changes: changes, Unchanged: len(changes) == 0}
	})
	return len(changes), err
}

// locks reports whether row locks are needed: PostgreSQL runs writers
// concurrently; SQLite has one writer connection that takes its lock at BEGIN
// (_txlock=immediate), so every write transaction is already serialized.
func (q *Request) locks() bool { return q.DB.Dialect == dialect.Postgres }

// record is the Answer of a write of record id of r.
func record(status int, r *resource.Resource, id, parentID string) Answer {
	return Answer{Status: status, Resource: r, ID: id, ParentID: parentID}
}

// repeated marks an answer that matched a record the write left as it was.
func repeated(a Answer, unchanged bool) Answer {
	a.Unchanged = unchanged
	return a
}

// created is 201 for a new record and 200 for one that existed (an upsert
// match, a repeated payment id).
func created(isNew bool) int {
	if isNew {
		return http.StatusCreated
	}
	return http.StatusOK
}

// lostRace reports database errors a rerun resolves: a unique index a
// concurrent writer filled after this one checked it, and conflicts.
func lostRace(err error) bool {
	return conflict(err) || pgCode(err) == "23505" || sqlgraph.IsUniqueConstraintError(err) // unique_violation
}

// conflict reports PostgreSQL's deadlock and serialization failures.
func conflict(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	}
	return false
}

func pgCode(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

// lockable is an ent query that can take row locks.
type lockable[Q any] interface {
	ForUpdate(opts ...entsql.LockOption) Q
}

// forUpdate locks the selected rows until commit where writers run
// concurrently (PostgreSQL); SQLite's single writer needs none.
func forUpdate[Q lockable[Q]](q *Request, query Q) Q {
	if q.locks() {
		return query.ForUpdate()
	}
	return query
}
