package writes

import (
	"context"
	"time"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// refreshFunc stores the states of a workspace's records of one resource
// that the clock has changed since they were written.
type refreshFunc func(ctx context.Context, db *database.DB, eng *records.Engine, workspaceID string, now time.Time) error

var refreshers = map[*resource.Resource]refreshFunc{
	resource.GiftCards:  refreshGiftCards,
	resource.Promotions: refreshPromotions,
}

// Refresher is the records engine's Refresh: before a resource is read,
// the states that follow the clock are brought up to date, with their
// events (rendered by eng, the engine that reads).
func Refresher(db *database.DB, eng *records.Engine) func(ctx context.Context, r *resource.Resource, workspaceID string) error {
	return func(ctx context.Context, r *resource.Resource, workspaceID string) error {
		f, ok := refreshers[r]
		if !ok {
			return nil
		}
		return f(ctx, db, eng, workspaceID, time.Now().UTC())
	}
}
