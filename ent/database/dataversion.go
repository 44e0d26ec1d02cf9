package database

import (
	"context"
	"database/sql"
	"sync"
)

// dataVersion watches a SQLite database for commits by any connection, in
// this process or another: SQLite's PRAGMA data_version, asked on one
// connection that never writes, changes exactly when someone else has
// committed since it was last asked. Asking it reads a counter in the WAL
// index (shared memory), no B-tree page: a check costs a few microseconds
// where asking a record for its version costs two B-tree descents, which
// at a million rows mostly miss the page cache.
type dataVersion struct {
	mu   sync.Mutex
	conn *sql.Conn
	db   *sql.DB
}

func openDataVersion(path string) (*dataVersion, error) {
	db, err := sql.Open(sqliteDriver, "file:"+path+"?_query_only=1&_cache_size=-64")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		return nil, err
	}
	return &dataVersion{conn: conn, db: db}, nil
}

// DataVersion is a number that differs from an earlier reading whenever
// anything was committed to the database in between, and ok. Readings are
// only comparable with each other, within one open DB. On PostgreSQL ok is
// false: there is no such counter.
func (d *DB) DataVersion(ctx context.Context) (v int64, ok bool, err error) {
	if d.dv == nil {
		return 0, false, nil
	}
	d.dv.mu.Lock()
	defer d.dv.mu.Unlock()
	if err := d.dv.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, false, err
	}
	return v, true, nil
}

func (v *dataVersion) close() {
	v.conn.Close()
	v.db.Close()
}
