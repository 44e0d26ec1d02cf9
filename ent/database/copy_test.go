package database_test

import (
	"context"
	"os"
	"testing"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// COPY joins the transaction begun on its connection: rolled back, the
// rows are gone; committed, they are all there.
func TestCopyFromJoinsTheConnectionsTransaction(t *testing.T) {
	pg := os.Getenv("LEDGERBASE_TEST_POSTGRES_URL")
	if pg == "" {
		t.Skip("COPY is PostgreSQL's; set LEDGERBASE_TEST_POSTGRES_URL")
	}
	ctx := context.Background()
	db, err := database.Open(ctx, pg, database.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.WritePool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE copy_probe (id TEXT PRIMARY KEY, n BIGINT)"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{"a", int64(1)}, {"b", int64(2)}, {"c", nil}}
	for _, commit := range []bool{false, true} {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := database.CopyFrom(ctx, conn, "copy_probe", []string{"id", "n"}, rows); err != nil || n != 3 {
			t.Fatalf("copied %d, %v", n, err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		var n int
		var sum int64
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(n), 0) FROM copy_probe").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 3}[commit]; n != want || commit && sum != 3 {
			t.Fatalf("committed %v: %d rows, sum %d", commit, n, sum)
		}
	}
}
