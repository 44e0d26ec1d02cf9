package database_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// inOrder runs write(0) first and, once it holds the writer's turn (it
// calls held), every other write(i) concurrently.
func inOrder(n int, write func(i int, held func())) {
	var wg sync.WaitGroup
	first := make(chan struct{})
	wg.Add(n)
	go func() {
		defer wg.Done()
		write(0, func() { close(first) })
	}()
	<-first
	for i := 1; i < n; i++ {
		go func() {
			defer wg.Done()
			write(i, func() {})
		}()
	}
	wg.Wait()
}

// holdUntilQueued is a write that keeps the writer's turn until n more
// writes queue behind it, so they run in its transaction.
func holdUntilQueued(t *testing.T, db *database.DB, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); db.QueuedWrites() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("only %d writes queued, want %d", db.QueuedWrites(), n)
			return
		}
	}
}

func exists(t *testing.T, db *database.DB, name string) bool {
	t.Helper()
	var n int
	if err := db.ReadPool.QueryRow("SELECT COUNT(*) FROM workspaces WHERE name = ?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// Writes queued for SQLite's writer share its transaction, each in a
// savepoint: a refused one leaves nothing, and each that succeeded is
// committed (seen by another connection) when InTx returns.
func TestQueuedWritesShareATransaction(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	const writers = 40
	var mu sync.Mutex
	errs, shared := map[string]error{}, 0
	inOrder(writers, func(i int, held func()) {
		name := fmt.Sprintf("w%02d", i)
		err := db.InTx(ctx, func(tx *ent.Tx) error {
			if i == 0 {
				held()
				holdUntilQueued(t, db, writers-1)
			}
			if err := tx.Workspace.Create().SetName(name).SetPlan("starter").Exec(ctx); err != nil {
				return err
			}
			// Rows written before this one but not yet committed.
			inTx, err := tx.Workspace.Query().Count(ctx)
			if err != nil {
				return err
			}
			var committed int
			if err := db.ReadPool.QueryRow("SELECT COUNT(*) FROM workspaces").Scan(&committed); err != nil {
				return err
			}
			if inTx > committed+1 {
				mu.Lock()
				shared++
				mu.Unlock()
			}
			if i%4 == 1 {
				return errors.New("refused")
			}
			return nil
		})
		if err == nil && !exists(t, db, name) {
			t.Errorf("%s: InTx returned before its write was committed", name)
		}
		mu.Lock()
		errs[name] = err
		mu.Unlock()
	})
	for name, err := range errs {
		var i int
		fmt.Sscanf(name, "w%d", &i)
		switch {
		case i%4 == 1 && (err == nil || err.Error() != "refused"):
			t.Errorf("%s: got %v, want its own refusal", name, err)
		case i%4 != 1 && err != nil:
			t.Errorf("%s: %v", name, err)
		}
		if got, want := exists(t, db, name), i%4 != 1; got != want {
			t.Errorf("%s: stored %v, want %v", name, got, want)
		}
	}
	if shared == 0 {
		t.Error("no write saw another's uncommitted row: the queued writes did not share a transaction")
	}
}

// When SQLite rolls the shared transaction back under a write (as it does
// on an I/O error or a full disk), every write in it hears ErrBatchLost and
// none of them is stored, and the writes after it start a new transaction.
func TestALostTransactionAcknowledgesNothing(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	const writers = 8
	errs := make([]error, writers)
	inOrder(writers, func(i int, held func()) {
		errs[i] = db.InTx(ctx, func(tx *ent.Tx) error {
			if i == 0 {
				held()
				holdUntilQueued(t, db, writers-1)
			}
			if err := tx.Workspace.Create().SetName(fmt.Sprintf("w%d", i)).SetPlan("starter").Exec(ctx); err != nil {
				return err
			}
			if i == 1 {
				// What SQLite does by itself on such errors.
				_, err := tx.ExecContext(ctx, "ROLLBACK")
				return err
			}
			return nil
		})
	})
	for i, err := range errs {
		stored := exists(t, db, fmt.Sprintf("w%d", i))
		switch {
		case err == nil && !stored:
			t.Errorf("w%d: acknowledged but not stored", i)
		case err != nil && !errors.Is(err, database.ErrBatchLost):
			t.Errorf("w%d: %v, want ErrBatchLost", i, err)
		case err != nil && stored:
			t.Errorf("w%d: refused but stored", i)
		}
	}
	if !errors.Is(errs[0], database.ErrBatchLost) || !errors.Is(errs[1], database.ErrBatchLost) {
		t.Errorf("the first write and the one that lost the transaction got %v and %v, want ErrBatchLost", errs[0], errs[1])
	}
	if err := db.InTx(ctx, func(tx *ent.Tx) error {
		return tx.Workspace.Create().SetName("after").SetPlan("starter").Exec(ctx)
	}); err != nil || !exists(t, db, "after") {
		t.Fatalf("a write after the lost transaction: %v", err)
	}
}

// A transaction lost to a full disk answers ErrBatchLost, and its cause
// stays visible to FaultOf: the write is answered 507, not 500.
func TestALostTransactionKeepsItsCause(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	full := database.NewDeferred(func(*ent.Tx, *struct{}) error { return sqlite3.Error{Code: sqlite3.ErrFull} })
	err := db.InTx(ctx, func(tx *ent.Tx) error {
		full.In(db, tx)
		return tx.Workspace.Create().SetName("lost").SetPlan("starter").Exec(ctx)
	})
	if !errors.Is(err, database.ErrBatchLost) || database.FaultOf(err) != database.StorageFull {
		t.Fatalf("got %v (fault %q), want ErrBatchLost of a full disk", err, database.FaultOf(err))
	}
	if exists(t, db, "lost") {
		t.Error("the lost write was stored")
	}
}

// A write that panics leaves nothing and panics in its caller; the writes
// sharing its transaction are stored.
func TestAPanickingWriteLeavesOthersStored(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	var panicked any
	errs := make([]error, 4)
	inOrder(4, func(i int, held func()) {
		defer func() {
			if r := recover(); r != nil {
				panicked = r
			}
		}()
		errs[i] = db.InTx(ctx, func(tx *ent.Tx) error {
			if i == 0 {
				held()
				holdUntilQueued(t, db, 3)
			}
			if err := tx.Workspace.Create().SetName(fmt.Sprintf("w%d", i)).SetPlan("starter").Exec(ctx); err != nil {
				return err
			}
			if i == 2 {
				panic("boom")
			}
			return nil
		})
	})
	if panicked != "boom" {
		t.Fatalf("the panic reached its caller as %v", panicked)
	}
	for i, err := range errs {
		if want := i != 2; exists(t, db, fmt.Sprintf("w%d", i)) != want || (want && err != nil) {
			t.Errorf("w%d: err %v, stored %v, want stored %v", i, err, !want, want)
		}
	}
	if n, err := db.Reader.Workspace.Query().Where(workspace.NameHasPrefix("w")).Count(ctx); err != nil || n != 3 {
		t.Fatalf("%d workspaces (%v), want 3", n, err)
	}
}

// A write whose request ends while it waits for its turn does not leave
// the transaction it was queued for open: the write ahead of it, which left
// that transaction for it to commit, still answers.
func TestAWriteThatGivesUpLeavesNoTransactionOpen(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	late, cancel := context.WithCancel(ctx)
	errs := make([]error, 2)
	inOrder(2, func(i int, held func()) {
		wctx := ctx
		if i == 1 {
			wctx = late
		}
		errs[i] = db.InTx(wctx, func(tx *ent.Tx) error {
			if i == 0 {
				held()
				holdUntilQueued(t, db, 1)
				cancel() // the queued write's request ends
			}
			return tx.Workspace.Create().SetName(fmt.Sprintf("w%d", i)).SetPlan("starter").Exec(ctx)
		})
	})
	if errs[0] != nil || !exists(t, db, "w0") {
		t.Fatalf("the write ahead: %v, stored %v", errs[0], exists(t, db, "w0"))
	}
	if !errors.Is(errs[1], context.Canceled) || exists(t, db, "w1") {
		t.Fatalf("the write that gave up: %v, stored %v", errs[1], exists(t, db, "w1"))
	}
}

// Work the writes of one transaction leave to its end (Deferred) runs once,
// with what all of them left, just before the commit; when it fails, the
// whole transaction is undone and every write in it hears ErrBatchLost.
func TestWorkLeftToTheEndRunsOnceBeforeTheCommit(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	const writers = 10
	var flushes []int
	fail, panics := false, false
	left := database.NewDeferred(func(tx *ent.Tx, names *[]string) error {
		flushes = append(flushes, len(*names))
		if panics {
			panic("the end's work panicked")
		}
		if fail {
			return errors.New("the end's work failed")
		}
		return tx.Workspace.Create().SetName(fmt.Sprintf("end-of-%d", len(*names))).SetPlan("starter").Exec(ctx)
	})
	run := func(prefix string) []error {
		errs := make([]error, writers)
		inOrder(writers, func(i int, held func()) {
			errs[i] = db.InTx(ctx, func(tx *ent.Tx) error {
				if i == 0 {
					held()
					holdUntilQueued(t, db, writers-1)
				}
				name := fmt.Sprintf("%s%d", prefix, i)
				if err := tx.Workspace.Create().SetName(name).SetPlan("starter").Exec(ctx); err != nil {
					return err
				}
				if i%4 == 1 {
					return errors.New("refused")
				}
				names := left.In(db, tx)
				*names = append(*names, name)
				return nil
			})
		})
		return errs
	}
	errs := run("a")
	if len(flushes) != 1 || flushes[0] != writers-3 || !exists(t, db, fmt.Sprintf("end-of-%d", writers-3)) {
		t.Fatalf("the end's work ran %v times (with that many names), want once with %d, and stored its row", flushes, writers-3)
	}
	for i, err := range errs {
		if (i%4 == 1) != (err != nil) || exists(t, db, fmt.Sprintf("a%d", i)) != (i%4 != 1) {
			t.Errorf("a%d: %v, stored %v", i, err, exists(t, db, fmt.Sprintf("a%d", i)))
		}
	}
	fail, flushes = true, nil
	for i, err := range run("b") {
		if i%4 != 1 && !errors.Is(err, database.ErrBatchLost) || exists(t, db, fmt.Sprintf("b%d", i)) {
			t.Errorf("b%d: %v, stored %v; want ErrBatchLost and nothing stored", i, err, exists(t, db, fmt.Sprintf("b%d", i)))
		}
	}
	if len(flushes) != 1 {
		t.Errorf("the failing end's work ran %d times, want once", len(flushes))
	}
	// A panic there is the transaction's failure too, and the writer is
	// free again after it.
	fail, panics, flushes = false, true, nil
	for i, err := range run("c") {
		if i%4 != 1 && !errors.Is(err, database.ErrBatchLost) || exists(t, db, fmt.Sprintf("c%d", i)) {
			t.Errorf("c%d: %v, stored %v; want ErrBatchLost and nothing stored", i, err, exists(t, db, fmt.Sprintf("c%d", i)))
		}
	}
	panics = false
	if err := db.InTx(ctx, func(tx *ent.Tx) error {
		return tx.Workspace.Create().SetName("after").SetPlan("starter").Exec(ctx)
	}); err != nil || !exists(t, db, "after") {
		t.Fatalf("a write after the panic: %v", err)
	}
}
