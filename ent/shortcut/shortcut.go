// Package shortcut holds every shortcut of Ledgerbase's reads and every
// cache kept over the database: the list counters and day counts, the kept
// sums, the full-text search with its value counts, value log and probe
// cache, the data-version watcher, the access watcher of the key cache,
// and the bulk loader that fills them at once. Each is named in Names and
// can be switched off at serve time, when the plain path answers instead.
//
// The full-text search lives here, not in a package of its own: its
// shortcuts read the counters' generations and the data version, and the
// bulk loader fills its index with the counters, so apart they would
// export each other's internals.
//
// Everything kept is kept per database, in the Set that Of returns: the
// caches are fields of it, never package globals.
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

	// values are, by table, the columns whose values lists filter on
	// (declared enums and booleans: status, online...), set by Migrate:
	// rows are also counted per value, so a list filtered on one of them
	// has an exact total without a scan. Only declared filters are counted:
	// every counter is one more write in every insert's transaction.
	values map[string][]string
	// searches are the word-indexed searches by table (set by Migrate;
	// Bulk fills their indexes itself).
	searches map[string]Search

	// The caches, each read through cached (gencache.go).
	dayCache    genCache[*days]    // a table's day counts, by its gen (Skip)
	sumsCache   genCache[[]SumRow] // kept sums, by data version (SumsOf)
	valuesCache genCache[*values]  // a Few column's values, by their gen (fewValues)
	probeCache  genCache[probed]   // small word lookups, by the table's gen (probe)

	// access watches for changes to API keys, roles and workspaces by any
	// process (see AccessGen); it starts on first use.
	access     *accessWatch
	accessOnce sync.Once
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

// uses reports whether the shortcut name is on.
func (d *Set) uses(name string) bool { return d.db.Uses(name) }

// dataVersionGen is the gen of values that hold while nothing is
// committed (SQLite's data version; none on PostgreSQL, nor with the
// shortcut name off).
func (d *Set) dataVersionGen(ctx context.Context, name string) func() (int64, bool) {
	return func() (int64, bool) {
		if !d.uses(name) {
			return 0, false
		}
		v, ok, err := d.DataVersion(ctx)
		return v, ok && err == nil
	}
}
