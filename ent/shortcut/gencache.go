package shortcut

import (
	"context"
	"sync"

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

// cached answers read's value, kept in c under key while gen stays the
// same (without one, ok false, it reads every time). gen is asked again
// after the read and the value kept only if it held: what was read in
// between may pair new rows with an old gen.
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

// tableGenSQL reads a workspace table's gen (arguments: workspace, table),
// the sum of its counters' gen: it grows on every insert and delete (and
// update, where a trigger needs it), so what was derived holds while it does.
const tableGenSQL = "SELECT CAST(COALESCE(SUM(gen), 0) AS BIGINT) FROM " + totalsTable + " WHERE workspace_id = ? AND tbl = ?"

// Cache keeps values a caller derives from several reads of one
// workspace, while nothing of the workspace is committed.
type Cache[V any] struct{ c genCache[V] }

// Get is read's value, kept under key while workspace ws's version holds;
// name is the shortcut (Names) that switches the cache.
func (c *Cache[V]) Get(ctx context.Context, db *database.DB, name, ws, key string, read func() (V, error)) (V, error) {
	return cached(&c.c, key, Of(db).workspaceGen(ctx, name, ws), read)
}
