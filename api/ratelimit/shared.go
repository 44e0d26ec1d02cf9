package ratelimit

import (
	"context"
	"database/sql"
	"log/slog"
	"math"
	"time"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Taker spends one token of a key's bucket: Limiter in one process's
// memory, Shared in the database.
type Taker interface {
	Take(key string, perMin int, now time.Time) Result
}

// Shared keeps the buckets in the database, so every `serve` process that
// shares it enforces one limit per key. It costs one small upsert per
// request, which is why it is a setting and not the default.
type Shared struct {
	db  *sql.DB
	q   string
	log *slog.Logger
}

// NewShared returns database-backed buckets on db.
func NewShared(db *database.DB, log *slog.Logger) *Shared {
	// One atomic statement refills (by the time since the last take, capped
	// at the bucket size) and takes a token if there is one. SET reads the
	// row's old values, so tokens and allowed see the same refill.
	least, greatest := "min", "max"
	if db.Dialect == dialect.Postgres {
		least, greatest = "LEAST", "GREATEST"
	}
	refill := least + "(excluded.cap, rate_buckets.tokens + " + greatest + "(0, excluded.at - rate_buckets.at) * excluded.rate)"
	q := "INSERT INTO rate_buckets (id, tokens, at, cap, rate, allowed) VALUES (?, ?, ?, ?, ?, ?) " +
		"ON CONFLICT (id) DO UPDATE SET " +
		"tokens = CASE WHEN " + refill + " >= 1 THEN " + refill + " - 1 ELSE " + refill + " END, " +
		"allowed = (" + refill + " >= 1), at = excluded.at, cap = excluded.cap, rate = excluded.rate " +
		"RETURNING tokens, allowed"
	return &Shared{db: db.WritePool, q: db.Rebind(q), log: log}
}

// Take spends a token of key's bucket of size perMin (0 = unlimited). When
// the database cannot answer, the request is let through: an outage of the
// limiter must not become an outage of the API.
func (s *Shared) Take(key string, perMin int, now time.Time) Result {
	if perMin <= 0 {
		return Result{Allowed: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	size, rate := float64(perMin), float64(perMin)/60
	at := float64(now.UnixNano()) / 1e9
	var tokens float64
	var allowed bool
	if err := s.db.QueryRowContext(ctx, s.q, key, size-1, at, size, rate, size >= 1).Scan(&tokens, &allowed); err != nil {
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
