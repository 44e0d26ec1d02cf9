package shortcut

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Bulk loading. On SQLite Bulk drops the per-row insert triggers (search
// index, totals, sums), does their work once for every row the load added,
// and creates them again from their own SQL before it commits: one
// transaction, so a failure leaves the database as it was, triggers
// included. Update and delete triggers stay: a load only inserts.

const (
	bulkCacheKiB = 64 << 10 // the writer's page cache during a load (BulkCache)
	// bulkTruncateWAL: a load that grew the WAL past this truncates it, so
	// no WAL as large as the data is left behind.
	bulkTruncateWAL = 64 << 20
)

// deferredTrigger is an insert trigger whose work Bulk does in one go.
type deferredTrigger struct {
	name, table, sql string
	fill             []bulkStmt // the trigger's work for the rows above a rowid
}

// bulkStmt is a statement that takes the rowid the load's rows are above,
// or no argument.
type bulkStmt struct {
	q     string
	above bool
}

// BulkOptions tune Bulk.
type BulkOptions struct {
	// Alone promises that nothing else in this process uses the DB while
	// the load runs, so on SQLite it may leave WAL mode (see alone).
	Alone bool
	// Tables are the tables the load inserts into. On PostgreSQL, with
	// Alone, Bulk defers their insert triggers, indexes and foreign keys
	// (see bulkPostgres), holding them locked until it commits: other
	// sessions wait for the load, even to read them.
	Tables []string
}

// Bulk runs load in one transaction on the writer, with SQLite's insert
// triggers deferred (see above); load must write through tx only, which
// holds the one writer connection. On PostgreSQL it is a plain transaction
// unless o names the Tables and promises Alone (see bulkPostgres). Either
// way load must only insert, and on PostgreSQL without savepoints: the
// deferred work counts the rows the transaction itself added.
func (d *Set) Bulk(ctx context.Context, o BulkOptions, load func(tx *sql.Tx) error) error {
	if d.db.Dialect != dialect.SQLite {
		if o.Alone && len(o.Tables) > 0 {
			return d.bulkPostgres(ctx, o.Tables, load)
		}
		return database.RunTx(ctx, d.db.WritePool, load)
	}
	defer d.BulkCache(ctx)() // restored after conn is handed back
	conn, err := d.db.WritePool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	alone, back := false, func() {}
	if o.Alone {
		alone, back = d.alone(ctx, conn)
	}
	defer back() // after the transaction below has ended
	if err := d.bulk(ctx, conn, load); err != nil {
		return err
	}
	if st, err := os.Stat(d.db.Path + "-wal"); err == nil && st.Size() > bulkTruncateWAL && !alone {
		// Best effort: readers may hold the WAL; it shrinks at a later checkpoint then.
		_, _ = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	return nil
}

// bulk is Bulk's transaction on SQLite.
func (d *Set) bulk(ctx context.Context, conn *sql.Conn, load func(tx *sql.Tx) error) error {
	return database.RunTx(ctx, conn, func(tx *sql.Tx) error {
		deferred, err := d.deferredTriggers(ctx, tx)
		if err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		// Rows the load adds have rowids above the largest one now: the
		// transaction holds the write lock, so nobody else adds any.
		above := map[string]int64{}
		var drops, restores []string
		for _, t := range deferred {
			if _, ok := above[t.table]; !ok {
				var n int64
				if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(rowid), 0) FROM "+t.table).Scan(&n); err != nil {
					return fmt.Errorf("database: bulk load: %w", err)
				}
				above[t.table] = n
			}
			drops, restores = append(drops, "DROP TRIGGER "+t.name), append(restores, t.sql)
		}
		indexes, err := deferredIndexes(ctx, tx)
		if err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		for _, ix := range indexes {
			drops, restores = append(drops, "DROP INDEX "+quoteIdent(ix.name)), append(restores, ix.sql)
		}
		if err := database.ExecAll(ctx, tx, drops...); err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		if err := load(tx); err != nil {
			return err
		}
		for _, t := range deferred {
			for _, st := range t.fill {
				var args []any
				if st.above {
					args = append(args, above[t.table])
				}
				if _, err := tx.ExecContext(ctx, st.q, args...); err != nil {
					return fmt.Errorf("database: bulk load: %s: %w", st.q, err)
				}
			}
		}
		// The triggers and indexes come back from their own SQL.
		if err := database.ExecAll(ctx, tx, restores...); err != nil {
			return fmt.Errorf("database: bulk load: restore: %w", err)
		}
		return nil
	})
}

