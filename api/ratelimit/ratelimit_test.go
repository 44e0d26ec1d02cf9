package ratelimit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBucketAllowsItsLimitThenRefuses(t *testing.T) {
	t.Parallel()
	l := New()
	now := time.Unix(1_700_000_000, 0)
	for i := 0; i < 120; i++ {
		if r := l.Take("k", 120, now); !r.Allowed || r.Remaining != 119-i {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	r := l.Take("k", 120, now)
	if r.Allowed || r.RetryAfter != 1 || r.Remaining != 0 {
		t.Fatalf("over the limit: %+v", r)
	}
	// Two requests a second refill at 120/minute.
	if r := l.Take("k", 120, now.Add(time.Second)); !r.Allowed {
		t.Fatalf("after a second: %+v", r)
	}
	if r := l.Take("other", 0, now); !r.Allowed || r.Limit != 0 {
		t.Fatalf("unlimited: %+v", r)
	}
}

// Requests racing on a key's first use, or on a plan change, share one
// bucket: together they get exactly its size, never a bucket each.
func TestRacingRequestsShareOneBucket(t *testing.T) {
	t.Parallel()
	l := New()
	now := time.Now()
	allowed := func(perMin int) int {
		var n atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if l.Take("key_racing", perMin, now).Allowed {
						n.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return int(n.Load())
	}
	if n := allowed(50); n != 50 {
		t.Fatalf("first use: %d of 320 allowed, want the bucket's 50", n)
	}
	if n := allowed(120); n != 120 {
		t.Fatalf("after a plan change: %d of 320 allowed, want the new bucket's 120", n)
	}
}
