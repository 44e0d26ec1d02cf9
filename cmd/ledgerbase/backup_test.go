package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/customer"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

func TestBackupOfALiveDatabaseHoldsEveryCommittedRecord(t *testing.T) {
	t.Parallel()
	db, url := apitest.DB(t)
	out := filepath.Join(t.TempDir(), "backup.db")
	if apitest.Backend() == "postgres" {
		_, err := runCLI(t, "", "backup", "--database-url", url, "--out", out)
		if err == nil || !strings.Contains(err.Error(), "pg_dump") {
			t.Fatalf("backup on PostgreSQL = %v, want a pointer to pg_dump", err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatal("backup on PostgreSQL wrote a file")
		}
		return
	}
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Backup test", "starter", false, false)
	if err != nil {
		t.Fatal(err)
	}
	// A writer commits clients one by one until told to stop.
	var mu sync.Mutex
	var committed []string
	stop, writerDone := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			c, err := db.Writer.Customer.Create().SetWorkspaceID(ws.ID).SetName(fmt.Sprintf("Client %d", i)).Save(ctx)
			if err != nil {
				writerDone <- err
				return
			}
			mu.Lock()
			committed = append(committed, c.ID)
			mu.Unlock()
		}
	}()
	waitFor := func(n int) []string {
		for {
			mu.Lock()
			ids := append([]string(nil), committed...)
			mu.Unlock()
			if len(ids) >= n {
				return ids
			}
			time.Sleep(time.Millisecond)
		}
	}
	before := waitFor(50)
	msg, err := runCLI(t, "", "backup", "--database-url", url, "--out", out)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	during := waitFor(len(before) + 20) // the writer kept going
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if !strings.Contains(msg, "backup written to "+out) {
		t.Errorf("backup said %q", msg)
	}
	if st, err := os.Stat(out); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("backup file mode %v, want 0600", st.Mode().Perm())
	}

	// The copy opens as a Ledgerbase database and holds every record
	// committed before the backup began.
	copyDB, err := database.Open(ctx, "sqlite:"+out, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	var check string
	if err := copyDB.ReadPool.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	got, err := copyDB.Reader.Customer.Query().Where(customer.WorkspaceID(ws.ID)).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, id := range got {
		have[id] = true
	}
	for _, id := range before {
		if !have[id] {
			t.Fatalf("client %s, committed before the backup, is missing from it", id)
		}
	}
	// Whatever else it holds was committed too: a snapshot, never a torn write.
	written := map[string]bool{}
	for _, id := range during {
		written[id] = true
	}
	if len(got) > len(during) {
		t.Errorf("backup holds %d clients, more than the %d written by then", len(got), len(during))
	}
	for _, id := range got {
		if !written[id] {
			t.Errorf("backup holds client %s that was never committed", id)
		}
	}

	// A second backup does not overwrite the first.
	if _, err := runCLI(t, "", "backup", "--database-url", url, "--out", out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("backup over an existing file = %v", err)
	}
}

func TestBackupRefusesAMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := runCLI(t, "", "backup", "--database-url", "sqlite:"+filepath.Join(dir, "none.db"), "--out", filepath.Join(dir, "b.db"))
	if err == nil || !strings.Contains(err.Error(), "none.db") {
		t.Fatalf("backup of a missing database = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("backup created the database it was asked to copy")
	}
}