// deferredIndexes are the plain (not unique: upserts need those) indexes of
// tables empty when a load starts, which Bulk builds again after the load:
// building from sorted rows beats inserting at random places of a large
// B-tree. A table that already holds rows keeps its indexes.
func deferredIndexes(ctx context.Context, tx *sql.Tx) ([]sqlIndex, error) {
	var all []sqlIndex
	var ix sqlIndex
	err := database.EachRow(ctx, tx, `SELECT t.name, i.name, i.sql FROM sqlite_master t, pragma_index_list(t.name) l, sqlite_master i
		WHERE t.type = 'table' AND l.origin = 'c' AND NOT l."unique" AND i.type = 'index' AND i.name = l.name AND i.sql IS NOT NULL
		ORDER BY i.name`, nil, []any{&ix.table, &ix.name, &ix.sql}, func() { all = append(all, ix) })
	if err != nil {
		return nil, err
	}
	empty := map[string]bool{}
	out := all[:0]
	for _, ix := range all {
		if _, ok := empty[ix.table]; !ok {
			var has bool
			if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quoteIdent(ix.table)+")").Scan(&has); err != nil {
				return nil, err
			}
			empty[ix.table] = !has
		}
		if empty[ix.table] {
			out = append(out, ix)
		}
	}
	return out, nil
}

type sqlIndex struct{ table, name, sql string }

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// deferredTriggers finds the insert triggers Bulk knows how to replace. A
// trigger of another shape keeps firing row by row: slower, never wrong.
func (d *Set) deferredTriggers(ctx context.Context, tx *sql.Tx) ([]deferredTrigger, error) {
	var out []deferredTrigger
	var t deferredTrigger
	err := database.EachRow(ctx, tx, "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name", nil, []any{&t.name, &t.table, &t.sql}, func() {
		t.fill = nil
		switch t.name {
		case t.table + "_fts_ai":
			// Only the trigger this process's searches make (see Migrate).
			if s, ok := d.searches[t.table]; ok && t.sql == searchInsertTrigger(s) {
				for _, q := range searchInserts(s, true) {
					t.fill = append(t.fill, bulkStmt{q: q, above: true})
				}
			}
		case t.table + "_totals_ai":
			if d.counted(t.table) {
				t.fill = d.bulkTotals(t.table)
			}
		case t.table + "_sums_ai":
			t.fill = d.bulkSums(t.table)
		}
		if t.fill != nil {
			out = append(out, t)
		}
	})
	return out, err
}

// bulkTotals counts the rows above a rowid as the totals insert trigger
// does (gen too grows by one per row), through one scan into a temporary
// table of counts by workspace, day and values.
func (d *Set) bulkTotals(t string) []bulkStmt {
	sel, group := "workspace_id AS w, "+d.sql.dayOf("")+" AS d", "1, 2"
	cols := d.values[t]
	for i, c := range cols {
		sel += fmt.Sprintf(", %s AS k%d", valueKey(t, c, ""), i)
		group += fmt.Sprintf(", %d", i+3)
	}
	upsert := " ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = n + excluded.n, gen = gen + excluded.gen"
	out := []bulkStmt{
		{q: "DROP TABLE IF EXISTS temp.bulk_counts"},
		{q: fmt.Sprintf("CREATE TEMP TABLE bulk_counts AS SELECT %s, COUNT(*) AS n FROM %s WHERE rowid > ? GROUP BY %s", sel, t, group), above: true},
		{q: fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n, gen) SELECT w, '%s', 0, SUM(n), SUM(n) FROM temp.bulk_counts WHERE true GROUP BY w",
			totalsTable, t) + upsert},
		{q: fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, day, shard, n) SELECT w, '%s', d, 0, SUM(n) FROM temp.bulk_counts WHERE true GROUP BY w, d"+
			" ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = n + excluded.n", daysTable, t)},
	}
	for i := range cols {
		out = append(out, bulkStmt{q: fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n, gen) SELECT w, k%d, 0, SUM(n), SUM(n) FROM temp.bulk_counts WHERE true GROUP BY w, k%d",
			totalsTable, i, i) + upsert})
	}
	return append(out, bulkStmt{q: "DROP TABLE temp.bulk_counts"})
}

