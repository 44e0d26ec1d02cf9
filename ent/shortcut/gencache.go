package shortcut

import (
	"context"
	"sync"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// genCache keeps values derived from the database while a gen counter read
// from it is unchanged (day counts, a workspace's names, small search
// lookups). It forgets everything past 10,000 keys.
type genCache[V any] struct {
	mu sync.Mutex
	m  map[string]genEntry[V]
}

type genEntry[V any] struct {
	gen int64
	v   V
}

func (c *genCache[V]) get(key string, gen int64) (v V, ok bool) {
	if last, g, ok := c.last(key); ok && g == gen {
		return last, true
	}
	return v, false
}

// last is the value kept under key whatever its gen, and that gen: a start
// for bringing it up to date.
func (c *genCache[V]) last(key string) (V, int64, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	return e.v, e.gen, ok
}

func (c *genCache[V]) put(key string, gen int64, v V) {
	c.mu.Lock()
	if c.m == nil || len(c.m) > 10_000 {
		c.m = map[string]genEntry[V]{}
	}
	c.m[key] = genEntry[V]{gen, v}
	c.mu.Unlock()
}

// cached answers read's value, kept in c under key while gen (a number
// read from the database: a data version, a table's gen) stays the same.
// gen is asked again after the read, and the value kept only if it still
// holds: what was read in between may pair new rows with an old gen.
// Without a gen (ok false) the value is read every time.
func cached[V any](c *genCache[V], key string, gen func() (g int64, ok bool), read func() (V, error)) (V, error) {
	g, ok := gen()
	if ok {
		if v, hit := c.get(key, g); hit {
			return v, nil
		}
	}
	v, err := read()
	if err == nil && ok {
		if again, still := gen(); still && again == g {
			c.put(key, g, v)
		}
	}
	return v, err
}

func (c *genCache[V]) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// tableGenSQL reads a table's gen, the sum of the gen of a workspace
// table's list counters (arguments: workspace, table): it grows on every
// insert and delete (and the triggers that need it bump it on updates), so
// what was derived from the table holds while it does. Find runs it as a
// subquery beside the values' gen.
const tableGenSQL = "SELECT CAST(COALESCE(SUM(gen), 0) AS BIGINT) FROM " + totalsTable + " WHERE workspace_id = ? AND tbl = ?"

// Cache keeps values read from the database while nothing is committed
// (SQLite's data version): for a caller that derives them from several
// reads. On PostgreSQL, or with its shortcut off, it keeps nothing.
type Cache[V any] struct{ c genCache[V] }

// Get is read's value, kept under key while nothing is committed; name is
// the shortcut (Names) that switches the cache.
func (c *Cache[V]) Get(ctx context.Context, db *database.DB, name, key string, read func() (V, error)) (V, error) {
	return cached(&c.c, key, Of(db).dataVersionGen(ctx, name), read)
}

// TxMemo keeps what a SQLite write transaction read, for the rest of that
// transaction: SQLite lets one connection write at a time, so until the
// transaction ends only its own statements change what it read, and a
// caller that updates the memo with them can skip the read next time
// (group commit runs many writes in one transaction). On PostgreSQL, whose
// writers run side by side, it keeps nothing. One slot: a value read in
// another transaction is never answered.
type TxMemo[V any] struct {
	mu   sync.Mutex
	tx   *ent.Tx
	vals map[string]V
}

// Get answers the value kept for key in tx.
func (m *TxMemo[V]) Get(d *database.DB, tx *ent.Tx, key string) (v V, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d.Dialect != dialect.Postgres && m.tx == tx && d.Uses("txMemo") {
		v, ok = m.vals[key]
	}
	return v, ok
}

// Put keeps v for key in tx.
func (m *TxMemo[V]) Put(d *database.DB, tx *ent.Tx, key string, v V) {
	if d.Dialect == dialect.Postgres {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tx != tx {
		m.tx, m.vals = tx, map[string]V{}
	}
	m.vals[key] = v
}

// Forget drops everything kept: the caller changed what it depends on.
func (m *TxMemo[V]) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tx, m.vals = nil, nil
}
