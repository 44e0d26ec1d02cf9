package database_test

import (
	"context"
	"testing"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// SQLite's memory statistics are off in every process that links this
// package, so connections allocate without a process-wide mutex: with them
// on, SQLite counts every byte it allocates.
func TestSQLiteCountsNoMemory(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	db := openSQLite(t)
	var n int
	if err := db.ReadPool.QueryRowContext(context.Background(), "SELECT count(*) FROM workspaces").Scan(&n); err != nil {
		t.Fatal(err)
	}
	used, off := database.SQLiteMemoryCounted()
	if !off || used != 0 {
		t.Fatalf("SQLite's memory statistics are on (switched off at start: %v; %d bytes counted)", off, used)
	}
}
