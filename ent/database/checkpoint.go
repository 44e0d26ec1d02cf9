package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"time"
)

// SQLite copies the WAL back into the database file in checkpoints. By
// default the connection whose commit makes the WAL pass 1,000 pages runs
// one inside that commit, while it still holds the write lock: every writer
// waits for the copy and its two fsyncs (milliseconds each on a busy disk,
// and at a few thousand writes a second this happens dozens of times a
// second). The writer connection has automatic checkpoints off
// (wal_autocheckpoint=0) and a connection of its own checkpoints in the
// background instead: a PASSIVE checkpoint blocks neither the writer nor
// the readers, and copies each page once however often commits rewrote it.
//
// A passive checkpoint cannot catch up with a writer that keeps committing,
// and SQLite only starts the WAL file over when a write begins with every
// frame copied. So once the WAL is past restartFrames (and at most once per
// restartGap), the checkpointer takes the writer connection for a moment
// and checkpoints the few frames written since its last pass there: the
// next write then starts the WAL over, and the file stays about that size
// (a reader still on an older snapshot can delay that, as it delays
// SQLite's own checkpoints).
//
// Durability is unchanged: with synchronous=NORMAL a commit is never fsynced
// by itself; a checkpoint syncs the WAL before copying it back.

const (
	// checkpointEvery is how often the background pass runs.
	checkpointEvery = 50 * time.Millisecond
	// restartFrames is the WAL length (in 4 KiB pages) past which the
	// writer is borrowed to let the WAL start over: 64 MiB.
	restartFrames = 16384
	// restartGap is the least time between two such borrowings. Each holds
	// every writer up for the checkpoint's two fsyncs (milliseconds to tens
	// of them), and writes that touch a dozen pages fill 16 MiB of WAL many
	// times a second: restarting the WAL at every 16 MiB put such a stall
	// in the tail latency of every write.
	restartGap = time.Second
	// restartLeft is how many frames may be left for the writer to copy.
	restartLeft = 256
	// finishWait bounds how long the writer waits for older readers.
	finishWait = 5 * time.Millisecond
)

type checkpointer struct {
	db, writer *sql.DB
	cancel     context.CancelFunc
	done       chan struct{}
}

// startCheckpoints opens the checkpointing connection and starts its loop.
func startCheckpoints(path string, writer *sql.DB) (*checkpointer, error) {
	db, err := sql.Open(SQLiteDriver, "file:"+path+"?"+SQLiteConnParams+"&_cache_size=-500")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, writer: writer, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c, nil
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	var restarted time.Time
	optimized := time.Now() // at open
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(optimized) >= optimizeEvery {
			optimize(ctx, c.writer)
			optimized = time.Now()
		}
		// Errors (a busy or closing database) are retried at the next
		// tick; closing the writer runs a final checkpoint anyway.
		frames, done, err := checkpoint(ctx, c.db)
		if err != nil || frames < restartFrames || time.Since(restarted) < restartGap {
			continue
		}
		// Copy what was committed during that pass too, so the writer is
		// held up only for the last few frames.
		for i := 0; i < 3 && frames-done > restartLeft; i++ {
			if frames, done, err = checkpoint(ctx, c.db); err != nil {
				break
			}
		}
		c.finish(ctx)
		restarted = time.Now()
	}
}

// finish checkpoints the last frames on the writer connection, so no commit
// comes in between. FULL mode also waits for readers still on an older
// snapshot (whose pages a checkpoint must not overwrite) to move on: at
// most finishWait, so a long read cannot hold the writers up.
func (c *checkpointer) finish(ctx context.Context) {
	w, err := c.writer.Conn(ctx)
	if err != nil {
		return
	}
	defer w.Close()
	_ = WithBusyTimeout(ctx, w, finishWait, func() error {
		var busy, frames, done int
		return w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(FULL)").Scan(&busy, &frames, &done)
	})
}

// checkpoint runs a PASSIVE checkpoint and returns the WAL's length and how
// much of it is copied back, in frames (-1 when another checkpoint was running).
func checkpoint(ctx context.Context, db *sql.DB) (frames, done int, err error) {
	var busy int
	err = db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done)
	return frames, done, err
}

func (c *checkpointer) stop() {
	c.cancel()
	<-c.done
	c.db.Close()
}

// Statistics for SQLite's query planner, as sqlite.org/lang_analyze.html
// advises for long-lived connections: PRAGMA optimize=0x10002 when the
// database is opened, after a schema change, every optimizeEvery and
// before it is closed. It runs ANALYZE only on tables whose statistics are
// missing or out of date, under a temporary analysis limit, so it stays
// short on a million rows. 0x10000 makes it look at every table, not only
// those the connection running it has read: that is the writer, and the
// lists are read by the query-only readers, which cannot write statistics.
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

// WithBusyTimeout runs fn with conn's busy_timeout set to wait, and sets it
// back. A connection whose timeout cannot be set back is discarded: it is
// never handed back with the short one.
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
