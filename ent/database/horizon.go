package database

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"entgo.io/ent/dialect"
)

// Events are numbered on PostgreSQL without a lock any two writers wait
// for: an event's seq is its writing transaction's id (xid8) shifted left
// by txSeqShift, plus its place among that transaction's events. Seq order
// is then transaction-id order, not commit order, so a reader only shows
// events below the horizon (SettledSeq): the seqs of event writers older
// than every one still running. No event can ever appear there later, so a
// consumer paging by seq never skips, repeats or reorders one.
//
// Event writers say so before they have a transaction id
// (RegisterEventWriter): a shared advisory lock, which no writer waits
// for, keyed by workspace. The horizon is the oldest id among the
// registered transactions still running, read from pg_locks, so a long
// transaction that writes no events (a seed, a CREATE INDEX) holds no
// event back, nor does one in another database.
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

// eventLockClass is the advisory lock class of event writers; the key
// within it is the workspace's hash.
const eventLockClass = 0x1b_e7

// workspaceKey is a workspace's advisory lock key (collisions only make a
// reader wait for another workspace's writers too).
func workspaceKey(ws string) int32 {
	h := fnv.New32a()
	h.Write([]byte(ws))
	return int32(h.Sum32() & 0x7fffffff)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// RegisterEventWriter marks PostgreSQL transaction tx as one that may
// write events of workspace ws. It must come before the transaction has
// an id: before its first write or row lock.
func RegisterEventWriter(ctx context.Context, tx execer, ws string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock_shared($1, $2)", eventLockClass, workspaceKey(ws))
	return err
}

// seriesLockClass is the advisory lock class of numbering series apart
// (api/numbering); the key within it is the workspace's and series' hash.
const seriesLockClass = 0x1b_e8

// LockSeries takes, until tx ends, workspace ws's lock on numbering series
// name: shared by the writers that take numbers from it, or alone for one
// that stores a number of its own (PostgreSQL).
func LockSeries(ctx context.Context, tx execer, ws, name string, shared bool) error {
	fn := "pg_advisory_xact_lock"
	if shared {
		fn += "_shared"
	}
	_, err := tx.ExecContext(ctx, "SELECT "+fn+"($1, $2)", seriesLockClass, workspaceKey(ws+"\x00"+name))
	return err
}

// DefaultSettleWait is DB.SettleWait's default: longer than any write
// transaction should last.
const DefaultSettleWait = 10 * time.Second

// EventsWait is how long a reader of events waits (DB.SettleWait).
func (d *DB) EventsWait() time.Duration { return cmp.Or(d.SettleWait, DefaultSettleWait) }

// horizonSQL reads, at once, the next transaction id and the oldest id of
// the registered event writers still running (of one workspace's key, or
// of all with NULL). A writer without an id yet gets one above the first.
const horizonSQL = `WITH l AS MATERIALIZED (SELECT locktype, database, classid, objid, objsubid, virtualtransaction, transactionid, granted FROM pg_locks)
SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
	(SELECT min(t.transactionid::text::bigint) FROM l a JOIN l t ON t.virtualtransaction = a.virtualtransaction AND t.locktype = 'transactionid'
	WHERE a.locktype = 'advisory' AND a.granted AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND a.classid = $1 AND a.objsubid = 2 AND ($2::bigint IS NULL OR a.objid::bigint = $2::bigint))`

// SettledSeq is the bound below which every event's seq of workspace ws
// (of every workspace, with ws empty) is final: no registered writer that
// could write one there still runs. On PostgreSQL it first waits (up to
// wait) for the writers running when it was called, so a caller sees every
// event committed before it asked (its own writes' too); past wait it
// answers the horizon as it stands, which is still final, only older. On
// SQLite every committed event is final.
func (d *DB) SettledSeq(ctx context.Context, ws string, wait time.Duration) (int64, error) {
	if d.Dialect != dialect.Postgres {
		return math.MaxInt64, nil
	}
	var key any
	if ws != "" {
		key = int64(workspaceKey(ws))
	}
	deadline := time.Now().Add(wait)
	target := int64(-1)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		var next int64
		var oldest sql.NullInt64
		if err := d.ReadPool.QueryRowContext(ctx, horizonSQL, eventLockClass, key).Scan(&next, &oldest); err != nil {
			return 0, err
		}
		horizon := next
		if oldest.Valid {
			horizon = min(horizon, fullXid(oldest.Int64, next))
		}
		if target < 0 {
			target = next
		}
		if horizon >= target || !time.Now().Add(pause).Before(deadline) {
			return horizon << txSeqShift, nil
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

// fullXid is the 64-bit id of a running transaction's 32-bit xid, given
// next, the next 64-bit id: the latest one with those low bits, not after next.
func fullXid(xid, next int64) int64 {
	full := next&^0xffffffff | xid&0xffffffff
	if full > next {
		full -= 1 << 32
	}
	return full
}
