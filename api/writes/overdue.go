package writes

import (
	"context"
	"log/slog"
	"time"

	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// An invoice becomes overdue by itself: once its due date has passed with
// money still open, a sent or partially paid invoice reads overdue, with no
// call from anyone. Every serving process runs MarkOverdue once a minute
// (the update is idempotent, so several processes need no coordination),
// and a payment on an overdue invoice keeps it overdue while money remains.

// MarkOverdue moves the invoices due before today (UTC) with money open to
// overdue, and says how many moved.
func MarkOverdue(ctx context.Context, db *database.DB, now time.Time) (int64, error) {
	res, err := db.Write.ExecContext(ctx, db.Rebind(
		"UPDATE invoices SET status = 'overdue', updated_at = ? WHERE status IN ('sent', 'partially_paid') AND due_date < ? AND remaining_cents > 0"),
		now.UTC(), now.UTC().Format("2006-01-02"))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
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
		res, err := db.Write.ExecContext(ctx, db.Rebind(
			"DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ? LIMIT 1000)"), cutoff.UTC())
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
func RunHousekeeping(ctx context.Context, db *database.DB, period, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := MarkOverdue(ctx, db, time.Now()); err != nil && ctx.Err() == nil {
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
