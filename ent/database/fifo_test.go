package database_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// sqliteOnly skips a test of SQLite's own machinery when the suite runs on
// PostgreSQL.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if apitest.Backend() != "sqlite" {
		t.Skip("SQLite only")
	}
}

func openSQLite(t *testing.T) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "fifo.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// Writers queued for SQLite's one writer connection get it in the order they
// asked. database/sql alone hands a freed connection to a random waiter, so
// some writes waited many times the queue's length (the p99 of the write
// benchmarks was 4.6× their mean); in order, none waits much longer than
// the queue is long.
func TestWritersAreServedInArrivalOrder(t *testing.T) {
	if apitest.Backend() != "sqlite" {
		t.Skip("SQLite only: PostgreSQL writers run concurrently")
	}
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	const writers, each = 16, 40
	var grants atomic.Int64
	var worst atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				asked := grants.Load()
				tx, err := db.Ent.Tx(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				waited := grants.Add(1) - 1 - asked // others served while this one waited
				for w := worst.Load(); waited > w && !worst.CompareAndSwap(w, waited); w = worst.Load() {
				}
				time.Sleep(100 * time.Microsecond) // hold the writer so the others queue
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// In order, a writer waits for at most the other 15; the slack covers a
	// writer paused between reading the counter and joining the queue.
	if w := worst.Load(); w > 2*writers {
		t.Fatalf("a writer waited while %d others were served; in arrival order it would be at most %d", w, writers-1)
	}
	t.Logf("the longest wait was %d turns with %d writers", worst.Load(), writers)
}

// A writer that gives up waiting leaves the queue without taking a turn, and
// statements outside a transaction hand the writer on.
func TestWriterTurnIsReturned(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := db.Ent.Tx(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a writer waiting past its deadline got %v, want context.DeadlineExceeded", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// A query outside a transaction, then an exec, then a transaction: each
	// would block forever if the one before kept the turn.
	if _, err := db.Ent.Workspace.Query().All(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Ent.Workspace.Delete().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	done, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	tx, err = db.Ent.Tx(done)
	if err != nil {
		t.Fatalf("the writer was not handed back: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
