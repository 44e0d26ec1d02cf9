package writes

import (
	"errors"
	"net/http"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// errRetry asks inTx to run the transaction again: a concurrent writer won a
// race on a unique key and a second attempt will see its row.
var errRetry = errors.New("writes: retry the transaction")

// inTx runs fn in one transaction on the writer, so a failed write leaves
// nothing behind. A lost race (a unique key a concurrent writer filled, a
// PostgreSQL deadlock or serialization failure; only possible where writers
// run concurrently) or fn returning errRetry runs fn again from the start,
// three runs at most: the rerun sees the winner's row and answers by it.
func (q *Request) inTx(fn func(tx *ent.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := q.tryTx(fn)
		if err == nil {
			return nil
		}
		retry := errors.Is(err, errRetry) || ent.IsConstraintError(err) || lostRace(err)
		if !retry || attempt >= 2 {
			// As is: api/errors.go maps a database's refusal (a constraint,
			// a value it cannot hold) to 400/409 and anything else to 500.
			return err
		}
	}
}

func (q *Request) tryTx(fn func(tx *ent.Tx) error) (err error) {
	tx, err := q.DB.Ent.Tx(q.Ctx)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback()
			panic(r)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return tx.Commit()
}

// locks reports whether row locks are needed: PostgreSQL runs writers
// concurrently; SQLite has one writer connection that takes its lock at BEGIN
// (_txlock=immediate), so every write transaction is already serialized.
func (q *Request) locks() bool { return q.DB.Dialect == dialect.Postgres }

// answer renders the written record as reads do, with its status.
func (q *Request) answer(status int, r *resource.Resource, id, parentID string) (Result, error) {
	b, err := q.Record(r, id, parentID)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: status, Body: b}, nil
}

// created is 201 for a new record and 200 for one that existed (an upsert
// match, a repeated payment id).
func created(isNew bool) int {
	if isNew {
		return http.StatusCreated
	}
	return http.StatusOK
}

// lostRace reports database errors that a fresh run of the transaction
// resolves: a unique index that a concurrent writer filled a moment after
// this one checked it, and PostgreSQL's deadlock and serialization failures
// (row locks taken in different orders by two writers).
func lostRace(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "23505", "40001", "40P01": // unique_violation, serialization_failure, deadlock_detected
			return true
		}
	}
	return sqlgraph.IsUniqueConstraintError(err)
}

// lockable is an ent query that can take row locks.
type lockable[Q any] interface {
	ForUpdate(opts ...entsql.LockOption) Q
}

// forUpdate locks the selected rows until the transaction ends where
// writers run concurrently (PostgreSQL); SQLite has no row locks and needs
// none, its single writer serializes.
func forUpdate[Q lockable[Q]](q *Request, query Q) Q {
	if q.locks() {
		return query.ForUpdate()
	}
	return query
}
