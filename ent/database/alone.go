package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// A bulk load outside the WAL. In WAL mode every page a load writes goes
// into the WAL first, and a checkpoint copies it into the database file
// again afterwards. A million-invoice seed writes ~3 GB there, and each
// page it reads back (to build the search indexes, counters and plain
// indexes at the end) is looked up in the WAL index, whose lookups grow
// with the WAL: in a profile of that pass, 13 % of the time went to
// walFindFrame alone.
//
// In rollback-journal mode, pages past the file's original end — nearly
// all of a load into empty tables — are written straight into the file,
// and only the few existing pages the load changes (schema, counters,
// non-empty tables) are kept in the journal. A crash still undoes the
// whole load: the next open rolls the hot journal back. The seed went from
// 76-78 s to ~63 s with this alone.
//
// Leaving WAL mode needs the writer to be the file's only connection, so
// only a load whose caller promises to use the DB for nothing else while it
// runs (BulkOptions.Alone) tries: alone closes this process's other
// connections — idle readers, the checkpointer, the data-version
// connection — and asks for the switch. When another process has the file
// open, or a reader of this one is busy, the file stays in WAL mode and
// the load runs there as before, just slower. While the load runs in
// rollback mode, a reader that arrives waits for it (busy_timeout), as
// with any rollback-mode writer; and a new connection of this process
// would try to put the file back in WAL mode. Hence the promise: the bench
// seeds before it starts the server, and `ledgerbase demo` runs alone in
// its process (a server on the same file keeps it in WAL mode).

// alone tries to leave WAL mode on conn, the writer. It returns whether it
// did, and back, which must run once the load's transaction has ended: it
// returns the file to WAL mode and reopens what alone closed.
func (d *DB) alone(ctx context.Context, conn *sql.Conn) (ok bool, back func()) {
	if d.ckpt != nil {
		d.ckpt.stop()
	}
	resumeDV := d.dv.suspend()
	idle := d.Read.Stats().MaxOpenConnections // openSQLite keeps every reader idle
	d.Read.SetMaxIdleConns(0)                 // closes the idle readers
	reopen := func() {
		d.Read.SetMaxIdleConns(idle)
		resumeDV()
		// Without it (nil on error) the WAL still gets checkpointed when
		// the writer closes; the next open starts a checkpointer again.
		d.ckpt, _ = startCheckpoints(d.Path, d.Write)
	}
	mode, err := journalMode(ctx, conn, "DELETE", 0)
	if err != nil || mode != "delete" {
		reopen()
		return false, func() {}
	}
	return true, func() {
		ctx := context.WithoutCancel(ctx)
		if mode, err := journalMode(ctx, conn, "WAL", busyTimeout); err != nil || mode != "wal" {
			// Never hand a rollback-mode writer back: a fresh connection
			// puts the file in WAL mode again (see init's pragmas).
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		reopen()
	}
}

// journalMode asks conn to switch to mode, waiting at most wait for the
// locks that needs, and returns the mode it is in after.
func journalMode(ctx context.Context, conn *sql.Conn, mode string, wait time.Duration) (string, error) {
	var now string
	err := withBusyTimeout(ctx, conn, wait, func() error {
		return conn.QueryRowContext(ctx, "PRAGMA journal_mode="+mode).Scan(&now)
	})
	return strings.ToLower(now), err
}

// withBusyTimeout runs fn with conn's busy_timeout set to wait, and sets it
// back. A connection whose timeout cannot be set back is discarded: it is
// never handed back with the short one.
func withBusyTimeout(ctx context.Context, conn *sql.Conn, wait time.Duration, fn func() error) error {
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout=%d", wait.Milliseconds())); err != nil {
		return err
	}
	err := fn()
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout=%d", busyTimeout.Milliseconds())); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}
