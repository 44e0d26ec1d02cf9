package idempotency_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/idempotencykey"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func workspace(t *testing.T) string {
	t.Helper()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(context.Background(), db.Writer, "Idem "+t.Name(), "starter", false, false)
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

// keep runs p's write transaction: Begin, then Keep with the answer.
func keep(t *testing.T, db *database.DB, p *idempotency.Pending, status int, body string) error {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Writer.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := p.Keep(ctx, tx, status, []byte(body)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func TestAKeyKeptWithItsWriteReplays(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Writer), workspace(t), context.Background()
	h := idempotency.Hash("POST", "/v1/clients", []byte(`{"name":"A"}`))
	if prev, err := s.Lookup(ctx, ws, "k", h); prev != nil || err != nil {
		t.Fatalf("first Lookup: %v %v", prev, err)
	}
	p := s.Pending(ws, "k", h)
	if err := keep(t, db, p, 201, `{"id":"cli_1"}`); err != nil || !p.Kept() {
		t.Fatalf("Keep: %v (kept %v)", err, p.Kept())
	}
	prev, err := s.Lookup(ctx, ws, "k", h)
	if err != nil || prev == nil || prev.Status != 201 || string(prev.Body) != `{"id":"cli_1"}` {
		t.Fatalf("replay: %+v %v", prev, err)
	}
	_, err = s.Lookup(ctx, ws, "k", idempotency.Hash("POST", "/v1/clients", []byte(`{"name":"B"}`)))
	wantCode(t, err, "idempotency_key_reused")
	// A duplicate that looked before the first committed finds the key
	// taken in its own transaction, and writes nothing.
	if err := keep(t, db, s.Pending(ws, "k", h), 201, `{"id":"cli_2"}`); !errors.Is(err, idempotency.ErrTaken) {
		t.Fatalf("a second Keep: %v, want ErrTaken", err)
	}
}

// A write that rolls back leaves no key behind: a retry runs it again.
func TestARolledBackWriteKeepsNoKey(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Writer), workspace(t), context.Background()
	h := idempotency.Hash("POST", "/v1/vendors", nil)
	tx, err := db.Writer.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Pending(ws, "k", h)
	if err := p.Begin(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := p.Keep(ctx, tx, 201, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if prev, err := s.Lookup(ctx, ws, "k", h); prev != nil || err != nil {
		t.Fatalf("after a rollback: %v %v, want nothing kept", prev, err)
	}
}

func TestARefusalIsKeptAndReplayed(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Writer), workspace(t), context.Background()
	h := idempotency.Hash("POST", "/v1/invoices/inv_x/payments", nil)
	e := apierr.Conflict("amount_exceeds_balance", "too much")
	if err := s.Pending(ws, "k", h).KeepOutcome(ctx, e.Status, idempotency.EncodeError(e)); err != nil {
		t.Fatal(err)
	}
	prev, err := s.Lookup(ctx, ws, "k", h)
	if err != nil || prev == nil {
		t.Fatalf("Lookup: %v %v", prev, err)
	}
	if r := prev.Replay(); r.Status != 409 || r.Code != "amount_exceeds_balance" || r.Message != "too much" {
		t.Fatalf("replayed %+v", r)
	}
}

func TestExpiredKeysAreSweptAndRunAgain(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	s, ws, ctx := idempotency.New(db.Writer), workspace(t), context.Background()
	s.SweepEvery = time.Hour
	if err := keep(t, db, s.Pending(ws, "old", "h"), 201, `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WritePool.ExecContext(ctx, db.Rebind("UPDATE idempotency_keys SET created_at = ? WHERE workspace_id = ? AND key = ?"),
		time.Now().UTC().Add(-25*time.Hour), ws, "old"); err != nil {
		t.Fatal(err)
	}
	// Expired, it is not replayed, and the request keeps its own answer.
	if prev, err := s.Lookup(ctx, ws, "old", "h"); prev != nil || err != nil {
		t.Fatalf("an expired key: %v %v", prev, err)
	}
	if err := keep(t, db, s.Pending(ws, "old", "h"), 200, `{"again":true}`); err != nil {
		t.Fatal(err)
	}
	if prev, _ := s.Lookup(ctx, ws, "old", "h"); prev == nil || string(prev.Body) != `{"again":true}` {
		t.Fatalf("after running again: %+v", prev)
	}
	// The sweep removes expired keys of every workspace.
	if err := keep(t, db, s.Pending(ws, "older", "h"), 201, `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WritePool.ExecContext(ctx, db.Rebind("UPDATE idempotency_keys SET created_at = ? WHERE workspace_id = ? AND key = ?"),
		time.Now().UTC().Add(-25*time.Hour), ws, "older"); err != nil {
		t.Fatal(err)
	}
	s.SweepEvery = 0
	if _, err := s.Lookup(ctx, ws, "new", "h"); err != nil {
		t.Fatal(err)
	}
	n, err := db.Writer.IdempotencyKey.Query().Where(idempotencykey.WorkspaceID(ws)).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("%d keys left, want only the one run again (%v)", n, err)
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
