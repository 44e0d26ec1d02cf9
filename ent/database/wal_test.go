package database_test

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// The writer never checkpoints (a checkpoint inside a commit holds every
// writer up for its fsyncs); the background checkpointer must still keep
// the WAL from growing without end while writes keep coming.
func TestWALStartsOverUnderSteadyWrites(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	db, err := database.Open(ctx, "sqlite:"+path, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.WritePool.ExecContext(ctx, "CREATE TABLE t (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	probe, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	frames := func() int {
		var busy, log, done int
		// A read first: a connection that has not read anything yet does
		// not know the database is in WAL mode.
		if err := probe.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		for {
			if err := probe.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
				t.Fatal(err)
			}
			if busy == 0 { // else a checkpoint is at work: ask again
				return log
			}
			time.Sleep(time.Millisecond)
		}
	}
	blob := bytes.Repeat([]byte{'x'}, 60000) // 15 overflow pages and a leaf
	write := func() {
		if _, err := db.WritePool.ExecContext(ctx, "INSERT INTO t (b) VALUES (?)", blob); err != nil {
			t.Fatal(err)
		}
	}
	var auto int
	if err := db.WritePool.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the writer checkpoints every %d pages (%v), want never", auto, err)
	}
	// Well past the size (64 MiB) at which the checkpointer lets the WAL
	// start over: 1,500 writes of 16 pages.
	for range 1500 {
		write()
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := frames(); n >= 2000; n = frames() {
		if time.Now().After(deadline) {
			t.Fatalf("the WAL still holds %d frames: it never started over", n)
		}
		write() // a write starts the WAL over once it is all copied back
		time.Sleep(10 * time.Millisecond)
	}
}
