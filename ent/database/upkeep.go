package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// SQLite's own checkpoint runs inside the commit that passes 1,000 WAL
// pages, under the write lock: every queued writer waits for its copy and
// fsyncs. The writer has them off (wal_autocheckpoint=0) and a connection
// of its own runs PASSIVE checkpoints beside it, which block no one. A
// passive pass cannot catch a writer that keeps committing, and the WAL
// starts over only when a write begins with it all copied back; so past
// restartFrames (at most once per restartGap) the last few frames are
// copied on the writer itself. Durability is unchanged (synchronous=NORMAL).
const (
	checkpointEvery = 50 * time.Millisecond
	restartFrames   = 16384 // 64 MiB of WAL
	restartGap      = time.Second
	restartLeft     = 256
	finishWait      = 5 * time.Millisecond // bounds the writer's wait for old readers
)

// Statistics for SQLite's query planner, as sqlite.org/lang_analyze.html
// advises: PRAGMA optimize at open, after a schema change, every
// optimizeEvery and at close. 0x10000 makes it look at every table, not
// only those the writer read: the lists are read by the query-only readers.
const (
	optimizeAll   = "PRAGMA optimize=0x10002"
	optimizeEvery = time.Hour
)

// optimize runs optimizeAll on the writer. A failure (the file is locked
// by another process past busy_timeout) leaves the older statistics.
func optimize(ctx context.Context, w *sql.DB) {
	if _, err := w.ExecContext(ctx, optimizeAll); err != nil {
		slog.Default().Warn("database: PRAGMA optimize failed; the query planner keeps its older statistics", "err", err)
	}
}

// checkpointer is the connection that checkpoints beside the writer (nil
// when the backgroundCheckpoints shortcut is off).
type checkpointer struct {
	sync.Mutex // held by a pass, and while a bulk load needs the file alone
	db         *sql.DB
}

// upkeep checkpoints and optimizes the SQLite file until stop.
func (d *DB) upkeep() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		optimized, restarted := time.Now(), time.Time{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if time.Since(optimized) >= optimizeEvery {
				optimize(ctx, d.WritePool)
				optimized = time.Now()
			}
			if c := d.ckpt; c != nil && d.checkpoint(ctx, c, time.Since(restarted) >= restartGap) {
				restarted = time.Now()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// checkpoint runs a passive pass (errors, a busy or closing file, wait for
// the next) and, when the WAL is long and restart allows, copies what the
// passes left on the writer, which lets the next write start the WAL over.
func (d *DB) checkpoint(ctx context.Context, c *checkpointer, restart bool) (restarted bool) {
	c.Lock()
	var busy, frames, done int
	err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done)
	for i := 0; err == nil && restart && frames >= restartFrames && frames-done > restartLeft && i < 3; i++ {
		err = c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done)
	}
	c.Unlock()
	if err != nil || !restart || frames < restartFrames {
		return false
	}
	w, err := d.WritePool.Conn(ctx)
	if err != nil {
		return false
	}
	defer w.Close()
	_ = WithBusyTimeout(ctx, w, finishWait, func() error {
		return w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(FULL)").Scan(&busy, &frames, &done)
	})
	return true
}

// PauseCheckpoints closes the checkpointing connection until resume, for a
// bulk load that needs the file to itself.
func (d *DB) PauseCheckpoints() (resume func()) {
	c := d.ckpt
	if c == nil {
		return func() {}
	}
	c.Lock()
	c.db.SetMaxIdleConns(0)
	return func() { c.db.SetMaxIdleConns(1); c.Unlock() }
}

// WithBusyTimeout runs fn with conn's busy_timeout set to wait. A connection
// whose timeout cannot be set back is discarded, never handed back with the
// short one.
func WithBusyTimeout(ctx context.Context, conn *sql.Conn, wait time.Duration, fn func() error) error {
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout=%d", wait.Milliseconds())); err != nil {
		return err
	}
	err := fn()
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout=%d", BusyTimeout.Milliseconds())); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}
