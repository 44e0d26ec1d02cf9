package shortcut_test

import (
	"context"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// A memo answers within the SQLite transaction that filled it, never in
// the next one, and never on PostgreSQL, whose writers run side by side.
func TestATxMemoLastsOneSQLiteTransaction(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	var m shortcut.TxMemo[int]
	sqlite := apitest.Backend() == "sqlite"
	err := db.InTx(ctx, func(tx *ent.Tx) error {
		if _, ok := m.Get(db, tx, "a"); ok {
			t.Error("an empty memo answered")
		}
		m.Put(db, tx, "a", 7)
		if v, ok := m.Get(db, tx, "a"); ok != sqlite || (ok && v != 7) {
			t.Errorf("same transaction: %d %v, want 7 %v", v, ok, sqlite)
		}
		m.Forget()
		if _, ok := m.Get(db, tx, "a"); ok {
			t.Error("answered after Forget")
		}
		m.Put(db, tx, "a", 8)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.InTx(ctx, func(tx *ent.Tx) error {
		if v, ok := m.Get(db, tx, "a"); ok {
			t.Errorf("the next transaction got %d, kept by the one before", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
