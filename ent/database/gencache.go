package database

import (
	"context"
	"sync"
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

func (c *genCache[V]) get(key string, gen int64) (V, bool) {
	v, g, ok := c.last(key)
	if !ok || g != gen {
		var zero V
		return zero, false
	}
	return v, true
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

// dataVersionGen is the gen of values that hold while nothing is
// committed (SQLite's data version; none on PostgreSQL).
func (d *DB) dataVersionGen(ctx context.Context) func() (int64, bool) {
	return func() (int64, bool) {
		v, ok, err := d.DataVersion(ctx)
		return v, ok && err == nil
	}
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
