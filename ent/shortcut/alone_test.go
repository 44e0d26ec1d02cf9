package shortcut_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// journal is the journal mode a connection of pool sees.
func journal(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) string {
	t.Helper()
	var mode string
	if err := q.QueryRowContext(context.Background(), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// probeLoad creates and fills a table, and records the journal mode the
// load ran in.
func probeLoad(t *testing.T, table string, mode *string, fail error) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		*mode = journal(t, tx)
		if _, err := tx.Exec("CREATE TABLE " + table + " (n INTEGER)"); err != nil {
			return err
		}
		if _, err := tx.Exec("INSERT INTO " + table + " (n) SELECT value FROM json_each('[1,2,3]')"); err != nil {
			return err
		}
		return fail
	}
}

func dataVersion(t *testing.T, db *database.DB) int64 {
	t.Helper()
	v, ok, err := shortcut.Of(db).DataVersion(context.Background())
	if err != nil || !ok {
		t.Fatalf("DataVersion: %v, %v", ok, err)
	}
	return v
}

// With no other connection to the file, a bulk load runs in rollback-journal
// mode (its pages go straight into the file instead of through the WAL),
// and the file is back in WAL mode after it, with the
// data-version connection working again.
func TestBulkLoadRunsOutsideTheWALAndReturnsToIt(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db := openSQLite(t)
	// A reader used before the load is idle during it.
	if got := journal(t, db.ReadPool); got != "wal" {
		t.Fatalf("journal mode %q before the load", got)
	}
	before := dataVersion(t, db)

	var during string
	if err := shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{Alone: true}, probeLoad(t, "probe", &during, nil)); err != nil {
		t.Fatal(err)
	}
	if during != "delete" {
		t.Fatalf("the load ran in journal mode %q, want delete", during)
	}
	if w, r := journal(t, db.WritePool), journal(t, db.ReadPool); w != "wal" || r != "wal" {
		t.Fatalf("after the load: writer %q, reader %q; want wal", w, r)
	}
	var n int
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM probe").Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d rows after the load (%v), want 3", n, err)
	}
	// The data-version connection was reopened: its readings restart, yet
	// none may equal one given out before (the render cache compares them).
	after := dataVersion(t, db)
	if after <= before {
		t.Fatalf("data version %d after the load, %d before: want it above", after, before)
	}
	if _, err := db.WritePool.ExecContext(ctx, "INSERT INTO probe (n) VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	if v := dataVersion(t, db); v == after {
		t.Fatal("a commit after the load left the data version as it was")
	}

	// A load that fails is rolled back and returns the file to WAL mode too.
	boom := errors.New("boom")
	if err := shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{Alone: true}, probeLoad(t, "gone", &during, boom)); !errors.Is(err, boom) {
		t.Fatalf("Bulk = %v, want the load's error", err)
	}
	if during != "delete" || journal(t, db.WritePool) != "wal" {
		t.Fatalf("failed load: ran in %q, writer now %q", during, journal(t, db.WritePool))
	}
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'gone'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed load left its table behind (%d, %v)", n, err)
	}
}

// When another connection has the file open (another process, here another
// pool), the load stays in WAL mode, without waiting out busy_timeout for
// a lock it cannot get, and works as before.
func TestBulkLoadStaysInWALWhileTheFileIsShared(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db := openSQLite(t)
	other, err := sql.Open("sqlite3", "file:"+db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := journal(t, other); got != "wal" {
		t.Fatalf("the other connection sees %q", got)
	}

	var during string
	start := time.Now()
	if err := shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{Alone: true}, probeLoad(t, "probe", &during, nil)); err != nil {
		t.Fatal(err)
	}
	if during != "wal" {
		t.Fatalf("the load ran in journal mode %q while the file was shared, want wal", during)
	}
	if waited := time.Since(start); waited >= 10*time.Second {
		t.Fatalf("the load waited %s: it sat out busy_timeout", waited)
	}
	var n int
	if err := other.QueryRowContext(ctx, "SELECT COUNT(*) FROM probe").Scan(&n); err != nil || n != 3 {
		t.Fatalf("the other connection sees %d rows (%v), want 3", n, err)
	}
}

// Without the promise that nothing else uses the DB, a load stays in WAL
// mode, where this process's readers go on reading beside it.
func TestBulkLoadStaysInWALUnlessAlone(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db := openSQLite(t)
	var during string
	err := shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{}, func(tx *sql.Tx) error {
		if err := probeLoad(t, "probe", &during, nil)(tx); err != nil {
			return err
		}
		// A reader beside the load sees the database as it was before it.
		var n int
		if err := db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'probe'").Scan(&n); err != nil || n != 0 {
			t.Errorf("a reader beside the load: %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != "wal" {
		t.Fatalf("the load ran in journal mode %q, want wal", during)
	}
}
