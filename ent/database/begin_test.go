package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// An event writer's transaction on PostgreSQL holds the writers' shared
// lock from its BEGIN, before its first write; it commits what it did, and
// a commit after a failed statement is an error, not a silent rollback.
func TestEventWriterTxIsRegisteredFromItsBegin(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("SQLite's writers are not registered: the one writer commits in order")
	}
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	held := func(tx *ent.Tx) int {
		t.Helper()
		var n int
		rows, err := tx.QueryContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted AND pid = pg_backend_pid()")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	err := db.InEventWriterTx(ctx, "ws_begin", func(tx *ent.Tx) error {
		if n := held(tx); n != 1 {
			t.Errorf("an event writer's transaction holds %d shared advisory locks at its start, want 1", n)
		}
		return tx.Workspace.Create().SetID("ws_begin").SetName("Begun").SetPlan(workspace.PlanGrowth).Exec(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.Reader.Workspace.Query().Where(workspace.ID("ws_begin")).Count(ctx); err != nil || n != 1 {
		t.Fatalf("committed workspace: %d, %v", n, err)
	}
	if err := db.InTx(ctx, func(tx *ent.Tx) error {
		if n := held(tx); n != 0 {
			t.Errorf("a plain transaction holds %d advisory locks", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	err = db.InEventWriterTx(ctx, "ws_begin", func(tx *ent.Tx) error {
		if err := tx.Workspace.Create().SetID("ws_lost").SetName("Lost").SetPlan(workspace.PlanGrowth).Exec(ctx); err != nil {
			return err
		}
		_, _ = tx.ExecContext(ctx, "SELECT 1/0") // failed, and its error dropped
		return nil
	})
	if !errors.Is(err, database.ErrCommitRolledBack) {
		t.Fatalf("a commit after a failed statement: %v, want ErrCommitRolledBack", err)
	}
	if n, err := db.Reader.Workspace.Query().Where(workspace.ID("ws_lost")).Count(ctx); err != nil || n != 0 {
		t.Fatalf("the rolled back workspace: %d, %v", n, err)
	}
	// The pool's connections are usable after both.
	for range 8 {
		if err := db.InEventWriterTx(ctx, "ws_begin", func(tx *ent.Tx) error { held(tx); return nil }); err != nil {
			t.Fatal(err)
		}
	}
}
