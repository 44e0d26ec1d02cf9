package writes

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// attempts bounds how often a transaction that lost a race is run again.
const attempts = 8

// inTx runs fn in one transaction on the writer and commits it. A run that
// lost a race to a concurrent writer (a unique index it checked a moment
// before, a PostgreSQL deadlock or serialization failure) is run again from
// the start: its checks then see the winner's row and answer accordingly
// (409 duplicate, an update instead of an insert). On SQLite the single
// writer connection with BEGIN IMMEDIATE already serializes writers.
func inTx(ctx context.Context, db *database.DB, fn func(tx *ent.Tx) error) error {
	var err error
	for range attempts {
		err = runTx(ctx, db, fn)
		if err == nil || !lostRace(err) {
			return err
		}
	}
	return apierr.Internal(fmt.Errorf("transaction kept losing races: %w", err))
}

func runTx(ctx context.Context, db *database.DB, fn func(tx *ent.Tx) error) (err error) {
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		return apierr.Unavailable(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// lostRace reports errors that a fresh run of the transaction resolves.
func lostRace(err error) bool {
	if _, ok := apierr.As(err); ok {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "23505", "40001", "40P01": // unique_violation, serialization_failure, deadlock_detected
			return true
		}
	}
	return sqlgraph.IsUniqueConstraintError(err)
}

// dbErr wraps an unexpected database error as a 500 (unless it is a lost
// race, which inTx retries and so must stay recognizable).
func dbErr(err error) error {
	if err == nil || lostRace(err) {
		return err
	}
	if _, ok := apierr.As(err); ok {
		return err
	}
	return apierr.Internal(err)
}

// lockable is an ent query that can take row locks.
type lockable[Q any] interface {
	ForUpdate(opts ...entsql.LockOption) Q
}

// forUpdate locks the selected rows until the transaction ends on
// PostgreSQL. SQLite has no row locks and needs none: its writer is single.
func forUpdate[Q lockable[Q]](db *database.DB, q Q) Q {
	if db.Dialect == dialect.Postgres {
		return q.ForUpdate()
	}
	return q
}
