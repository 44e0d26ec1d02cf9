// Package shortcut holds every shortcut of Ledgerbase's reads and every
// cache kept over the database: counters, kept sums, full-text search, the
// data-version and access watchers, and the bulk loader that fills them at
// once. Each is named in Names and can be switched off at serve time.
// The search lives here because its shortcuts and the bulk loader share the
// counters' internals. Everything kept is per database, in the Set of Of.
package shortcut

import (
	"context"
	"io"
	"sync"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Set is one database's shortcuts: their SQL, what Migrate learnt, the
// caches and the watchers. Of gives it.
type Set struct {
	db  *database.DB
	sql sqlDialect
	// dv tells whether anything was committed (SQLite; see DataVersion).
	dv *dataVersion

	// values are, by table, the declared enum and boolean columns lists
	// filter on, whose rows are counted per value (set by Migrate). Only
	// declared ones: every counter is a write in every insert.
	values map[string][]string
	// searches are the word-indexed searches by table (set by Migrate;
	// Bulk fills their indexes itself).
	searches map[string]Search

	// The caches, each read through cached (gencache.go).
	dayCache    genCache[*days]   // a table's day counts, by its gen (Skip)
	valuesCache genCache[*values] // a Few column's values, by their gen (fewValues)
	probeCache  genCache[probed]  // small word lookups, by the table's gen (probe)

	// access watches for changes to API keys, roles and workspaces by any
	// process (see AccessGen); it starts on first use.
	access     *accessWatch
	accessOnce sync.Once

	// bulkConns are the connections of the PostgreSQL bulk loads running,
	// by their transaction (see CopyFrom).
	bulkConns sync.Map

	// versions reads table versions on PostgreSQL (Version).
	versions     *versionReader
	versionsOnce sync.Once
}

type setKey struct{}

// Of is db's Set, made on first use and closed with db.
func Of(db *database.DB) *Set {
	return db.Part(setKey{}, func() io.Closer {
		s := &Set{db: db, sql: sqliteSQL{}}
		if db.Dialect == dialect.Postgres {
			s.sql = postgresSQL{}
		} else {
			// A failed open is retried by the first reading.
			s.dv = &dataVersion{path: db.Path}
			_ = s.dv.open()
		}
		return s
	}).(*Set)
}

// Close stops the watchers; the DB calls it as it closes.
func (d *Set) Close() error {
	d.stopAccessWatch()
	if d.dv != nil {
		d.dv.close()
	}
	return nil
}

// workspaceGen is the gen of values derived from any of workspace ws's
// tables: SQLite's data version, or on PostgreSQL the workspace's version
// (every table's gen summed; AnyTable). None with the shortcut name off.
func (d *Set) workspaceGen(ctx context.Context, name, ws string) func() (int64, bool) {
	return func() (int64, bool) {
		if !d.db.Uses(name) {
			return 0, false
		}
		v, ok, err := d.Version(ctx, ws, AnyTable)
		return v, ok && err == nil
	}
}
