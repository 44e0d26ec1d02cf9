package database

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
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

// optimizeHourly runs optimize on w every optimizeEvery until stop.
func optimizeHourly(w *sql.DB) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(optimizeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				optimize(ctx, w)
			}
		}
	}()
	return func() { cancel(); <-done }
}
