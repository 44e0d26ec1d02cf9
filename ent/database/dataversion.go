package database

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// dataVersion watches a SQLite database for commits by any connection, in
// this process or another: SQLite's PRAGMA data_version, asked on one
// connection that never writes, changes exactly when someone else has
// committed since it was last asked. Asking it reads a counter in the WAL
// index (shared memory), no B-tree page: a check costs a few microseconds
// where asking a record for its version costs two B-tree descents, which
// at a million rows mostly miss the page cache.
//
// Those few microseconds, on one connection behind a mutex, were still a
// quarter of the server's CPU when reading one cached invoice. So each
// reading also keeps the WAL index's header as it was just before the
// PRAGMA ran (see walIndex): while the header stays the same, no commit
// happened, and the reading is given out again without asking SQLite.
type dataVersion struct {
	mu   sync.Mutex
	path string
	conn *sql.Conn
	db   *sql.DB
	// A connection counts from its own start, so after the connection is
	// reopened (see suspend) readings are offset by base to stay above
	// last, the highest reading given out before: no later reading can
	// equal an earlier one.
	base, last int64

	// wal maps the WAL index while conn is open (nil where that failed);
	// fast is the last reading with the header it holds for, or nil.
	wal     *walIndex
	fast    atomic.Pointer[reading]
	retired []*walIndex // unmapped by close only (see suspend)
	asked   atomic.Int64
}

type reading struct {
	wal *walIndex
	hdr walHeader
	v   int64
}

func openDataVersion(path string) (*dataVersion, error) {
	v := &dataVersion{path: path}
	if err := v.open(); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *dataVersion) open() error {
	// Its one statement stays prepared (_stmt_cache_size): it runs on every
	// cached read, and parsing it cost more than running it.
	db, err := sql.Open(sqliteDriver, "file:"+v.path+"?"+sqliteConnParams+"&_query_only=1&_cache_size=-64&_stmt_cache_size=4")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		return err
	}
	// A first reading opens the WAL index, which is then mapped for as long
	// as conn stays open; without it every reading asks SQLite.
	var n int64
	if err := conn.QueryRowContext(context.Background(), "PRAGMA data_version").Scan(&n); err != nil {
		conn.Close()
		db.Close()
		return err
	}
	v.conn, v.db = conn, db
	v.wal, _ = mapWALIndex(v.path)
	return nil
}

// DataVersion is a number that differs from an earlier reading whenever
// anything was committed to the database in between, and ok. Readings are
// only comparable with each other, within one open DB. On PostgreSQL ok is
// false: there is no such counter.
func (d *DB) DataVersion(ctx context.Context) (v int64, ok bool, err error) {
	if d.dv == nil {
		return 0, false, nil
	}
	// The last reading holds while the header it was taken under is still
	// the WAL index's header. The second load of fast makes sure suspend
	// did not retire the mapping meanwhile: a mapping left behind by a
	// switch out of WAL mode would never change again.
	if r := d.dv.fast.Load(); r != nil {
		if h, ok := r.wal.header(); ok && h == r.hdr && d.dv.fast.Load() == r {
			return r.v, true, nil
		}
	}
	return d.dv.ask(ctx)
}

// ask runs PRAGMA data_version.
func (v *dataVersion) ask(ctx context.Context) (int64, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn == nil {
		if err := v.open(); err != nil {
			return 0, false, err
		}
	}
	// The header is read before the PRAGMA: a commit in between changes
	// the header for good, so this pair is then never used. Read after, a
	// commit in between would pair the new header with the old reading.
	var hdr walHeader
	hdrOK := false
	if v.wal != nil {
		hdr, hdrOK = v.wal.header()
	}
	var n int64
	v.asked.Add(1)
	if err := v.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&n); err != nil {
		v.fast.Store(nil)
		return 0, false, err
	}
	n += v.base
	v.last = max(v.last, n)
	if hdrOK {
		v.fast.Store(&reading{wal: v.wal, hdr: hdr, v: n})
	} else {
		v.fast.Store(nil)
	}
	return n, true, nil
}

// suspend closes the connection until resume is called; readings wait
// meanwhile. Readings after it are all above the ones before.
func (v *dataVersion) suspend() (resume func()) {
	if v == nil {
		return func() {}
	}
	v.mu.Lock()
	v.fast.Store(nil)
	// The mapping outlives the connection (until close): a reading that
	// loaded it just before may still be looking at it.
	if v.wal != nil {
		v.retired = append(v.retired, v.wal)
		v.wal = nil
	}
	v.closeConn()
	return func() {
		v.base = v.last + 1
		_ = v.open() // or by the next reading, if this fails
		v.mu.Unlock()
	}
}

func (v *dataVersion) closeConn() {
	if v.conn != nil {
		v.conn.Close()
		v.db.Close()
		v.conn, v.db = nil, nil
	}
}

// close ends it for good; no reading may run meanwhile or after.
func (v *dataVersion) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fast.Store(nil)
	for _, w := range append(v.retired, v.wal) {
		if w != nil {
			w.unmap()
		}
	}
	v.wal, v.retired = nil, nil
	v.closeConn()
}