// insertTriggersMissing tells Migrate whether one of tables lacks its SQLite
// insert trigger <table><suffix> (a second line of defence behind Bulk).
func (d *Set) insertTriggersMissing(tables []string, suffix string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		if d.db.Dialect != dialect.SQLite {
			return false
		}
		var n int
		err := d.db.WritePool.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (SELECT value || ? FROM json_each(?))",
			suffix, `["`+strings.Join(tables, `","`)+`"]`).Scan(&n)
		return err != nil || n != len(tables)
	}
}

// BulkCache gives the SQLite writer connection a page cache of bulkCacheKiB
// until restore is called, so a long load keeps its hot pages in memory.
func (d *Set) BulkCache(ctx context.Context) (restore func()) {
	var cache int64
	// The writer pool holds one connection, kept open (no idle timeout).
	if d.db.Dialect != dialect.SQLite || d.db.WritePool.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache) != nil ||
		database.ExecAll(ctx, d.db.WritePool, fmt.Sprintf("PRAGMA cache_size=%d", -bulkCacheKiB)) != nil {
		return func() {}
	}
	return func() {
		_, _ = d.db.WritePool.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size=%d", cache))
	}
}

// alone tries to leave WAL mode on conn, the writer: in rollback-journal
// mode a load into empty tables writes its pages once, straight into the
// file, and a crash still undoes it (the hot journal). That needs the
// writer to be the file's only connection, so alone closes this process's
// idle readers, checkpointer and data-version connection; when another process has the
// file open the load stays in WAL mode. It returns whether it switched, and
// back, which must run once the load's transaction has ended: it returns
// the file to WAL mode and reopens what alone closed.
func (d *Set) alone(ctx context.Context, conn *sql.Conn) (ok bool, back func()) {
	resumeCheckpoints := d.db.PauseCheckpoints()
	resumeDV := d.dv.suspend()
	idle := d.db.ReadPool.Stats().MaxOpenConnections // openSQLite keeps every reader idle
	d.db.ReadPool.SetMaxIdleConns(0)                 // closes the idle readers
	reopen := func() {
		d.db.ReadPool.SetMaxIdleConns(idle)
		resumeDV()
		resumeCheckpoints()
	}
	if !journalMode(ctx, conn, "DELETE", 0) {
		reopen()
		return false, func() {}
	}
	return true, func() {
		ctx := context.WithoutCancel(ctx)
		if !journalMode(ctx, conn, "WAL", database.BusyTimeout) {
			// Never hand a rollback-mode writer back: a fresh connection
			// puts the file in WAL mode again (see init's pragmas).
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		reopen()
	}
}

// journalMode asks conn to switch to mode, waiting at most wait for the
// locks that needs, and reports whether it is in that mode after.
func journalMode(ctx context.Context, conn *sql.Conn, mode string, wait time.Duration) bool {
	var now string
	err := database.WithBusyTimeout(ctx, conn, wait, func() error {
		return conn.QueryRowContext(ctx, "PRAGMA journal_mode="+mode).Scan(&now)
	})
	return err == nil && strings.EqualFold(now, mode)
}
