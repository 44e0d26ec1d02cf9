package shortcut_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// The access tests are not parallel: other tests' keys and roles would
// move the number, and cutting the counter off would fail their writes.

// watchedAndOther opens two handles on the package's database: one whose
// access watch the test reads, and one that writes as another process would.
func watchedAndOther(t *testing.T) (watched, other *database.DB) {
	t.Helper()
	_, url := apitest.DB(t)
	open := func() *database.DB {
		db, err := database.Open(context.Background(), url, database.Options{MaxOpenConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	return open(), open()
}

// within polls cond until it holds, and fails the test when it has not
// after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	from := time.Now()
	for !cond() {
		if time.Since(from) > d {
			t.Fatalf("%s: not after %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// trustedGen waits for the watcher to be current and returns its number.
func trustedGen(t *testing.T, db *database.DB) int64 {
	t.Helper()
	var gen int64
	within(t, time.Second, "access watch current", func() bool {
		g, ok := shortcut.Of(db).AccessGen()
		gen = g
		return ok
	})
	return gen
}

// Every change to what a key stands for, committed through another
// connection, moves the number within a second; a key's last use does not.
func TestAccessGenFollowsChangesByAnotherConnection(t *testing.T) {
	watched, other := watchedAndOther(t)
	ctx := context.Background()
	seen := func(what string, change func() error) {
		t.Helper()
		before := trustedGen(t, watched)
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		within(t, time.Second, what, func() bool { g, ok := shortcut.Of(watched).AccessGen(); return ok && g != before })
	}
	var wsID, keyID string
	seen("new workspace and role", func() error {
		ws, err := access.NewWorkspace(ctx, other.Writer, "access watch", "starter", false, false)
		if err != nil {
			return err
		}
		wsID = ws.ID
		_, err = access.NewRole(ctx, other.Writer, wsID, "clerk", map[string]string{"invoices": "read"})
		return err
	})
	seen("new key", func() error {
		_, k, err := access.NewKey(ctx, other.Writer, access.KeySpec{WorkspaceID: wsID, Name: "watched"})
		if k != nil {
			keyID = k.ID
		}
		return err
	})
	seen("plan change", func() error {
		_, err := other.WritePool.ExecContext(ctx, other.Rebind("UPDATE workspaces SET plan = 'growth' WHERE id = ?"), wsID)
		return err
	})
	seen("revocation", func() error { return access.RevokeKey(ctx, other.Writer, keyID) })

	before := trustedGen(t, watched)
	if err := other.Writer.APIKey.UpdateOneID(keyID).SetLastUsedAt(time.Now().UTC()).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * 100 * time.Millisecond) // three of the watcher's looks
	if g, ok := shortcut.Of(watched).AccessGen(); !ok || g != before {
		t.Fatalf("after a key's last use: number %d (trusted %v), want %d trusted", g, ok, before)
	}
}

// While the watcher cannot read the counter, the number is not trusted
// (callers read afresh); once it can, it is trusted again under a new
// number, since a change may have been missed meanwhile.
func TestAccessGenIsNotTrustedWhileTheCounterCannotBeRead(t *testing.T) {
	type cut struct {
		name     string
		postgres bool // PostgreSQL only
		// off makes the counter unreadable and returns what restores it.
		off func(t *testing.T, other *database.DB) (on func())
	}
	exec := func(t *testing.T, db *database.DB, q string) {
		t.Helper()
		if _, err := db.WritePool.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cuts := []cut{
		{name: "reads fail", off: func(t *testing.T, other *database.DB) func() {
			exec(t, other, "ALTER TABLE access_changes RENAME TO access_changes_away")
			return func() { exec(t, other, "ALTER TABLE access_changes_away RENAME TO access_changes") }
		}},
		{name: "reads hang", postgres: true, off: func(t *testing.T, other *database.DB) func() {
			tx, err := other.WritePool.BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("LOCK TABLE access_changes IN ACCESS EXCLUSIVE MODE"); err != nil {
				tx.Rollback()
				t.Fatal(err)
			}
			return func() { tx.Rollback() }
		}},
	}
	for _, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			if c.postgres && apitest.Backend() != "postgres" {
				t.Skip("PostgreSQL only")
			}
			watched, other := watchedAndOther(t)
			before := trustedGen(t, watched)
			on := c.off(t, other)
			restored := false
			defer func() {
				if !restored {
					on() // the package's other tests need the counter
				}
			}()
			within(t, time.Second, "untrusted", func() bool { _, ok := shortcut.Of(watched).AccessGen(); return !ok })
			time.Sleep(time.Second) // and it stays so
			if g, ok := shortcut.Of(watched).AccessGen(); ok {
				t.Fatalf("trusted (number %d) while the counter cannot be read", g)
			}
			on()
			restored = true
			within(t, time.Second, "trusted again under a new number", func() bool { g, ok := shortcut.Of(watched).AccessGen(); return ok && g != before })
		})
	}
}

// A database the watcher cannot read is reported once per outage, not at
// every poll (ten a second).
func TestAccessWatchWarnsOncePerOutage(t *testing.T) {
	sqliteOnly(t)
	db := openSQLite(t)
	warns := &warnCount{}
	prev := slog.Default()
	slog.SetDefault(slog.New(warns))
	t.Cleanup(func() { slog.SetDefault(prev) })
	sc := shortcut.Of(db)
	within(t, time.Second, "trusted", func() bool { _, ok := sc.AccessGen(); return ok })
	db.ReadPool.Close() // every read fails from now on
	if _, err := access.NewWorkspace(context.Background(), db.Writer, "outage", "starter", false, false); err != nil {
		t.Fatal(err) // a commit, so the watcher reads
	}
	within(t, time.Second, "untrusted", func() bool { _, ok := sc.AccessGen(); return !ok })
	time.Sleep(10 * 100 * time.Millisecond) // ten more polls
	if n := warns.n.Load(); n != 1 {
		t.Errorf("%d warnings in one outage, want 1", n)
	}
}

// warnCount counts the access watch's warnings.
type warnCount struct{ n atomic.Int32 }

func (w *warnCount) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnCount) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnCount) WithGroup(string) slog.Handler            { return w }
func (w *warnCount) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "access watch") {
		w.n.Add(1)
	}
	return nil
}
