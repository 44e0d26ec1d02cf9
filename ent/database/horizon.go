package database

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"entgo.io/ent/dialect"
)

// Events are numbered on PostgreSQL without a lock any two writers share:
// an event's seq is its writing transaction's id (xid8) shifted left by
// txSeqShift, plus its place among that transaction's events. Seq order is
// then transaction-id order, not commit order, so a reader only shows
// events below the horizon (SettledSeq): the seqs of transactions older
// than every one still running. No event can ever appear there later, so a
// consumer paging by seq never skips, repeats or reorders one.
//
// On SQLite the one writer commits in order and counts from MAX(seq).
const txSeqShift = 16

// MaxEventsPerTx is how many events one PostgreSQL transaction may write.
const MaxEventsPerTx = 1 << txSeqShift

// ErrTooManyEvents refuses a transaction writing more than MaxEventsPerTx events.
var ErrTooManyEvents = errors.New("database: a transaction writes more events than its seq range holds")

// querier is what both *sql.Tx and ent's Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// TxSeqBase is the first seq of the events PostgreSQL transaction tx
// writes: its transaction id (assigned now if it has none yet) shifted.
func TxSeqBase(ctx context.Context, tx querier) (int64, error) {
	rs, err := tx.QueryContext(ctx, "SELECT "+TxSeqSQL("0"))
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	var base int64
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return 0, err
		}
		return 0, sql.ErrNoRows
	}
	if err := rs.Scan(&base); err != nil {
		return 0, err
	}
	return base, rs.Err()
}

// TxSeqSQL is the SQL of the seq of the event at place (an SQL
// expression, below MaxEventsPerTx) among its PostgreSQL transaction's.
func TxSeqSQL(place string) string {
	return fmt.Sprintf("((pg_current_xact_id()::text::bigint << %d) + %s)", txSeqShift, place)
}

// DefaultSettleWait is DB.SettleWait's default: longer than any write
// transaction should last.
const DefaultSettleWait = 10 * time.Second

// EventsWait is how long a reader of events waits (DB.SettleWait).
func (d *DB) EventsWait() time.Duration { return cmp.Or(d.SettleWait, DefaultSettleWait) }

// SettledSeq is the bound below which every event's seq is final: all the
// transactions that could write one there have ended. On PostgreSQL it
// first waits (up to wait) for the transactions running when it was
// called, so a caller sees every event committed before it asked (its own
// writes' too); past wait it answers the horizon as it stands, which is
// still final, only older. On SQLite every committed event is final.
func (d *DB) SettledSeq(ctx context.Context, wait time.Duration) (int64, error) {
	if d.Dialect != dialect.Postgres {
		return math.MaxInt64, nil
	}
	deadline := time.Now().Add(wait)
	target := int64(-1)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		var xmin, xmax int64
		if err := d.ReadPool.QueryRowContext(ctx, "SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint FROM pg_current_snapshot() s").
			Scan(&xmin, &xmax); err != nil {
			return 0, err
		}
		if target < 0 {
			target = xmax
		}
		if xmin >= target || !time.Now().Add(pause).Before(deadline) {
			return xmin << txSeqShift, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}
