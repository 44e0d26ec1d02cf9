package database_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// sqliteOnly skips a test of SQLite's own machinery when the suite runs on
// PostgreSQL.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if apitest.Backend() != "sqlite" {
		t.Skip("SQLite only")
	}
}

func openSQLite(t *testing.T) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "writer.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// A writer that gives up waiting for SQLite's one writer connection leaves
// without it, and statements outside a transaction hand the writer on.
func TestWriterTurnIsReturned(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	tx, err := db.Writer.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := db.Writer.Tx(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a writer waiting past its deadline got %v, want context.DeadlineExceeded", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// A query outside a transaction, then an exec, then a transaction: each
	// would block forever if the one before kept the turn.
	if _, err := db.Writer.Workspace.Query().All(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer.Workspace.Delete().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	done, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	tx, err = db.Writer.Tx(done)
	if err != nil {
		t.Fatalf("the writer was not handed back: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
