// Package usage counts API traffic per key and hour for the admin
// dashboard, in memory; Flush adds the counts to the KeyUsage table, so
// several processes sharing a database add up.
package usage

import (
	"context"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/keyusage"
)

type slot struct {
	workspaceID, keyID string
	hour               time.Time
}

// Counts are one key's traffic in one hour.
type Counts struct{ Requests, Errors, RateLimited int64 }

// Recorder accumulates counts until the next Flush.
type Recorder struct {
	db      *ent.Client
	mu      sync.Mutex
	pending map[slot]*Counts
	flushMu sync.Mutex // one flush at a time, so counts are never added twice
}

// New records into db (the writer client).
func New(db *ent.Client) *Recorder { return &Recorder{db: db, pending: map[slot]*Counts{}} }

// Record counts one response of a key; 4xx and 5xx are errors, 429 also rate-limited.
func (r *Recorder) Record(workspaceID, keyID string, status int, at time.Time) {
	s := slot{workspaceID, keyID, at.UTC().Truncate(time.Hour)}
	r.mu.Lock()
	c := r.pending[s]
	if c == nil {
		c = &Counts{}
		r.pending[s] = c
	}
	c.Requests++
	if status >= 400 {
		c.Errors++
	}
	if status == 429 {
		c.RateLimited++
	}
	r.mu.Unlock()
}

// Flush adds the pending counts to the database. Counts that fail to be
// written are kept for the next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = map[slot]*Counts{}
	r.mu.Unlock()
	var firstErr error
	for s, c := range batch {
		err := r.db.KeyUsage.Create().
			SetWorkspaceID(s.workspaceID).SetKeyID(s.keyID).SetHour(s.hour).
			SetRequests(c.Requests).SetErrors(c.Errors).SetRateLimited(c.RateLimited).
			OnConflict(sql.ConflictColumns(keyusage.FieldKeyID, keyusage.FieldHour)).
			Update(func(u *ent.KeyUsageUpsert) {
				u.AddRequests(c.Requests).AddErrors(c.Errors).AddRateLimited(c.RateLimited).UpdateUpdatedAt()
			}).Exec(ctx)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			r.putBack(s, c)
		}
	}
	return firstErr
}

func (r *Recorder) putBack(s slot, c *Counts) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[s]
	if p == nil {
		r.pending[s] = c
		return
	}
	p.Requests += c.Requests
	p.Errors += c.Errors
	p.RateLimited += c.RateLimited
}

// Run flushes every interval until ctx ends, then flushes once more.
func (r *Recorder) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = r.Flush(fctx)
			cancel()
			return
		case <-t.C:
			_ = r.Flush(ctx)
		}
	}
}

// Since sums a workspace's traffic per key from the hour containing since.
func Since(ctx context.Context, db *ent.Client, workspaceID string, since time.Time) (map[string]Counts, error) {
	rows, err := db.KeyUsage.Query().
		Where(keyusage.WorkspaceID(workspaceID), keyusage.HourGTE(since.UTC().Truncate(time.Hour))).All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]Counts{}
	for _, u := range rows {
		c := out[u.KeyID]
		c.Requests += u.Requests
		c.Errors += u.Errors
		c.RateLimited += u.RateLimited
		out[u.KeyID] = c
	}
	return out, nil
}
