package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Access changes: the API caches what a key stands for (its revocation,
// expiry and role, its role's grants, its workspace's plan and commerce
// settings), and a change made by any process — the CLI, another `serve`,
// the admin UI of another process — must reach every cache within a
// second. Triggers on api_keys, roles and workspaces record every such
// change in the same transaction as the change, whatever wrote it:
//
//   - SQLite: they bump the one row of access_changes. A watcher asks
//     PRAGMA data_version (DataVersion) every accessPoll and reads that row
//     only when something was committed.
//   - PostgreSQL: they NOTIFY accessChannel. A watcher LISTENs on a
//     connection of its own, and between notifications proves every
//     accessPoll that the connection still answers (a silently dead one
//     would otherwise hide changes); it reconnects when it breaks.
//
// AccessGen gives a number that changes after each such change, and says
// whether the watcher is current: when it is not (the database does not
// answer, the listener is reconnecting) callers must read afresh.

// AccessWatchName is the application_name of the PostgreSQL listener.
const AccessWatchName = "ledgerbase access watch"

const (
	accessTable   = "access_changes"
	accessChannel = "ledgerbase_access"
	// accessVersion changes whenever the triggers below do.
	accessVersion = "v1"
	// accessPoll is how often the SQLite watcher looks, accessPing how long
	// the PostgreSQL listener waits quietly before it proves its connection;
	// accessStale is how long after its last successful look the number is
	// no longer trusted. Together they bound how late a change is seen:
	// under a second.
	accessPoll  = 100 * time.Millisecond
	accessPing  = 250 * time.Millisecond
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

// migrateAccess installs the triggers (and on SQLite the counter row).
func (d *DB) migrateAccess(ctx context.Context) error {
	return d.rebuild(ctx, "access_changes_version", accessVersion, d.accessTriggersMissing, func(*sql.Tx) ([]string, error) {
		if d.Dialect == dialect.Postgres {
			return postgresAccess(), nil
		}
		return sqliteAccess(), nil
	})
}

func sqliteAccess() []string {
	bump := "UPDATE " + accessTable + " SET gen = gen + 1 WHERE id = 0;"
	out := []string{
		"CREATE TABLE IF NOT EXISTS " + accessTable + " (id INTEGER PRIMARY KEY CHECK (id = 0), gen BIGINT NOT NULL)",
		"INSERT INTO " + accessTable + " (id, gen) VALUES (0, 0) ON CONFLICT (id) DO NOTHING",
	}
	trigger := func(name, event, table string) {
		out = append(out, "DROP TRIGGER IF EXISTS "+name,
			fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s BEGIN %s END", name, event, table, bump))
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
	// The payload is the schema, so watchers of other schemas of the same
	// database (tests run one per process) can ignore it.
	out := []string{plpgsql("ledgerbase_access_changed", "PERFORM pg_notify('"+accessChannel+"', current_schema());")}
	trigger := func(name, event, table string) {
		out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", name, table),
			fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH STATEMENT EXECUTE FUNCTION ledgerbase_access_changed()", name, event, table))
	}
	trigger("api_keys_access", "INSERT OR DELETE OR UPDATE OF "+strings.Join(accessColumns, ", "), "api_keys")
	trigger("roles_access", "INSERT OR DELETE OR UPDATE", "roles")
	trigger("workspaces_access", "DELETE OR UPDATE OF "+strings.Join(workspaceAccessColumns, ", "), "workspaces")
	return out
}

// accessTriggersMissing reports whether a trigger was lost (a table
// rebuilt by hand), so Migrate installs them again.
func (d *DB) accessTriggersMissing(ctx context.Context) bool {
	var n, want int
	var err error
	if d.Dialect == dialect.Postgres {
		want = 3
		err = d.Write.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE c.relnamespace = current_schema()::regnamespace AND t.tgname IN ('api_keys_access', 'roles_access', 'workspaces_access')`).Scan(&n)
	} else {
		want = 8
		err = d.Write.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\_access\_a_' ESCAPE '\'`).Scan(&n)
	}
	return err != nil || n != want
}

// AccessGen is a number that changes within a second of any committed
// change to what an API key stands for, by any process; ok says whether it
// can be trusted now (false while the watcher cannot see the database, or
// before its first look). The first call starts the watcher; Close stops it.
func (d *DB) AccessGen() (gen int64, ok bool) {
	d.accessOnce.Do(d.startAccessWatch)
	w := d.access
	synced := w.synced.Load()
	return w.gen.Load(), synced != 0 && time.Since(time.Unix(0, synced)) < accessStale
}

// logger is where the watcher reports trouble: the process's default
// logger, which `serve` sets to its structured log.
func (d *DB) logger() *slog.Logger { return slog.Default() }

func (d *DB) startAccessWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	w := &accessWatch{stop: cancel, done: make(chan struct{})}
	d.access = w
	go func() {
		defer close(w.done)
		if d.Dialect == dialect.Postgres {
			d.listenAccess(ctx, w)
		} else {
			d.pollAccess(ctx, w)
		}
	}()
}

// stopAccessWatch ends the watcher, if it runs, before the pools close.
func (d *DB) stopAccessWatch() {
	d.accessOnce.Do(func() {}) // none may start after this
	if w := d.access; w != nil {
		w.stop()
		<-w.done
	}
}

func (w *accessWatch) seen() { w.synced.Store(time.Now().UnixNano()) }

// pollAccess is the SQLite watcher.
func (d *DB) pollAccess(ctx context.Context, w *accessWatch) {
	var version, gen int64
	known := false // version and gen hold a successful reading
	failing := false
	t := time.NewTicker(accessPoll)
	defer t.Stop()
	for {
		err := func() error {
			v, ok, err := d.DataVersion(ctx)
			if err != nil {
				return err
			}
			if known && ok && v == version {
				return nil // nothing committed since the last look
			}
			var g int64
			if err := d.Read.QueryRowContext(ctx, "SELECT gen FROM "+accessTable+" WHERE id = 0").Scan(&g); err != nil {
				return err
			}
			if !known || g != gen {
				w.gen.Add(1)
			}
			version, gen, known = v, g, true
			return nil
		}()
		switch {
		case err == nil:
			w.seen()
			if failing {
				d.logger().Info("access watch: reading the database again")
				failing = false
			}
		case ctx.Err() != nil:
			return
		default:
			// Untrusted from now; the counter is read afresh once the
			// database answers again.
			known = false
			w.synced.Store(0)
			if !failing {
				d.logger().Warn("access watch: cannot read the database; API keys are looked up on every request meanwhile", "err", err)
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

// listenAccess is the PostgreSQL watcher: LISTEN on a connection of its
// own, reconnecting with a growing pause while the server is unreachable.
func (d *DB) listenAccess(ctx context.Context, w *accessWatch) {
	cfg, err := d.pgxConfig(ctx)
	if err != nil {
		d.logger().Error("access watch: no connection settings; API keys are looked up on every request", "err", err)
		return
	}
	pause := accessPoll
	for ctx.Err() == nil {
		listened, err := d.listenOnce(ctx, cfg, w)
		w.synced.Store(0) // untrusted from now, not only once it goes stale
		if ctx.Err() != nil {
			return
		}
		if listened {
			pause = accessPoll // it was up: the pause grows only while it stays down
		}
		d.logger().Warn("access watch: listener lost; API keys are looked up on every request until it is back", "err", err, "retry_in", pause.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// pgxConfig copies the settings (URL, search_path) of the pool's connections.
func (d *DB) pgxConfig(ctx context.Context) (*pgx.ConnConfig, error) {
	c, err := d.Read.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var cfg *pgx.ConnConfig
	err = c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		cfg = sc.Conn().Config().Copy()
		// The copy carries the pool connection's own notification
		// handler; without one, pgx buffers notifications for the
		// listener's connection.
		cfg.OnNotification = nil
		// Named, so an operator can tell it in pg_stat_activity.
		cfg.RuntimeParams["application_name"] = AccessWatchName
		return nil
	})
	return cfg, err
}

// listenOnce runs one listener connection until it fails or ctx ends;
// listened says whether it got as far as listening.
func (d *DB) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, w *accessWatch) (listened bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, cfg.Copy())
	cancel()
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+accessChannel); err != nil {
		return false, err
	}
	// Whatever changed while nobody listened is unknown: count it as a change.
	w.gen.Add(1)
	w.seen()
	for {
		wctx, cancel := context.WithTimeout(ctx, accessPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if n == nil || n.Payload == schema {
				w.gen.Add(1)
			}
			w.seen()
		case ctx.Err() != nil:
			return true, nil
		case pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded):
			// Quiet: prove the connection still answers. A notification
			// that arrives meanwhile is kept for the next wait.
			pctx, cancel := context.WithTimeout(ctx, accessStale-accessPing)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
			w.seen()
		default:
			return true, err
		}
	}
}
