package ratelimit

import (
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
