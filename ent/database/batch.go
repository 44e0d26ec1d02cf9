package database

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ledgerbase/ledgerbase/ent"
)

// Group commit. On SQLite, writes that queue for the one writer while
// another runs share one transaction, so the pages they all change are
// written once: each runs in a savepoint of its own (its failure undoes only
// its changes), the last of the queue commits for all, and none answers
// before that commit.

// ErrBatchLost is returned to a write whose changes were undone because
// another write in the same transaction broke it (an I/O error, a full
// disk): nothing of it was committed and it can run again.
var ErrBatchLost = errors.New("database: the shared transaction was rolled back by another write; run again")

// lostBatch is ErrBatchLost for a transaction lost to cause, which stays
// unwrappable: FaultOf sees the full disk that lost it.
func lostBatch(cause error) error { return fmt.Errorf("%w (%w)", ErrBatchLost, cause) }

// maxBatch bounds a transaction's writes, so others waiting for the writer
// connection (the webhook worker, retention) wait for at most that many.
const maxBatch = 128

type batcher struct {
	ent     *ent.Client
	ends    *ends         // the DB's (Deferred)
	turn    chan struct{} // holds a token while a write runs in the transaction
	waiting atomic.Int32  // writes queued for turn
	cur     *batch        // the open transaction, nil between them
}

// batch is one shared transaction.
type batch struct {
	tx      *ent.Tx
	lost    error // set when it can no longer commit (see member)
	err     error // its outcome, once done is closed
	done    chan struct{}
	pending int // writes in it that ran, successful or not, for maxBatch
}

// InTx runs fn in a transaction on the writer and commits what fn did
// unless fn returns an error; it returns once that is committed or undone.
// On SQLite the transaction may be shared with writes queued alongside (see
// above); on PostgreSQL each call has its own.
func (d *DB) InTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	if d.batch != nil {
		return d.batch.do(ctx, fn)
	}
	tx, err := d.Writer.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback()
			_ = d.ends.end(tx, false)
			panic(r)
		}
	}()
	if err := fn(tx); err != nil {
		_ = d.ends.end(tx, false)
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	if err := d.ends.end(tx, true); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

func (b *batcher) do(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	// The wait is not cut short by ctx: a write ahead may have left the
	// transaction open for this one to commit. Turns are short.
	b.waiting.Add(1)
	b.turn <- struct{}{}
	b.waiting.Add(-1)
	if err := ctx.Err(); err != nil {
		if b.cur != nil && b.waiting.Load() == 0 {
			b.finish(b.cur)
		}
		<-b.turn
		return err
	}
	if b.cur == nil {
		// The transaction outlives the request that opens it, so it is not
		// bound to that request's context.
		tx, err := b.ent.Tx(context.Background())
		if err != nil {
			<-b.turn
			return err
		}
		b.cur = &batch{tx: tx, done: make(chan struct{})}
	}
	cur := b.cur
	cur.pending++
	panicked, ferr := b.member(cur, fn)
	lost := cur.lost != nil // read while holding the turn
	if lost || b.waiting.Load() == 0 || cur.pending >= maxBatch {
		b.finish(cur)
	}
	<-b.turn
	if panicked != nil {
		panic(panicked)
	}
	if ferr != nil {
		return ferr // its own changes were undone; nothing to wait for
	}
	if lost {
		return ErrBatchLost
	}
	<-cur.done
	return cur.err
}

// member runs fn inside a savepoint of cur. When the savepoint cannot be
// released or rolled back to, SQLite has rolled the whole transaction back
// (it does so on some errors: a full disk, an I/O error, an interrupt), and
// cur is lost: nothing in it commits, and every write in it hears so.
func (b *batcher) member(cur *batch, fn func(tx *ent.Tx) error) (panicked any, ferr error) {
	ctx := context.Background()
	if _, err := cur.tx.ExecContext(ctx, "SAVEPOINT write"); err != nil {
		cur.lost = err
		return nil, lostBatch(err)
	}
	func() {
		defer func() { panicked = recover() }()
		ferr = fn(cur.tx)
	}()
	end := "RELEASE write"
	if ferr != nil || panicked != nil {
		end = "ROLLBACK TO write; RELEASE write"
	}
	if _, err := cur.tx.ExecContext(ctx, end); err != nil {
		cur.lost = fmt.Errorf("database: end of a write's savepoint: %w", err)
	}
	return panicked, ferr
}

// finish commits cur, or rolls it back when it is lost, and wakes the
// writes waiting for it. The caller holds the turn. A transaction whose
// writes were all refused commits nothing: each rolled its savepoint back.
func (b *batcher) finish(cur *batch) {
	b.cur = nil
	if cur.lost == nil {
		if err := b.ends.end(cur.tx, true); err != nil {
			cur.lost = fmt.Errorf("database: the work left to the end of the transaction: %w", err)
		}
	}
	if cur.lost != nil {
		_ = b.ends.end(cur.tx, false)
		_ = cur.tx.Rollback() // SQLite may have rolled it back already
		cur.err = lostBatch(cur.lost)
	} else {
		cur.err = cur.tx.Commit()
	}
	close(cur.done)
}
