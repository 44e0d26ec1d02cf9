// Package database opens Ledgerbase's store — SQLite by default, PostgreSQL
// to scale out —, migrates ent's schema, commits (group commit on SQLite,
// InTx), classifies database faults (FaultOf) and holds the few SQL helpers
// both dialects share. The indexes, counters and caches that make reads
// short are ent/shortcut's.
package database

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
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
	Writer    *ent.Client
	Reader    *ent.Client // through the concurrent read pool
	ReadPool  *sql.DB     // for hand-built list and get queries
	WritePool *sql.DB     // one connection on SQLite
	// SidePool runs the statements a write transaction waits for that are
	// not its own (numbers apart): were they on WritePool, transactions
	// holding every connection would each wait for one more (PostgreSQL).
	SidePool *sql.DB
	Dialect  string // dialect.SQLite or dialect.Postgres
	Path     string // the SQLite file (empty on PostgreSQL)
	// SettleWait bounds how long a reader of events waits for the writes
	// running when it asked (SettledSeq); zero is DefaultSettleWait.
	SettleWait time.Duration

	ckpt       *checkpointer // checkpoints beside the writer (SQLite; upkeep)
	stopUpkeep func()        // ends upkeep (SQLite)
	batch      *batcher      // shares the writer's transactions (SQLite; InTx)
	ends       ends          // what writes left to their transactions' ends (Deferred)

	closeOnce sync.Once
	closeErr  error

	off map[string]bool // the shortcuts switched off (Options.ShortcutsOff)

	// parts live and close with the DB (Part).
	partsMu sync.Mutex
	parts   map[any]io.Closer
	closed  bool // Close ran
}

// Part is the value kept under key, made by make on first use, and closed
// when the DB closes, before its pools: what a package keeps per database
// (ent/shortcut's caches and watchers) lives with it, in no global.
func (d *DB) Part(key any, make func() io.Closer) io.Closer {
	d.partsMu.Lock()
	defer d.partsMu.Unlock()
	if d.parts == nil {
		d.parts = map[any]io.Closer{}
	}
	p, ok := d.parts[key]
	if !ok {
		p = make()
		d.parts[key] = p
	}
	if d.closed {
		p.Close() // made after Close: nothing of it may start
	}
	return p
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

// BusyTimeout is how long a connection waits for a lock another holds.
const BusyTimeout = 10 * time.Second

// SQLiteConnParams go on every SQLite connection's DSN. database/sql never
// uses a connection from two goroutines at once, so SQLite's per-connection
// mutex is redundant (_mutex=no).
const SQLiteConnParams = "_mutex=no"

const (
	// SQLiteDriver opens SQLite connections with the settings below.
	SQLiteDriver = "sqlite3_ledgerbase"
	// sqliteWriter also leaves checkpoints to the checkpointer (upkeep).
	sqliteWriter = "sqlite3_ledgerbase_writer"
)

// memstatus records whether SQLite's memory statistics were switched off
// (memstatusOff); it runs before any init, hence before any open.
var memstatus = memstatusOff()

func init() {
	// PocketBase's proven settings, applied on every new connection; the
	// page cache is sized per pool in the DSN (see openSQLite).
	pragmas := []string{
		"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", fmt.Sprintf("PRAGMA busy_timeout=%d", BusyTimeout.Milliseconds()),
		"PRAGMA foreign_keys=ON", "PRAGMA temp_store=MEMORY",
	}
	hook := func(pragmas ...string) *sqlite3.SQLiteDriver {
		return &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			for _, p := range pragmas {
				if _, err := c.Exec(p, nil); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			return nil
		}}
	}
	sql.Register(SQLiteDriver, hook(pragmas...))
	sql.Register(sqliteWriter, hook(append(pragmas, "PRAGMA wal_autocheckpoint=0")...))
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
	// Page caches are private to a connection and count in the RSS; the OS
	// page cache holds the rest of the file. _txlock=immediate takes the
	// write lock at BEGIN, so writers queue instead of failing mid-transaction.
	d := &DB{Dialect: dialect.SQLite, Path: path, off: offSet(o.ShortcutsOff)}
	driver := SQLiteDriver
	if d.Uses("backgroundCheckpoints") {
		driver = sqliteWriter
	}
	w, err := sql.Open(driver, "file:"+path+"?"+SQLiteConnParams+"&_txlock=immediate&_fk=1&_stmt_cache_size=64&_cache_size=-16000")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1) // SQLite has one writer; a queue in Go beats lock retries
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open(SQLiteDriver, "file:"+path+"?"+SQLiteConnParams+"&_fk=1&_query_only=1&_stmt_cache_size=256&_cache_size=-4000")
	if err != nil {
		w.Close()
		return nil, err
	}
	n := cmp.Or(max(o.MaxOpenConns, 0), max(8, 4*runtime.NumCPU()))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("database: open %s: %w", path, err)
	}
	optimize(ctx, w)
	if driver == sqliteWriter {
		c, _ := sql.Open(SQLiteDriver, "file:"+path+"?"+SQLiteConnParams+"&_cache_size=-500") // the driver is registered: no error
		c.SetMaxOpenConns(1)
		c.SetConnMaxIdleTime(0)
		d.ckpt = &checkpointer{db: c}
	}
	d.Writer = ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, w)))
	d.Reader = ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, r)))
	d.ReadPool, d.WritePool = r, w
	d.stopUpkeep = d.upkeep()
	d.batch = &batcher{ent: d.Writer, turn: make(chan struct{}, 1), ends: &d.ends}
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
	side, err := sql.Open("pgx", url)
	if err != nil {
		db.Close()
		return nil, err
	}
	// Its statements are single and short; a few connections keep up.
	side.SetMaxOpenConns(max(2, runtime.NumCPU()))
	side.SetConnMaxIdleTime(5 * time.Minute)
	c := ent.NewClient(ent.Driver(beginDriver{Driver: entsql.OpenDB(dialect.Postgres, db), db: db}))
	return &DB{Writer: c, Reader: c, ReadPool: db, WritePool: db, SidePool: side, Dialect: dialect.Postgres, off: offSet(o.ShortcutsOff)}, nil
}

