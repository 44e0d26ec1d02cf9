package database

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"

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
const totalsVersion = "v3"

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

// valueColumns are the columns of a table whose values lists filter on
// (enums and booleans: status, online...): rows are also counted per value,
// so a list filtered on one of them has an exact total without a scan.
func valueColumns(table string) []string {
	var out []string
	for _, t := range migrate.Tables {
		if t.Name != table {
			continue
		}
		for _, c := range t.Columns {
			if c.Type == field.TypeEnum || c.Type == field.TypeBool {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// valueKey is the SQL of the counter name of a row's value of column c:
// "sales_orders:status=confirmed". ref is "new.", "old." or "" (a row of a
// FROM); SQLite stores booleans as 1 and 0, PostgreSQL prints true and false.
func valueKey(table, c, ref string) string {
	return fmt.Sprintf("'%s:%s=' || coalesce(CAST(%s%s AS TEXT), '')", table, c, ref, c)
}

// ValueKey is the counter name of the rows of table whose column c is v
// (a string or a bool, as list filters carry them).
func (d *DB) ValueKey(table, c string, v any) string {
	s := fmt.Sprint(v)
	if b, ok := v.(bool); ok && d.Dialect != dialect.Postgres {
		s = "0"
		if b {
			s = "1"
		}
	}
	return table + ":" + c + "=" + s
}

func (d *DB) sqliteTotals(t string) []string {
	up := func(key, ref string, delta int) string {
		return fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) VALUES (%sworkspace_id, %s, 0, %d) "+
			"ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = n + %d;", totalsTable, ref, key, delta, delta)
	}
	day := func(ref string, delta int) string {
		return fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, day, shard, n) VALUES (%sworkspace_id, '%s', %s, 0, %d) "+
			"ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = n + %d;", daysTable, ref, t, d.dayOf(ref), delta, delta)
	}
	body := func(ref string, delta int) string {
		b := up("'"+t+"'", ref, delta) + " " + day(ref, delta)
		for _, c := range valueColumns(t) {
			b += " " + up(valueKey(t, c, ref), ref, delta)
		}
		return b
	}
	out := []string{
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ai", t),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ad", t),
		fmt.Sprintf("CREATE TRIGGER %s_totals_ai AFTER INSERT ON %s BEGIN %s END", t, t, body("new.", 1)),
		fmt.Sprintf("CREATE TRIGGER %s_totals_ad AFTER DELETE ON %s BEGIN %s END", t, t, body("old.", -1)),
	}
	for _, c := range valueColumns(t) {
		out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_%s_au", t, c),
			fmt.Sprintf("CREATE TRIGGER %[1]s_totals_%[2]s_au AFTER UPDATE OF %[2]s ON %[1]s WHEN old.%[2]s IS NOT new.%[2]s BEGIN %[3]s %[4]s END",
				t, c, up(valueKey(t, c, "old."), "old.", -1), up(valueKey(t, c, "new."), "new.", 1)))
	}
	return out
}

func (d *DB) postgresTotals(t string) []string {
	// Statement-level triggers with transition tables: a bulk insert of a
	// thousand rows updates each counter once, not a thousand times.
	values := func(rows, sign string) string {
		q := ""
		for _, c := range valueColumns(t) {
			q += fmt.Sprintf(`
	INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, %[2]s, floor(random() * %[3]d)::int, %[4]scount(*) FROM %[5]s GROUP BY 1, 2
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;`, totalsTable, valueKey(t, c, ""), totalShards, sign, rows)
		}
		return q
	}
	add := func(rows, sign string) string {
		q := fmt.Sprintf(`INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, '%[2]s', floor(random() * %[3]d)::int, %[4]scount(*) FROM %[5]s GROUP BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;
	INSERT INTO %[6]s (workspace_id, tbl, day, shard, n)
	SELECT workspace_id, '%[2]s', %[7]s, floor(random() * %[3]d)::int, %[4]scount(*) FROM %[5]s GROUP BY 1, 3
	ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = %[6]s.n + EXCLUDED.n;`,
			totalsTable, t, totalShards, sign, rows, daysTable, d.dayOf(""))
		return q + values(rows, sign)
	}
	fn := func(name, body string) string {
		return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n\t%s\n\tRETURN NULL;\nEND $$", name, body)
	}
	out := []string{
		fn(t+"_totals_ins", add("new_rows", "")), fn(t+"_totals_del", add("old_rows", "-")),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ai ON %s", t, t),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ad ON %s", t, t),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_au ON %s", t, t),
		fmt.Sprintf("CREATE TRIGGER %[1]s_totals_ai AFTER INSERT ON %[1]s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %[1]s_totals_ins()", t),
		fmt.Sprintf("CREATE TRIGGER %[1]s_totals_ad AFTER DELETE ON %[1]s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION %[1]s_totals_del()", t),
	}
	if len(valueColumns(t)) > 0 {
		// An update moves rows between values: minus the old, plus the new
		// (PostgreSQL allows no column list on triggers with transition tables).
		out = append(out, fn(t+"_totals_upd", values("old_rows", "-")+values("new_rows", "")),
			fmt.Sprintf("CREATE TRIGGER %[1]s_totals_au AFTER UPDATE ON %[1]s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %[1]s_totals_upd()", t))
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
		// The table lock serializes concurrent first starts until commit.
		stmts = append(stmts, "LOCK TABLE "+totalsTable+" IN EXCLUSIVE MODE")
		for _, t := range tables {
			stmts = append(stmts, d.postgresTotals(t)...)
		}
	} else {
		for _, t := range tables {
			stmts = append(stmts, d.sqliteTotals(t)...)
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
		for _, c := range valueColumns(t) {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) SELECT workspace_id, %s, 0, COUNT(*) FROM %s GROUP BY 1, 2",
				totalsTable, valueKey(t, c, ""), t))
		}
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

// counted remembers which tables have totals (all scoped tables once
// migrated), and which "table:column" pairs have counts per value.
var counted = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, t := range countedTables() {
		m[t] = true
		for _, c := range valueColumns(t) {
			m[t+":"+c] = true
		}
	}
	return m
})

// Count answers the exact number of rows of table (or of a ValueKey) in the
// workspace from the maintained totals; ok is false for a scoped subset (scope is an extra
// condition such as "is_product = true"), which the caller counts itself.
func (d *DB) Count(ctx context.Context, workspaceID, table, scope string) (int64, bool) {
	name, _, _ := strings.Cut(table, "=")
	if scope != "" || !counted()[name] {
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
