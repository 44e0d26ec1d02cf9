// Package database opens Ledgerbase's store — SQLite by default, PostgreSQL
// to scale out — migrates it, and owns the parts of the schema ent cannot
// express: the full-text search indexes behind `q`.
package database

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/ledgerbase/ledgerbase/ent"
	_ "github.com/ledgerbase/ledgerbase/ent/runtime" // schema defaults and hooks
)

// DefaultURL is where the appliance keeps its data when told nothing else.
const DefaultURL = "sqlite:./data/ledgerbase.db"

// DB is an open store.
type DB struct {
	// Writer writes (and reads inside write transactions). On SQLite it holds
	// the single writer connection.
	Writer *ent.Client
	// Reader reads through the concurrent read pool.
	Reader *ent.Client
	// ReadPool is the read pool for hand-built list and get queries.
	ReadPool *sql.DB
	// WritePool is the writer pool (one connection on SQLite).
	WritePool *sql.DB
	// Dialect is dialect.SQLite or dialect.Postgres.
	Dialect string
	// sql is the SQL that differs between them.
	sql sqlDialect
	// Path is the SQLite file (empty on PostgreSQL).
	Path string

	// ckpt checkpoints the SQLite WAL off the writer (see checkpoints).
	ckpt *checkpointer
	// dv tells whether anything was committed (SQLite; see DataVersion).
	dv *dataVersion
	// batch shares the writer's transactions among queued writes (SQLite;
	// see InTx).
	batch *batcher
	// ends are what writes left to their transactions' ends (Deferred).
	ends ends

	// values are, by table, the columns whose values lists filter on
	// (declared enums and booleans: status, online...), set by Migrate:
	// rows are also counted per value, so a list filtered on one of them
	// has an exact total without a scan. Only declared filters are counted:
	// every counter is one more write in every insert's transaction.
	values map[string][]string
	// searches are the word-indexed searches by table (set by Migrate;
	// Bulk fills their indexes itself).
	searches map[string]Search

	// searchGens keeps a search's generations under the data version they
	// were read at (see Find).
	searchGens genCache[searchGens]

	closeOnce sync.Once
	closeErr  error

	// off are the shortcuts switched off (Options.ShortcutsOff).
	off map[string]bool

	// access watches for changes to API keys, roles and workspaces by any
	// process (see AccessGen); it starts on first use.
	access     *accessWatch
	accessOnce sync.Once
}

// Options tunes the pools; zero values pick defaults.
type Options struct {
	MaxOpenConns int
	MaxIdleConns int
	// ShortcutsOff names shortcuts switched off: the plain path answers
	// in their place (the names: ent/shortcut).
	ShortcutsOff []string
}

// Uses reports whether the shortcut name is on (see Options.ShortcutsOff).
func (d *DB) Uses(name string) bool { return !d.off[name] }

func offSet(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// busyTimeout is how long a connection waits for a lock another holds.
const busyTimeout = 10 * time.Second

// sqliteConnParams go on every SQLite connection's DSN. database/sql never
// uses a connection from two goroutines at once, so SQLite's own
// per-connection mutex, taken and released on every call (each bind, step
// and column read), is redundant: _mutex=no opens with SQLITE_OPEN_NOMUTEX.
const sqliteConnParams = "_mutex=no"

const (
	sqliteDriver = "sqlite3_ledgerbase"
	// sqliteWriter is the writer's driver: the same settings, and no
	// checkpoints of its own (a background connection runs them).
	sqliteWriter = "sqlite3_ledgerbase_writer"
)

// memstatus records whether SQLite's memory statistics were switched off
// (memstatusOff); it runs before any init, hence before any open.
var memstatus = memstatusOff()

func init() {
	// PocketBase's proven settings, applied on every new connection; the
	// page cache is sized per pool in the DSN (see openSQLite).
	pragmas := []string{
		"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", fmt.Sprintf("PRAGMA busy_timeout=%d", busyTimeout.Milliseconds()),
		"PRAGMA foreign_keys=ON", "PRAGMA temp_store=MEMORY",
	}
	hook := func(pragmas []string) func(c *sqlite3.SQLiteConn) error {
		return func(c *sqlite3.SQLiteConn) error {
			for _, p := range pragmas {
				if _, err := c.Exec(p, nil); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			return nil
		}
	}
	sql.Register(sqliteDriver, &sqlite3.SQLiteDriver{ConnectHook: hook(pragmas)})
	sql.Register(sqliteWriter, &sqlite3.SQLiteDriver{ConnectHook: hook(append(pragmas[:len(pragmas):len(pragmas)], "PRAGMA wal_autocheckpoint=0"))})
}

// Open connects to url: "sqlite:PATH" (or a bare path) or "postgres://...".
func Open(ctx context.Context, url string, o Options) (*DB, error) {
	if url == "" {
		url = DefaultURL
	}
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return openPostgres(ctx, url, o)
	}
	return openSQLite(ctx, strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "sqlite:"), o)
}

