package shortcut

import (
	"context"
	"database/sql"
	"sync"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// dataVersion watches a SQLite database for commits by any connection, in
// any process: PRAGMA data_version, asked on one connection that never
// writes, changes exactly when someone else has committed since, and reads
// a counter in shared memory rather than a B-tree page.
type dataVersion struct {
	mu   sync.Mutex
	path string
	conn *sql.Conn
	db   *sql.DB
	// A reopened connection (see suspend) counts from its own start, so
	// readings are offset by base to stay above last, the highest given out.
	base, last int64
}

func (v *dataVersion) open() error {
	// Its one statement stays prepared: it runs on every cached read.
	db, err := sql.Open(database.SQLiteDriver, "file:"+v.path+"?"+database.SQLiteConnParams+"&_query_only=1&_cache_size=-64&_stmt_cache_size=4")
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
	v.conn, v.db = conn, db
	return nil
}

// DataVersion is a number that differs from an earlier reading whenever
// anything was committed to the database in between, and ok. Readings are
// only comparable with each other, within one open DB. On PostgreSQL ok is
// false: there is no such counter.
func (d *Set) DataVersion(ctx context.Context) (n int64, ok bool, err error) {
	v := d.dv
	if v == nil {
		return 0, false, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn == nil {
		if err := v.open(); err != nil {
			return 0, false, err
		}
	}
	if err := v.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&n); err != nil {
		return 0, false, err
	}
	n += v.base
	v.last = max(v.last, n)
	return n, true, nil
}

// suspend closes the connection until resume is called; readings wait
// meanwhile. Readings after it are all above the ones before.
func (v *dataVersion) suspend() (resume func()) {
	if v == nil {
		return func() {}
	}
	v.mu.Lock()
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
	v.closeConn()
}
