package database

import (
	"context"
	"fmt"
	"strings"
	"sync"

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

const totalsTable = "list_totals"

const totalShards = 16

// totalsVersion changes whenever the trigger definitions do, so a start
// after an upgrade rebuilds them and recounts.
const totalsVersion = "v1"

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

func (d *DB) migrateTotals(ctx context.Context) error {
	tables := countedTables()
	marker := totalsVersion + ":" + strings.Join(tables, ",")
	if _, err := d.Write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+totalsTable+` (
		workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, shard INTEGER NOT NULL, n BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, tbl, shard))`); err != nil {
		return err
	}
	if _, err := d.Write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS list_totals_version (v TEXT NOT NULL)`); err != nil {
		return err
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
		// Serializes concurrent first starts; the table lock is held to commit.
		stmts = append(stmts, "LOCK TABLE "+totalsTable+" IN EXCLUSIVE MODE",
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION list_totals_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, TG_TABLE_NAME, floor(random() * %[2]d)::int, count(*) FROM new_rows GROUP BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;
	RETURN NULL;
END $$`, totalsTable, totalShards),
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION list_totals_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, TG_TABLE_NAME, floor(random() * %[2]d)::int, -count(*) FROM old_rows GROUP BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;
	RETURN NULL;
END $$`, totalsTable, totalShards))
		for _, t := range tables {
			// Statement-level triggers with transition tables: a bulk insert
			// of a thousand rows updates the count once, not a thousand times.
			stmts = append(stmts,
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ai ON %s", t, t),
				fmt.Sprintf("DROP TRIGGER IF EXISTS %s_totals_ad ON %s", t, t),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ai AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_ins()", t, t),
				fmt.Sprintf("CREATE TRIGGER %s_totals_ad AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_del()", t, t))
		}
	} else {
		for _, t := range tables {
			up := func(ref string, delta int) string {
				return fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) VALUES (%s.workspace_id, '%s', 0, %d) "+
					"ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = n + %d;", totalsTable, ref, t, delta, delta)
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
	stmts = append(stmts, "DELETE FROM "+totalsTable)
	for _, t := range tables {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n) SELECT workspace_id, '%s', 0, COUNT(*) FROM %s GROUP BY workspace_id",
			totalsTable, t, t))
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
