package shortcut

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"

	"github.com/ledgerbase/ledgerbase/ent/migrate"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// List totals: an unfiltered list's exact meta.total without COUNT(*).
// Triggers keep per-workspace row counts in list_totals in the writing
// transaction, so every write path keeps them right without knowing. On
// PostgreSQL concurrent inserts would queue on one counter row, so each
// count has totalShards rows, picked by transaction id: transactions
// running together have nearby ids, so up to totalShards of them take
// distinct rows, and one transaction keeps to one shard. SQLite uses
// shard 0.

const (
	totalsTable = "list_totals"
	// daysTable splits the counts by day of created_at, so a deep offset
	// skips only within its day (see Skip).
	daysTable   = "list_days"
	totalShards = 16
)

// totalsVersion changes whenever the trigger definitions do (a rebuild).
const totalsVersion = "v8"

// uncounted are workspace tables no list total reads (they count by their
// own queries), spared a trigger on every insert.
var uncounted = []string{"events", "webhook_endpoints", "webhook_deliveries", "webhook_attempts", "companies"}

// countedTables are the tables with a workspace_id column, found once.
// Callers must not change the slice.
var countedTables = sync.OnceValue(func() []string { return database.WorkspaceTables(uncounted...) })

// setValueColumns keeps, of each search's Counted columns, the enums and
// booleans of its table.
func (d *Set) setValueColumns(searches []Search) {
	d.values = map[string][]string{}
	for _, s := range searches {
		for _, t := range migrate.Tables {
			if t.Name != s.Table {
				continue
			}
			for _, c := range t.Columns {
				if (c.Type == field.TypeEnum || c.Type == field.TypeBool) && slices.Contains(s.Counted, c.Name) {
					d.values[t.Name] = appendNew(d.values[t.Name], c.Name)
				}
			}
		}
	}
}

// valueKey is the SQL of the counter name of a row's value of column c:
// "sales_orders:status=confirmed". ref is "new.", "old." or "" (a row of a
// FROM); SQLite stores booleans as 1 and 0, PostgreSQL prints true and false.
func valueKey(table, c, ref string) string {
	return fmt.Sprintf("'%s:%s=' || coalesce(CAST(%s%s AS TEXT), '')", table, c, ref, c)
}

// ValueKey is the counter name of the rows of table whose column c is v
// (a string or a bool, as list filters carry them).
func (d *Set) ValueKey(table, c string, v any) string {
	s := fmt.Sprint(v)
	if b, ok := v.(bool); ok {
		s = d.sql.boolText(b)
	}
	return table + ":" + c + "=" + s
}

func (d *Set) migrateTotals(ctx context.Context) error {
	tables := countedTables()
	marker := totalsVersion + ":" + strings.Join(tables, ",")
	if d.db.Dialect == dialect.Postgres {
		marker += ";gen grows on update" // the table versions (versions.go)
	}
	for _, t := range tables {
		if cols := d.values[t]; len(cols) > 0 {
			marker += ";" + t + ":" + strings.Join(cols, ",")
		}
	}
	return d.db.Rebuild(ctx, "list_totals_version", marker, d.insertTriggersMissing(tables, "_totals_ai"), func(tx *sql.Tx) ([]string, error) {
		return d.totalsSchema(ctx, tx, tables)
	})
}

