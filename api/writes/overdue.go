package writes

import (
	"context"
	"log/slog"
	"time"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// An invoice becomes overdue by itself: once its due date has passed with
// money still open, a sent or partially paid invoice reads overdue, with no
// call from anyone. Every serving process runs MarkOverdue once a minute;
// several processes need no coordination, as each invoice moves (and is
// told of, invoice.overdue) once (clockMove). A payment on an overdue
// invoice keeps it overdue while money remains.

// overdue selects the invoices the sweep moves, given today's date.
const overdue = "status IN ('sent', 'partially_paid') AND due_date < ? AND remaining_cents > 0"

// MarkOverdue moves the invoices due before today (UTC) with money open to
// overdue, with their events, and says how many moved.
func MarkOverdue(ctx context.Context, db *database.DB, eng *records.Engine, now time.Time) (int64, error) {
	today := now.UTC().Format("2006-01-02")
	rows, err := db.ReadPool.QueryContext(ctx, db.Rebind("SELECT DISTINCT workspace_id FROM invoices WHERE "+overdue), today)
	if err != nil {
		return 0, err
	}
	var wss []string
	for rows.Next() {
		var ws string
		if err := rows.Scan(&ws); err != nil {
			rows.Close()
			return 0, err
		}
		wss = append(wss, ws)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	m := clockMove{r: resource.Invoices, job: "overdue_sweep", stale: overdue, staleArgs: []any{today},
		set: "status = 'overdue', updated_at = ?", setArgs: []any{now.UTC()}}
	var total int64
	for _, ws := range wss {
		n, err := m.run(ctx, db, eng, ws)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// PruneEvents deletes the events created before cutoff, and their webhook
// deliveries, a batch at a time so no transaction holds the writer long,
// and says how many events went.
func PruneEvents(ctx context.Context, db *database.DB, cutoff time.Time) (int64, error) {
	if _, err := webhooks.Prune(ctx, db, cutoff); err != nil {
		return 0, err
	}
	var total int64
	for {
		res, err := db.WritePool.ExecContext(ctx, db.Rebind(
			"DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ? LIMIT 1000)"), ids.Floor("evt", cutoff))
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// RunHousekeeping marks overdue invoices and prunes events older than
// retention (0 keeps them), now and then every period until ctx ends.
func RunHousekeeping(ctx context.Context, db *database.DB, eng *records.Engine, period, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := MarkOverdue(ctx, db, eng, time.Now()); err != nil && ctx.Err() == nil {
			log.Warn("marking overdue invoices", "err", err)
		} else if n > 0 {
			log.Info("invoices became overdue", "count", n)
		}
		if retention > 0 {
			if n, err := PruneEvents(ctx, db, time.Now().Add(-retention)); err != nil && ctx.Err() == nil {
				log.Warn("pruning events", "err", err)
			} else if n > 0 {
				log.Info("old events deleted", "count", n, "retention", retention)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
