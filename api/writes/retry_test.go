package writes

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A deadlock or serialization failure is a rerun for as long as the budget
// lasts, however many come in a row; a lost unique key is a rerun twice;
// anything else answers at once.
func TestRetryingOutlastsConflictsAndStopsOnOtherErrors(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code} }
	for _, c := range []struct {
		name     string
		fails    int // runs that fail before one succeeds
		err      error
		wantRuns int
		wantErr  bool
	}{
		{"deadlocks", 25, pg("40P01"), 26, false},
		{"serialization failures", 25, pg("40001"), 26, false},
		{"unique key", 5, pg("23505"), 3, true},
		{"not a race", 5, errors.New("boom"), 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := 0
			_, err := retrying(context.Background(), func() (Result, error) {
				runs++
				if runs <= c.fails {
					return Result{}, c.err
				}
				return Result{Status: 200}, nil
			})
			if runs != c.wantRuns || (err != nil) != c.wantErr {
				t.Fatalf("%d runs, error %v; want %d runs, error %v", runs, err, c.wantRuns, c.wantErr)
			}
		})
	}
}

// Unique-key reruns are counted apart from conflicts: two lost keys among
// many deadlocks still leave their third run.
func TestRetryingCountsLostKeysApartFromConflicts(t *testing.T) {
	runs := 0
	_, err := retrying(context.Background(), func() (Result, error) {
		runs++
		switch {
		case runs <= 2:
			return Result{}, &pgconn.PgError{Code: "23505"}
		case runs <= 20:
			return Result{}, &pgconn.PgError{Code: "40P01"}
		}
		return Result{Status: 200}, nil
	})
	if err != nil || runs != 21 {
		t.Fatalf("%d runs, error %v; want 21 runs and success", runs, err)
	}
}

// Conflicts without end stop once the budget is spent, and the write
// answers the last one's error.
func TestRetryingStopsWithinItsBudget(t *testing.T) {
	start := time.Now()
	_, err := retrying(context.Background(), func() (Result, error) { return Result{}, &pgconn.PgError{Code: "40P01"} })
	took := time.Since(start)
	if !conflict(err) {
		t.Fatalf("error %v, want the deadlock", err)
	}
	if took > retryBudget+100*time.Millisecond || took < retryBudget/2 {
		t.Fatalf("gave up after %v, want about %v", took, retryBudget)
	}
}
