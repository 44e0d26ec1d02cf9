package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// Taker spends one token of a key's bucket: Limiter in one process's
// memory, Shared in the database.
type Taker interface {
	Take(key string, perMin int, now time.Time) Result
}

// Shared keeps the buckets in the database, so every process sharing it
// enforces one limit per key, for one small upsert per request.
type Shared struct {
	take func(ctx context.Context, key string, size, rate, at float64) (float64, bool, error)
	log  *slog.Logger
}

// NewShared returns database-backed buckets on db.
func NewShared(db *database.DB, log *slog.Logger) *Shared {
	return &Shared{take: sqlstore.TokenTaker(db), log: log}
}

// Take spends a token of key's bucket of size perMin (0 = unlimited). When
// the database cannot answer, the request goes through: an outage of the
// limiter must not be one of the API.
func (s *Shared) Take(key string, perMin int, now time.Time) Result {
	if perMin <= 0 {
		return Result{Allowed: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	size, rate := float64(perMin), float64(perMin)/60
	at := float64(now.UnixNano()) / 1e9
	tokens, allowed, err := s.take(ctx, key, size, rate, at)
	if err != nil {
		s.log.Warn("shared rate limit unavailable; request let through", "key_id", key, "err", err)
		return Result{Allowed: true, Limit: perMin, Remaining: perMin}
	}
	r := Result{Allowed: allowed, Limit: perMin, Remaining: max(0, int(math.Floor(tokens)))}
	r.Reset = int(math.Ceil((size - tokens) / rate))
	if !allowed {
		r.RetryAfter = max(1, int(math.Ceil((1-tokens)/rate)))
	}
	return r
}
