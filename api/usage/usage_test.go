package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/usage"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestFlushesAddUp(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Usage", "starter", false, false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec := usage.New(db.Writer)
	rec.Record(ws.ID, "key_a", 200, now)
	rec.Record(ws.ID, "key_a", 404, now)
	rec.Record(ws.ID, "key_b", 429, now)
	rec.Record(ws.ID, "key_a", 200, now.Add(-30*time.Hour)) // outside the last day
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A second process (another recorder) adds to the same hour.
	other := usage.New(db.Writer)
	other.Record(ws.ID, "key_a", 500, now)
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(ctx); err != nil { // nothing pending: adds nothing
		t.Fatal(err)
	}
	got, err := usage.Since(ctx, db.Writer, ws.ID, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]usage.Counts{
		"key_a": {Requests: 3, Errors: 2, RateLimited: 0},
		"key_b": {Requests: 1, Errors: 1, RateLimited: 1},
	}
	if len(got) != len(want) || got["key_a"] != want["key_a"] || got["key_b"] != want["key_b"] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestRunFlushesWhenStopped(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(context.Background(), db.Writer, "Usage run", "starter", false, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := usage.New(db.Writer)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx, time.Hour); close(done) }()
	rec.Record(ws.ID, "key_c", 200, time.Now())
	stop()
	<-done
	got, err := usage.Since(context.Background(), db.Writer, ws.ID, time.Now().Add(-time.Hour))
	if err != nil || got["key_c"].Requests != 1 {
		t.Fatalf("after shutdown: %+v %v", got, err)
	}
}