// totalsSchema is the SQL that builds the list counters of tables from
// scratch; the recount runs in the triggers' transaction, so no insert is
// counted twice or missed.
func (d *Set) totalsSchema(ctx context.Context, tx *sql.Tx, tables []string) ([]string, error) {
	// gen grows on every change of a counter, so caches can tell they are current.
	stmts := []string{"DROP TABLE IF EXISTS " + totalsTable, "DROP TABLE IF EXISTS " + daysTable,
		`CREATE TABLE ` + totalsTable + ` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL,
			shard INTEGER NOT NULL, n BIGINT NOT NULL, gen BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (workspace_id, tbl, shard))`,
		`CREATE TABLE ` + daysTable + ` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, day TEXT NOT NULL,
			shard INTEGER NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (workspace_id, tbl, day, shard))`}
	// Value counters of columns no longer declared stop with their triggers.
	stale, err := d.sql.staleTotals(ctx, tx)
	if err != nil {
		return nil, err
	}
	stmts = append(stmts, stale...)
	for _, t := range tables {
		stmts = append(stmts, d.sql.totalsTriggers(d, t)...)
	}
	// A table's version must not come back to a value a running server
	// may have cached an answer at: a rebuilt gen starts above any earlier
	// one (the clock, in microseconds).
	gen := "0"
	if d.db.Dialect == dialect.Postgres {
		gen = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
	}
	for _, t := range tables {
		stmts = append(stmts,
			fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n, gen) SELECT workspace_id, '%s', 0, COUNT(*), %s FROM %s GROUP BY workspace_id",
				totalsTable, t, gen, t),
			fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, day, shard, n) SELECT workspace_id, '%s', %s, 0, COUNT(*) FROM %s GROUP BY 1, 3",
				daysTable, t, d.sql.dayOf(""), t))
		for _, c := range d.values[t] {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) SELECT workspace_id, %s, 0, COUNT(*) FROM %s GROUP BY 1, 2",
				totalsTable, valueKey(t, c, ""), t))
		}
		if d.db.Dialect == dialect.Postgres {
			// Empty tables too: they may have had rows, and versions, before.
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n, gen) SELECT id, '%s', 0, 0, %s FROM workspaces ON CONFLICT DO NOTHING",
				totalsTable, t, gen))
		}
	}
	return stmts, nil
}

// Skip turns a deep offset into the day it falls in: the rows of the
// workspace's table created before the end of that day (cond, with its
// argument) start at the returned offset rest. ok is false for a table
// without counts.
func (d *Set) Skip(ctx context.Context, workspaceID, table string, offset int) (cond string, arg any, rest int, ok bool) {
	if !d.counted(table) {
		return "", nil, 0, false
	}
	days, err := d.dayCounts(ctx, workspaceID, table)
	if err != nil || len(days.day) == 0 {
		return "", nil, 0, false
	}
	// The newest day whose rows reach past offset; before[i] counts the rows of newer days.
	i := sort.Search(len(days.day), func(i int) bool { return days.before[i]+days.n[i] > int64(offset) })
	if i == len(days.day) {
		i-- // past the end: an empty page from the oldest day
	}
	t, err := time.Parse(time.DateOnly, days.day[i])
	if err != nil {
		return "", nil, 0, false
	}
	return "t.created_at < ?", d.sql.dayBound(t.AddDate(0, 0, 1)), offset - int(days.before[i]), true
}

// days are a table's row counts per day, newest first.
type days struct {
	day    []string
	n      []int64
	before []int64 // rows of newer days
}

func (d *Set) dayCounts(ctx context.Context, workspaceID, table string) (*days, error) {
	gen := func() (g int64, ok bool) {
		err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind(tableGenSQL), workspaceID, table).Scan(&g)
		return g, err == nil
	}
	return cached(&d.dayCache, workspaceID+"|"+table, gen, func() (*days, error) {
		c := &days{}
		var day string
		var n, sum int64
		err := database.EachRow(ctx, d.db.ReadPool, d.db.Rebind("SELECT day, CAST(SUM(n) AS BIGINT) FROM "+daysTable+" WHERE workspace_id = ? AND tbl = ? GROUP BY day ORDER BY day DESC"),
			[]any{workspaceID, table}, []any{&day, &n}, func() {
				c.day, c.n, c.before = append(c.day, day), append(c.n, n), append(c.before, sum)
				sum += n
			})
		return c, err
	})
}

// counted reports whether name ("table" or "table:column") has totals.
func (d *Set) counted(name string) bool {
	t, c, ok := strings.Cut(name, ":")
	if !ok {
		return hasWorkspaceColumn(t)
	}
	return slices.Contains(d.values[t], c)
}

// Count answers the exact number of rows of table (or of a ValueKey) in the
// workspace from the totals; ok is false for a scoped subset (an extra
// condition such as "is_product = true"), which the caller counts itself.
func (d *Set) Count(ctx context.Context, workspaceID, table, scope string) (int64, bool) {
	name, _, _ := strings.Cut(table, "=")
	if scope != "" || !d.counted(name) {
		return 0, false
	}
	var n int64
	if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM "+totalsTable+" WHERE workspace_id = ? AND tbl = ?"),
		workspaceID, table).Scan(&n); err != nil {
		return 0, false
	}
	return n, true
}
