package shortcut

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
)

// Access changes: the API caches what a key stands for, and a change made
// by any process must reach every cache within a second. Triggers on
// api_keys, roles and workspaces bump the one row of access_changes in the
// changing transaction, and a watcher reads it every accessPoll (on SQLite
// only when PRAGMA data_version says something was committed).

const (
	accessTable   = "access_changes"
	accessVersion = "v2" // changes whenever the triggers below do
	// accessPoll is how often the watcher looks; accessStale how long after
	// its last good look the number is untrusted: a change is seen within a second.
	accessPoll  = 100 * time.Millisecond
	accessStale = 750 * time.Millisecond
)

// accessColumns are the columns of api_keys whose change alters what a key
// stands for; last_used_at, written once a minute per key in use, is not.
var accessColumns = []string{"workspace_id", "name", "role", "secret_hash", "prefix", "expires_at", "revoked_at", "rate_limit"}

// workspaceAccessColumns are the columns of workspaces a principal carries.
var workspaceAccessColumns = []string{"name", "plan", "commerce_mode", "commerce_module"}

// accessWatch is the running watcher of one DB.
type accessWatch struct {
	gen    atomic.Int64
	synced atomic.Int64 // unix nanoseconds of the last successful look; 0 = never
	stop   context.CancelFunc
	done   chan struct{}
}

// migrateAccess installs the counter row and the triggers that bump it.
func (d *Set) migrateAccess(ctx context.Context) error {
	return d.db.Rebuild(ctx, "access_changes_version", accessVersion, d.accessTriggersMissing, func(*sql.Tx) ([]string, error) {
		out := []string{
			"CREATE TABLE IF NOT EXISTS " + accessTable + " (id INTEGER PRIMARY KEY CHECK (id = 0), gen BIGINT NOT NULL)",
			"INSERT INTO " + accessTable + " (id, gen) VALUES (0, 0) ON CONFLICT (id) DO NOTHING",
		}
		if d.db.Dialect == dialect.Postgres {
			return append(out, postgresAccess()...), nil
		}
		return append(out, sqliteAccess()...), nil
	})
}

const accessBump = "UPDATE " + accessTable + " SET gen = gen + 1 WHERE id = 0;"

func sqliteAccess() []string {
	var out []string
	trigger := func(name, event, table string) {
		out = append(out, sqliteTrigger(name, event+" ON "+table, accessBump)...)
	}
	trigger("api_keys_access_ai", "INSERT", "api_keys") // a key cached as unknown becomes known
	trigger("api_keys_access_ad", "DELETE", "api_keys")
	trigger("api_keys_access_au", "UPDATE OF "+strings.Join(accessColumns, ", "), "api_keys")
	trigger("roles_access_ai", "INSERT", "roles") // a key's deleted role comes back
	trigger("roles_access_ad", "DELETE", "roles")
	trigger("roles_access_au", "UPDATE", "roles")
	trigger("workspaces_access_ad", "DELETE", "workspaces")
	trigger("workspaces_access_au", "UPDATE OF "+strings.Join(workspaceAccessColumns, ", "), "workspaces")
	return out
}

func postgresAccess() []string {
	// Once per statement: a bulk change bumps the counter once.
	out := []string{plpgsql("access_changes_bump", accessBump)}
	trigger := func(name, event, table string) {
		out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", name, table),
			fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH STATEMENT EXECUTE FUNCTION access_changes_bump()", name, event, table))
	}
	trigger("api_keys_access", "INSERT OR DELETE OR UPDATE OF "+strings.Join(accessColumns, ", "), "api_keys")
	trigger("roles_access", "INSERT OR DELETE OR UPDATE", "roles")
	trigger("workspaces_access", "DELETE OR UPDATE OF "+strings.Join(workspaceAccessColumns, ", "), "workspaces")
	// v1's triggers (same names, replaced above) called this to NOTIFY.
	return append(out, "DROP FUNCTION IF EXISTS ledgerbase_access_changed()")
}

// accessTriggersMissing reports whether a trigger was lost (a table
// rebuilt by hand), so Migrate installs them again.
func (d *Set) accessTriggersMissing(ctx context.Context) bool {
	q, want := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\_access\_a_' ESCAPE '\'`, 8
	if d.db.Dialect == dialect.Postgres {
		q, want = `SELECT COUNT(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE c.relnamespace = current_schema()::regnamespace AND t.tgname IN ('api_keys_access', 'roles_access', 'workspaces_access')`, 3
	}
	var n int
	return d.db.WritePool.QueryRowContext(ctx, q).Scan(&n) != nil || n != want
}

// AccessGen is a number that changes within a second of any committed
// change to what an API key stands for, by any process; ok says whether it
// can be trusted now (false while the watcher cannot see the database, or
// before its first look). The first call starts the watcher; Close stops it.
func (d *Set) AccessGen() (gen int64, ok bool) {
	if !d.db.Uses("accessWatch") {
		return 0, false
	}
	d.accessOnce.Do(d.startAccessWatch)
	w := d.access
	synced := w.synced.Load()
	return w.gen.Load(), synced != 0 && time.Since(time.Unix(0, synced)) < accessStale
}

func (d *Set) startAccessWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	w := &accessWatch{stop: cancel, done: make(chan struct{})}
	d.access = w
	go func() {
		defer close(w.done)
		d.watchAccess(ctx, w)
	}()
}

// stopAccessWatch ends the watcher, if it runs, before the pools close.
func (d *Set) stopAccessWatch() {
	d.accessOnce.Do(func() {}) // none may start after this
	if w := d.access; w != nil {
		w.stop()
		<-w.done
	}
}

// watchAccess reads the counter every accessPoll until ctx ends, reporting
// trouble to the default logger.
func (d *Set) watchAccess(ctx context.Context, w *accessWatch) {
	var version, gen int64
	known := false // version and gen hold a successful reading
	failing := false
	t := time.NewTicker(accessPoll)
	defer t.Stop()
	for {
		// A look answers as of its start, so the number is trusted from then.
		start := time.Now()
		err := func() error {
			// A slower look could not keep the number trusted anyway.
			ctx, cancel := context.WithTimeout(ctx, accessStale)
			defer cancel()
			v, ok, err := d.DataVersion(ctx) // ok only on SQLite
			if err != nil {
				return err
			}
			if known && ok && v == version {
				return nil // nothing committed since the last look
			}
			var g int64
			if err := d.db.ReadPool.QueryRowContext(ctx, "SELECT gen FROM "+accessTable+" WHERE id = 0").Scan(&g); err != nil {
				return err
			}
			// The first reading counts as a change: nobody looked before.
			if !known || g != gen {
				w.gen.Add(1)
			}
			version, gen, known = v, g, true
			return nil
		}()
		switch {
		case err == nil:
			w.synced.Store(start.UnixNano())
			if failing {
				slog.Info("access watch: reading the database again")
				failing = false
			}
		case ctx.Err() != nil:
			return
		default:
			// Untrusted now, not once stale; read afresh when it answers.
			known = false
			w.synced.Store(0)
			if !failing {
				slog.Warn("access watch: cannot read the database; API keys are looked up on every request meanwhile", "err", err)
				failing = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