func openSQLite(ctx context.Context, path string, o Options) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, errors.New("database: SQLite needs a file path (sqlite:./data/ledgerbase.db)")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("database: create %s: %w", dir, err)
		}
	}
	// Page caches are private to a connection and count in the process's
	// RSS: 16 MB for the writer and 8 MB per reader keep a busy server
	// within its memory budget; the OS page cache holds the rest of the file.
	// _txlock=immediate takes the write lock at BEGIN, so concurrent writers
	// queue on busy_timeout instead of failing with SQLITE_BUSY mid-transaction.
	off := offSet(o.ShortcutsOff)
	writerDriver := sqliteWriter
	if off["backgroundCheckpoints"] {
		writerDriver = sqliteDriver // SQLite's own checkpoints, in commits
	}
	w, err := sql.Open(writerDriver, "file:"+path+"?"+sqliteConnParams+"&_txlock=immediate&_fk=1&_stmt_cache_size=64&_cache_size=-16000")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1) // SQLite has one writer; a queue in Go beats lock retries
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open(sqliteDriver, "file:"+path+"?"+sqliteConnParams+"&_fk=1&_query_only=1&_stmt_cache_size=256&_cache_size=-4000")
	if err != nil {
		w.Close()
		return nil, err
	}
	n := cmp.Or(max(o.MaxOpenConns, 0), max(8, 4*runtime.NumCPU()))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	fail := func(err error) (*DB, error) {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("database: open %s: %w", path, err)
	}
	if err := w.PingContext(ctx); err != nil {
		return fail(err)
	}
	optimize(ctx, w)
	var ckpt *checkpointer
	if !off["backgroundCheckpoints"] {
		if ckpt, err = startCheckpoints(path, w); err != nil {
			return fail(err)
		}
	}
	dv := &dataVersion{path: path}
	if err := dv.open(); err != nil {
		if ckpt != nil {
			ckpt.stop()
		}
		return fail(err)
	}
	writer := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, w)))
	d := &DB{
		ckpt:      ckpt,
		dv:        dv,
		Writer:    writer,
		Reader:    ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, r))),
		ReadPool:  r,
		WritePool: w,
		Dialect:   dialect.SQLite,
		sql:       sqliteSQL{},
		Path:      path,
		off:       off,
	}
	d.batch = &batcher{ent: writer, turn: make(chan struct{}, 1), ends: &d.ends}
	return d, nil
}

func openPostgres(ctx context.Context, url string, o Options) (*DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	n := cmp.Or(max(o.MaxOpenConns, 0), 4*runtime.NumCPU())
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(max(o.MaxIdleConns, n))
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database: connect to PostgreSQL: %w", err)
	}
	c := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	return &DB{Writer: c, Reader: c, ReadPool: db, WritePool: db, Dialect: dialect.Postgres, sql: postgresSQL{}, off: offSet(o.ShortcutsOff)}, nil
}

// Close closes every pool. Calling it again (a shutdown, then a deferred
// close) does nothing and returns the first call's error.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.stopAccessWatch()
		// The checkpointer first: the writer's close then checkpoints
		// what is left and removes the WAL.
		if d.ckpt != nil {
			d.ckpt.stop()
		}
		if d.dv != nil {
			d.dv.close()
		}
		if d.Dialect == dialect.SQLite {
			optimize(context.Background(), d.WritePool)
		}
		d.closeErr = d.Writer.Close()
		if d.ReadPool != d.WritePool {
			d.closeErr = errors.Join(d.closeErr, d.ReadPool.Close())
		}
	})
	return d.closeErr
}

// Ping checks that the database answers (readiness).
func (d *DB) Ping(ctx context.Context) error { return d.ReadPool.PingContext(ctx) }

// Rebind turns ?-placeholders into the dialect's ($1, $2 on PostgreSQL).
func (d *DB) Rebind(q string) string {
	if d.Dialect != dialect.Postgres {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	for n := 1; ; n++ {
		before, after, found := strings.Cut(q, "?")
		b.WriteString(before)
		if !found {
			return b.String()
		}
		b.WriteString("$" + strconv.Itoa(n))
		q = after
	}
}

// querier is a *sql.DB, a *sql.Tx, a *sql.Conn or an *ent.Tx.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// QueryStrings is the first column of the rows of q.
func QueryStrings(ctx context.Context, db querier, q string, args ...any) ([]string, error) {
	var out []string
	var s string
	err := eachRow(ctx, db, q, args, []any{&s}, func() { out = append(out, s) })
	return out, err
}

// eachRow runs q and, for every row, scans it into dest and calls fn.
func eachRow(ctx context.Context, db querier, q string, args, dest []any, fn func()) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		fn()
	}
	return rows.Err()
}

// execAll runs stmts in order on db (a *sql.DB, *sql.Tx or *sql.Conn); an
// error names the statement that failed.
func execAll(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, stmts ...string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// inTx runs fn in a transaction of db (a *sql.DB or *sql.Conn) and commits
// it unless fn fails.
func inTx(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
