// Package ratelimit is a per-key token bucket: each key may burst its
// per-minute limit and refills at limit/60 per second.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Result is what the response headers say.
type Result struct {
	Allowed    bool
	Limit      int // per minute; 0 = unlimited
	Remaining  int
	Reset      int // seconds until the bucket is full again
	RetryAfter int // seconds until one request is allowed (when refused)
}

// Limiter holds one bucket per key.
type Limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	perMin int
	lim    *rate.Limiter
}

func New() *Limiter { return &Limiter{buckets: map[string]*bucket{}} }

// Take spends one token of key's bucket, whose size is perMin (0 = unlimited).
func (l *Limiter) Take(key string, perMin int, now time.Time) Result {
	if perMin <= 0 {
		return Result{Allowed: true}
	}
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil || b.perMin != perMin { // a plan change resizes the bucket
		b = &bucket{perMin: perMin, lim: rate.NewLimiter(rate.Limit(float64(perMin)/60), perMin)}
		l.buckets[key] = b
	}
	l.mu.Unlock()
	ok := b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	perSec := float64(perMin) / 60
	r := Result{Allowed: ok, Limit: perMin, Remaining: max(0, int(math.Floor(tokens)))}
	r.Reset = int(math.Ceil((float64(perMin) - tokens) / perSec))
	if !ok {
		r.RetryAfter = max(1, int(math.Ceil((1-tokens)/perSec)))
	}
	return r
}
