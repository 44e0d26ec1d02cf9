package shortcut

import (
	"context"
	"sync"

	"entgo.io/ent/dialect"
)

// Table versions: a number per workspace table that changes whenever a
// change to its rows commits, by any server. On SQLite it is the data
// version (one per database, asked in shared memory). On PostgreSQL it is
// the table's gen (tableGenSQL), which its statement triggers grow on every
// insert, update and delete in the changing transaction; asking it costs a
// round trip, so the askers of one moment share one: a query starts only
// after every asker it answers has asked, so a change committed before a
// request was made is in the version that request is given
// (read-your-writes across servers).

// AnyTable asks Version for the workspace's version: it changes whenever
// any of the workspace's counted tables does (not events, webhooks or the
// company profile: uncounted).
const AnyTable = "*"

// Version is table's version in workspace ws and ok, or ok false where
// there is none (a table without counters). Versions compare only with
// versions of the same workspace table from the same DB.
func (d *Set) Version(ctx context.Context, ws, table string) (v int64, ok bool, err error) {
	if d.db.Dialect != dialect.Postgres {
		return d.DataVersion(ctx)
	}
	if table != AnyTable && !d.counted(table) {
		return 0, false, nil
	}
	d.versionsOnce.Do(func() { d.versions = &versionReader{set: d} })
	v, err = d.versions.read(ctx, wsTable{ws, table})
	return v, err == nil, err
}

type wsTable struct{ ws, table string }

// VersionsSQL reads the versions of the workspace tables whose workspace
// ids and table names are its two arrays (PostgreSQL).
const VersionsSQL = `SELECT workspace_id, tbl, CAST(SUM(gen) AS BIGINT) FROM ` + totalsTable + `
	WHERE (workspace_id, tbl) IN (SELECT * FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]))) GROUP BY 1, 2`

// workspaceVersionsSQL reads the versions (AnyTable) of the workspaces
// in its array (PostgreSQL).
const workspaceVersionsSQL = `SELECT workspace_id, CAST(SUM(gen) AS BIGINT) FROM ` + totalsTable + `
	WHERE workspace_id = ANY(CAST($1 AS text[])) GROUP BY 1`

// versionReader runs at most one query at a time; the askers that come
// while it runs wait for the next, which asks for all of them at once.
type versionReader struct {
	set     *Set
	mu      sync.Mutex
	next    *versionBatch // the batch the next query answers; nil: none asked
	running bool          // a query runs (the reader's goroutine is alive)
}

type versionBatch struct {
	keys map[wsTable]int64
	err  error
	done chan struct{}
}

func (r *versionReader) read(ctx context.Context, k wsTable) (int64, error) {
	r.mu.Lock()
	b := r.next
	if b == nil {
		b = &versionBatch{keys: map[wsTable]int64{}, done: make(chan struct{})}
		r.next = b
	}
	b.keys[k] = 0
	if !r.running {
		r.running = true
		go r.run()
	}
	r.mu.Unlock()
	select {
	case <-b.done:
		return b.keys[k], b.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run answers batches until none is waiting.
func (r *versionReader) run() {
	for {
		r.mu.Lock()
		b := r.next
		r.next = nil
		if b == nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		b.err = r.query(b.keys)
		close(b.done)
	}
}

// query fills keys with their versions: a table without a counter row yet
// is at 0, below the gen any insert gives it.
func (r *versionReader) query(keys map[wsTable]int64) error {
	var wss, tables, whole []string
	for k := range keys {
		if k.table == AnyTable {
			whole = append(whole, k.ws)
		} else {
			wss, tables = append(wss, k.ws), append(tables, k.table)
		}
	}
	scan := func(q string, args []any, dest func(*wsTable) []any) error {
		if len(args[0].([]string)) == 0 {
			return nil
		}
		// Not bound to an asker's context: the others wait for the answer too.
		rows, err := r.set.db.ReadPool.QueryContext(context.Background(), q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			k, v := wsTable{table: AnyTable}, int64(0)
			if err := rows.Scan(append(dest(&k), &v)...); err != nil {
				return err
			}
			keys[k] = v
		}
		return rows.Err()
	}
	if err := scan(VersionsSQL, []any{wss, tables}, func(k *wsTable) []any { return []any{&k.ws, &k.table} }); err != nil {
		return err
	}
	return scan(workspaceVersionsSQL, []any{whole}, func(k *wsTable) []any { return []any{&k.ws} })
}
