package database

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// List totals: an unfiltered list's meta.total must be exact, and COUNT(*)
// over a million rows costs more than the whole page. Triggers keep a
// per-workspace row count of every workspace-scoped table in list_totals,
// in the same transaction as the insert or delete, so every write path —
// the API, the admin UI, bulk seeding — keeps it right without knowing.
//
// On PostgreSQL concurrent inserts would queue on one counter row until
// commit, so each workspace and table has totalShards rows picked at random
// and a total is their sum. SQLite has one writer and uses shard 0.

const (
	totalsTable = "list_totals"
	// daysTable splits the same counts by day of created_at: a deep offset
	// finds its day by summing a few hundred day counts, then skips only
	// within that day (see Skip).
	daysTable   = "list_days"
	totalShards = 16
)

// totalsVersion changes whenever the trigger definitions do, so a start
// after an upgrade rebuilds them and recounts.
const totalsVersion = "v2"

// countedTables are the tables with a workspace_id column.
func countedTables() []string {
	var out []string
	for _, t := range migrate.Tables {
		for _, c := range t.Columns {
			if c.Name == "workspace_id" {
				out = append(out, t.Name)
				break
			}
		}
	}
	return out
}

// dayOf is the SQL of a row's UTC day of creation, "2006-01-02". ent keeps
// SQLite times as text starting with the date, in UTC.
func (d *DB) dayOf(ref string) string {
	if d.Dialect == dialect.Postgres {
		return "to_char(" + ref + "created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	return "substr(" + ref + "created_at, 1, 10)"
}

func (d *DB) migrateTotals(ctx context.Context) error {
	tables := countedTables()
	marker := totalsVersion + ":" + strings.Join(tables, ",")
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ` + totalsTable + ` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL,
			shard INTEGER NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (workspace_id, tbl, shard))`,
		`CREATE TABLE IF NOT EXISTS ` + daysTable + ` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, day TEXT NOT NULL,
			shard INTEGER NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (workspace_id, tbl, day, shard))`,
		`CREATE TABLE IF NOT EXISTS list_totals_version (v TEXT NOT NULL)`,
	} {
		if _, err := d.Write.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var have string
	_ = d.Write.QueryRowContext(ctx, "SELECT v FROM list_totals_version").Scan(&have)
	if have == marker {
		return nil
	}
	tx, err := d.Write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var stmts []string
	if d.Dialect == dialect.Postgres {
		fn := func(name, rows, sign string) string {
			return fmt.Sprintf(`CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO %[2]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, TG_TABLE_NAME, floor(random() * %[4]d)::int, %[6]scount(*) FROM %[5]s GROUP BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[2]s.n + EXCLUDED.n;
	INSERT INTO %[3]s (workspace_id, tbl, day, shard, n)
	SELECT workspace_id, TG_TABLE_NAME, %[7]s, floor(random() * %[4]d)::int, %[6]scount(*) FROM %[5]s GROUP BY 1, 3
	ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = %[3]s.n + EXCLUDED.n;
	RETURN NULL;
END $$`, name, totalsTable, daysTable, totalShards, rows, sign, d.dayOf(""))
		}
		// The table lock serializes concurrent first starts until commit.
		stmts = append(stmts, "LOCK TABLE "+totalsTable+" IN EXCLUSIVE MODE",
			fn("list_totals_ins", "new_rows", ""), fn("list_totals_del", "old_rows", "-"))
		for _, t := range tables {
			// Statement-level triggers with transition tables: a bulk insert
			// of a thousand rows updates the counts once, not a thousand times.
			stmts = append(stmts,
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ai ON %s", t, t),
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ad ON %s", t, t),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ai AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_ins()", t, t),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ad AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_del()", t, t))
		}
	} else {
		for _, t := range tables {
			up := func(ref string, delta int) string {
				return fmt.Sprintf("INSERT INTO %[1]s (workspace_id, tbl, shard, n) VALUES (%[3]s.workspace_id, '%[4]s', 0, %[5]d) "+
					"ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = n + %[5]d; "+
					"INSERT INTO %[2]s (workspace_id, tbl, day, shard, n) VALUES (%[3]s.workspace_id, '%[4]s', %[6]s, 0, %[5]d) "+
					"ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = n + %[5]d;",
					totalsTable, daysTable, ref, t, delta, d.dayOf(ref+"."))
			}
			stmts = append(stmts,
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ai", t),
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ad", t),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ai AFTER INSERT ON %s BEGIN %s END", t, t, up("new", 1)),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ad AFTER DELETE ON %s BEGIN %s END", t, t, up("old", -1)))
		}
	}
	// Recount under the same transaction as the triggers, so no insert is
	// counted twice or missed.
	stmts = append(stmts, "DELETE FROM "+totalsTable, "DELETE FROM "+daysTable)
	for _, t := range tables {
		stmts = append(stmts,
			fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) SELECT workspace_id, '%s', 0, COUNT(*) FROM %s GROUP BY workspace_id",
				totalsTable, t, t),
			fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, day, shard, n) SELECT workspace_id, '%s', %s, 0, COUNT(*) FROM %s GROUP BY 1, 3",
				daysTable, t, d.dayOf(""), t))
	}
	stmts = append(stmts, "DELETE FROM list_totals_version")
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.Rebind("INSERT INTO list_totals_version (v) VALUES (?)"), marker); err != nil {
		return err
	}
	return tx.Commit()
}

// Skip turns a deep offset into the day it falls in: the rows of the
// workspace's table created before the end of that day (cond, with its
// argument) start at the returned offset rest. ok is false for a table
// without counts or an offset past the end.
func (d *DB) Skip(ctx context.Context, workspaceID, table string, offset int) (cond string, arg any, rest int, ok bool) {
	if !counted()[table] {
		return "", nil, 0, false
	}
	var day string
	var before int64
	err := d.Read.QueryRowContext(ctx, d.Rebind(`SELECT day, before FROM (
		SELECT day, CAST(SUM(SUM(n)) OVER (ORDER BY day DESC) - SUM(n) AS BIGINT) AS before
		FROM `+daysTable+` WHERE workspace_id = ? AND tbl = ? GROUP BY day) days
		WHERE before <= ? ORDER BY day LIMIT 1`), workspaceID, table, offset).Scan(&day, &before)
	if err != nil {
		return "", nil, 0, false
	}
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return "", nil, 0, false
	}
	next := t.AddDate(0, 0, 1)
	if d.Dialect == dialect.Postgres {
		return "t.created_at < ?", next, offset - int(before), true
	}
	// Text comparison: every stored time of an earlier day sorts before
	// the bare date of the next one.
	return "t.created_at < ?", next.Format(time.DateOnly), offset - int(before), true
}

// counted remembers which tables have totals (all scoped tables once migrated).
var counted = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, t := range countedTables() {
		m[t] = true
	}
	return m
})

// Count answers the exact number of rows of table in the workspace from the
// maintained totals; ok is false for a scoped subset (scope is an extra
// condition such as "is_product = true"), which the caller counts itself.
func (d *DB) Count(ctx context.Context, workspaceID, table, scope string) (int64, bool) {
	if scope != "" || !counted()[table] {
		return 0, false
	}
	var n int64
	err := d.Read.QueryRowContext(ctx, d.Rebind("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM "+totalsTable+" WHERE workspace_id = ? AND tbl = ?"),
		workspaceID, table).Scan(&n)
	if err != nil {
		return 0, false
	}
	return n, true
}
