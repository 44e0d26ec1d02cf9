package writes

import (
	"context"
	"time"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// refreshFunc stores the states of a workspace's records of one resource
// that the clock has changed since they were written.
type refreshFunc func(ctx context.Context, db *database.DB, workspaceID string, now time.Time) error

var refreshers = map[*resource.Resource]refreshFunc{}

// registerRefresh binds the refresh of a resource whose states follow the clock.
func registerRefresh(r *resource.Resource, f refreshFunc) { refreshers[r] = f }

// Refresher is the records engine's Refresh: before a resource is read,
// the states that follow the clock are brought up to date.
func Refresher(db *database.DB) func(ctx context.Context, r *resource.Resource, workspaceID string) error {
	return func(ctx context.Context, r *resource.Resource, workspaceID string) error {
		f, ok := refreshers[r]
		if !ok {
			return nil
		}
		return f(ctx, db, workspaceID, time.Now().UTC())
	}
}
