package shortcut_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// A look whose answer takes 700 ms to come back (under accessStale, so it
// does not fail) reports the counter as of its start: trusting its number
// from its end would keep an old number trusted for longer than the
// one-second promise after a committed change.
func TestAccessGenKeepsItsPromiseWhenLooksAreSlow(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("PostgreSQL")
	}
	watched, other := watchedAndOther(t)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := other.WritePool.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	trustedGen(t, watched)
	exec("ALTER TABLE access_changes RENAME TO access_changes_real")
	exec("CREATE VIEW access_changes AS SELECT a.id, a.gen FROM access_changes_real a, LATERAL (SELECT pg_sleep(0.7)) s")
	defer func() {
		exec("DROP VIEW access_changes")
		exec("ALTER TABLE access_changes_real RENAME TO access_changes")
	}()
	time.Sleep(2 * time.Second)
	worst := time.Duration(0)
	for trial := 0; trial < 3; trial++ {
		time.Sleep(time.Duration(trial*137) * time.Millisecond)
		// Slow looks leave the number trusted only briefly (from each
		// look's start): change it while it is.
		g0, ok := shortcut.Of(watched).AccessGen()
		for wait := time.Now(); !ok; g0, ok = shortcut.Of(watched).AccessGen() {
			if time.Since(wait) > 5*time.Second {
				t.Fatal("never trusted while looks take 700 ms")
			}
			time.Sleep(time.Millisecond)
		}
		exec("UPDATE access_changes_real SET gen = gen + 1 WHERE id = 0") // a committed access change
		c := time.Now()
		last := c
		for time.Since(c) < 3*time.Second {
			g, ok := shortcut.Of(watched).AccessGen()
			if g != g0 {
				break
			}
			if ok {
				last = time.Now()
			}
			time.Sleep(2 * time.Millisecond)
		}
		lag := last.Sub(c)
		t.Logf("trial %d: old number still trusted %v after the change committed", trial, lag)
		worst = max(worst, lag)
	}
	if worst > time.Second {
		t.Errorf("the old number was trusted %v after a committed change (promise: within a second)", worst)
	}
}