// Close closes every pool. Calling it again (a shutdown, then a deferred
// close) does nothing and returns the first call's error.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.partsMu.Lock()
		for _, p := range d.parts {
			d.closeErr = errors.Join(d.closeErr, p.Close())
		}
		d.parts, d.closed = nil, true
		d.partsMu.Unlock()
		if d.stopUpkeep != nil {
			d.stopUpkeep()
		}
		if d.ckpt != nil {
			d.ckpt.db.Close()
		}
		if d.Dialect == dialect.SQLite {
			optimize(context.Background(), d.WritePool)
		}
		d.closeErr = errors.Join(d.closeErr, d.Writer.Close())
		if d.ReadPool != d.WritePool {
			d.closeErr = errors.Join(d.closeErr, d.ReadPool.Close())
		}
		if d.SidePool != nil {
			d.closeErr = errors.Join(d.closeErr, d.SidePool.Close())
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

// Querier is a *sql.DB, a *sql.Tx, a *sql.Conn or an *ent.Tx.
type Querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// QueryStrings is the first column of the rows of q.
func QueryStrings(ctx context.Context, db Querier, q string, args ...any) ([]string, error) {
	var out []string
	var s string
	err := EachRow(ctx, db, q, args, []any{&s}, func() { out = append(out, s) })
	return out, err
}

// EachRow runs q and, for every row, scans it into dest and calls fn.
func EachRow(ctx context.Context, db Querier, q string, args, dest []any, fn func()) error {
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

// ExecAll runs stmts in order on db (a *sql.DB, *sql.Tx or *sql.Conn); an
// error names the statement that failed.
func ExecAll(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, stmts ...string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// RunTx runs fn in a transaction of db (a *sql.DB or *sql.Conn) and commits
// it unless fn fails.
func RunTx(ctx context.Context, db interface {
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

// LimitOffset ends a page query: the limit written out, the offset bound.
// SQLite re-prepares a cached statement whenever a bound LIMIT changes; an
// OFFSET binding does not, and limits are a few small numbers.
func LimitOffset(limit int) string { return " LIMIT " + strconv.Itoa(limit) + " OFFSET ?" }
