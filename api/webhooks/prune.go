package webhooks

import (
	"context"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/webhookattempt"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
)

// Prune deletes the deliveries created before cutoff (the events'
// retention) with their attempts, a batch at a time so no transaction
// holds the writer long, and says how many went.
func Prune(ctx context.Context, db *database.DB, cutoff time.Time) (int64, error) {
	var total int64
	for {
		tx, err := db.Writer.Tx(ctx)
		if err != nil {
			return total, err
		}
		ids, err := tx.WebhookDelivery.Query().Where(webhookdelivery.CreatedAtLT(cutoff.UTC())).Limit(500).IDs(ctx)
		if err == nil && len(ids) > 0 {
			_, err = tx.WebhookAttempt.Delete().Where(webhookattempt.DeliveryIDIn(ids...)).Exec(ctx)
		}
		if err == nil && len(ids) > 0 {
			_, err = tx.WebhookDelivery.Delete().Where(webhookdelivery.IDIn(ids...)).Exec(ctx)
		}
		if err != nil {
			_ = tx.Rollback()
			return total, err
		}
		if err := tx.Commit(); err != nil {
			return total, err
		}
		total += int64(len(ids))
		if len(ids) == 0 {
			return total, nil
		}
	}
}
