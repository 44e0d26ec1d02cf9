package idempotency_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/ent/idempotencykey"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func workspace(t *testing.T) string {
	t.Helper()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(context.Background(), db.Ent, "Idem "+t.Name(), "starter", false, false)
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if e, ok := apierr.As(err); !ok || e.Code != code || e.Status != http.StatusConflict {
		t.Fatalf("error %v, want 409 %s", err, code)
	}
}

func TestAKeyRunsOnceThenReplays(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Ent), workspace(t), context.Background()
	h := idempotency.Hash("POST", "/v1/clients", []byte(`{"name":"A"}`))
	claim, prev, err := s.Begin(ctx, ws, "k", h)
	if err != nil || claim == nil || prev != nil {
		t.Fatalf("first Begin: %v %v %v", claim, prev, err)
	}
	// While the first request runs, a duplicate is refused, never run.
	_, _, err = s.Begin(ctx, ws, "k", h)
	wantCode(t, err, "idempotency_key_in_use")
	_, _, err = s.Begin(ctx, ws, "k", idempotency.Hash("POST", "/v1/clients", []byte(`{"name":"B"}`)))
	wantCode(t, err, "idempotency_key_reused")
	if err := claim.Finish(ctx, 201, []byte(`{"id":"cli_1"}`)); err != nil {
		t.Fatal(err)
	}
	claim, prev, err = s.Begin(ctx, ws, "k", h)
	if err != nil || claim != nil || prev == nil || prev.Status != 201 || string(prev.Body) != `{"id":"cli_1"}` {
		t.Fatalf("replay: %v %+v %v", claim, prev, err)
	}
}

func TestAReleasedKeyRunsAgain(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Ent), workspace(t), context.Background()
	h := idempotency.Hash("POST", "/v1/vendors", nil)
	claim, _, err := s.Begin(ctx, ws, "k", h)
	if err != nil {
		t.Fatal(err)
	}
	if err := claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if claim, _, err = s.Begin(ctx, ws, "k", h); err != nil || claim == nil {
		t.Fatalf("after release: %v %v", claim, err)
	}
}

func TestAnAbandonedClaimIsTakenOverAfterItsLease(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Ent), workspace(t), context.Background()
	s.Lease = 50 * time.Millisecond
	h := idempotency.Hash("POST", "/v1/vendors", nil)
	if _, _, err := s.Begin(ctx, ws, "k", h); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // past the lease
	claim, prev, err := s.Begin(ctx, ws, "k", h)
	if err != nil || claim == nil || prev != nil {
		t.Fatalf("takeover: %v %v %v", claim, prev, err)
	}
}

func TestExpiredKeysAreSwept(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Ent), workspace(t), context.Background()
	s.SweepEvery = 0
	claim, _, err := s.Begin(ctx, ws, "old", "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := claim.Finish(ctx, 201, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write.ExecContext(ctx, db.Rebind("UPDATE idempotency_keys SET created_at = ? WHERE workspace_id = ? AND key = ?"),
		time.Now().UTC().Add(-25*time.Hour), ws, "old"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Begin(ctx, ws, "new", "h"); err != nil {
		t.Fatal(err)
	}
	n, err := db.Ent.IdempotencyKey.Query().Where(idempotencykey.WorkspaceID(ws)).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("%d keys left, want only the new one (%v)", n, err)
	}
}

func TestKeysMustBeShortPrintableASCII(t *testing.T) {
	t.Parallel()
	for _, k := range []string{string(make([]byte, 256)), "tab\tkey", "clé"} {
		if idempotency.Check(k) == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	if err := idempotency.Check("order-2026-0001"); err != nil {
		t.Fatal(err)
	}
}
