package shortcut

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// sqliteSQL is SQLite's half of sqlDialect.
type sqliteSQL struct{}

func (sqliteSQL) rowKey() string            { return "t.rowid" }
func (sqliteSQL) jsonList() string          { return "(SELECT value FROM json_each(?))" }
func (sqliteSQL) jsonAgg(col string) string { return "json_group_array(" + col + ")" }

// wordsOf reads the words from search_tokenize, which splits text exactly
// as the FTS tables do.
func (sqliteSQL) wordsOf(expr string) string {
	return "(SELECT group_concat(token, ' ') FROM " + tokenizeTable + " WHERE input = " + expr + ")"
}

// foldTokens asks unicode61 to fold q when q is not ASCII (it also folds
// diacritics), in q's order.
func (sqliteSQL) foldTokens(ctx context.Context, d *Set, q string) ([]string, bool, error) {
	if ascii(q) {
		return nil, false, nil
	}
	toks, err := database.QueryStrings(ctx, d.db.ReadPool, "SELECT token FROM "+tokenizeTable+" WHERE input = ? ORDER BY position", q)
	return toks, true, err
}

func (sqliteSQL) wordsCond(s Search, wsID string, toks []string, or bool) (string, []any, string) {
	op := " "
	if or {
		op = " OR "
	}
	// Each token a prefix: "ab* cd*" (toks is never empty).
	sub, args := "SELECT docid FROM "+s.Table+"_fts WHERE body MATCH ?", []any{strings.Join(toks, "*"+op) + "*"}
	if hasWorkspaceColumn(s.Table) {
		sub += " AND lid = (SELECT lid FROM " + searchWorkspaces + " WHERE workspace_id = ?)"
		args = append(args, wsID)
	}
	return "t.rowid IN (" + sub + ")", args, sub
}

// manyAmong hides the rowid from the planner with a unary +: it cannot tell
// how many rows an FTS query selects, and would fetch and sort every match.
func (sqliteSQL) manyAmong(cond string) string { return "+" + cond }

// dayOf: ent keeps SQLite times as text starting with the date, in UTC.
func (sqliteSQL) dayOf(ref string) string { return "substr(" + ref + "created_at, 1, 10)" }

// dayBound compares as text: every stored time of an earlier day sorts
// before the bare date of the next one.
func (sqliteSQL) dayBound(day time.Time) any { return day.Format(time.DateOnly) }

// boolText: SQLite stores booleans as 1 and 0.
func (sqliteSQL) boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (sqliteSQL) dropTrigger(name, _ string) string { return "DROP TRIGGER IF EXISTS " + name }

func (sqliteSQL) newValueTrigger(body string) []string {
	return []string{fmt.Sprintf("CREATE TRIGGER %s_new AFTER INSERT ON %s BEGIN %s END", valuesTable, valuesTable, body)}
}

// staleTotals drops the value counters' triggers of every column: those
// still declared are created again.
func (sqliteSQL) staleTotals(ctx context.Context, tx *sql.Tx) ([]string, error) {
	return database.QueryStrings(ctx, tx, `SELECT 'DROP TRIGGER IF EXISTS ' || name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\_totals\_%\_au' ESCAPE '\'`)
}

func (sqliteSQL) valuesTriggers(t, c string) []string {
	add := fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, value, shard, n) VALUES (new.workspace_id, '%s', coalesce(new.%s, ''), 0, 1) "+
		"ON CONFLICT (workspace_id, tbl, value, shard) DO UPDATE SET n = n + 1;", valuesTable, t, c)
	sub := fmt.Sprintf("UPDATE %s SET n = n - 1 WHERE workspace_id = old.workspace_id AND tbl = '%s' AND value = coalesce(old.%s, '') AND shard = 0;",
		valuesTable, t, c)
	return slices.Concat(sqliteTrigger(t+"_values_ai", "INSERT ON "+t, add), sqliteTrigger(t+"_values_ad", "DELETE ON "+t, sub),
		sqliteTrigger(t+"_values_au", fmt.Sprintf("UPDATE OF %[2]s ON %[1]s WHEN old.%[2]s IS NOT new.%[2]s", t, c), sub+" "+add))
}

// searchInserts are the statements of the word index's insert trigger on
// s.Table, about the row new; with bulk, the same over every row above a
// rowid, in rowid order (see Bulk).
func searchInserts(s Search, bulk bool) []string {
	values := func(exprs string) string {
		if bulk {
			return "SELECT " + exprs + " FROM " + s.Table + " AS new WHERE new.rowid > ? ORDER BY new.rowid"
		}
		return "VALUES (" + exprs + ")"
	}
	var out []string
	lid := "0"
	if hasWorkspaceColumn(s.Table) {
		lid = "(SELECT lid FROM " + searchWorkspaces + " WHERE workspace_id = new.workspace_id)"
		out = append(out, "INSERT OR IGNORE INTO "+searchWorkspaces+" (workspace_id) "+values("new.workspace_id"))
	}
	return append(out, "INSERT INTO "+s.Table+"_fts(docid, body, lid) "+values("new.rowid, "+document("new.", s.words())+", "+lid))
}

// searchInsertTrigger is the word index's insert trigger on s.Table.
func searchInsertTrigger(s Search) string {
	return fmt.Sprintf("CREATE TRIGGER %s_fts_ai AFTER INSERT ON %s BEGIN %s; END", s.Table, s.Table, strings.Join(searchInserts(s, false), "; "))
}

func (sqliteSQL) searchIndex(ctx context.Context, d *Set, s Search) error {
	fts := s.Table + "_fts"
	bump := ""
	if hasWorkspaceColumn(s.Table) {
		// Cached word lookups (see probe) hold while the table's list_totals
		// gen does: the totals triggers bump it on insert and delete, this on
		// an update of a searched column.
		bump = fmt.Sprintf("UPDATE %s SET gen = gen + 1 WHERE workspace_id = old.workspace_id AND tbl = '%s' AND shard = 0; ", totalsTable, s.Table)
	}
	cols := s.words()
	inserts := searchInserts(s, false)
	drops := []string{"DROP TRIGGER IF EXISTS " + fts + "_ai", "DROP TRIGGER IF EXISTS " + fts + "_au", "DROP TRIGGER IF EXISTS " + fts + "_ad",
		"DROP TABLE IF EXISTS " + fts}
	triggers := []string{
		searchInsertTrigger(s),
		fmt.Sprintf("CREATE TRIGGER %s_au AFTER UPDATE OF %s ON %s BEGIN %sDELETE FROM %s WHERE docid = old.rowid; %s; END",
			fts, strings.Join(cols, ", "), s.Table, bump, fts, inserts[len(inserts)-1]),
		fmt.Sprintf("CREATE TRIGGER %s_ad AFTER DELETE ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; END", fts, s.Table, fts),
	}
	stmts := []string{"CREATE TABLE IF NOT EXISTS " + searchWorkspaces + " (lid INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL UNIQUE)",
		// search_tokenize splits text exactly as the FTS tables do (case and
		// diacritics folded): rows and values are checked against q with it.
		"CREATE VIRTUAL TABLE IF NOT EXISTS " + tokenizeTable + " USING fts3tokenize(unicode61)"}
	if len(cols) == 0 {
		stmts = append(stmts, drops...)
	}
	if err := database.ExecAll(ctx, d.db.WritePool, stmts...); err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	// unicode61 splits like SearchTokens. No prefix indexes: they double the
	// work of every insert for prefixes shorter than people type.
	// matchinfo=fts3 drops the per-row %_docsize table: nothing here ranks.
	create := fmt.Sprintf(`CREATE VIRTUAL TABLE %s USING fts4(body, tokenize=unicode61, languageid="lid", matchinfo=fts3)`, fts)
	// Rebuild only when the table or the searched columns changed since the last start.
	var haveTrigger, haveTable string
	_ = d.db.WritePool.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", fts+"_ai").Scan(&haveTrigger)
	_ = d.db.WritePool.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", fts).Scan(&haveTable)
	if haveTrigger == triggers[0] && haveTable == create {
		return nil
	}
	stmts = append(drops, create)
	if hasWorkspaceColumn(s.Table) {
		stmts = append(stmts, fmt.Sprintf("INSERT OR IGNORE INTO %s (workspace_id) SELECT DISTINCT workspace_id FROM %s", searchWorkspaces, s.Table),
			fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT t.rowid, %s, w.lid FROM %s t JOIN %s w ON w.workspace_id = t.workspace_id",
				fts, document("t.", cols), s.Table, searchWorkspaces))
	} else {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT rowid, %s, 0 FROM %s", fts, document("", cols), s.Table))
	}
	stmts = append(stmts,
		// Few, large segments keep prefix queries fast.
		fmt.Sprintf("INSERT INTO %s(%s) VALUES ('optimize')", fts, fts),
		fmt.Sprintf("INSERT INTO %s(%s) VALUES ('automerge=4')", fts, fts))
	return database.RunTx(ctx, d.db.WritePool, func(tx *sql.Tx) error { return database.ExecAll(ctx, tx, append(stmts, triggers...)...) })
}

func (sqliteSQL) totalsTriggers(d *Set, t string) []string {
	up := func(key, ref string, delta int) string {
		return fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, shard, n, gen) VALUES (%sworkspace_id, %s, 0, %d, 1) "+
			"ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = n + %d, gen = gen + 1;", totalsTable, ref, key, delta, delta)
	}
	day := func(ref string, delta int) string {
		return fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, day, shard, n) VALUES (%sworkspace_id, '%s', %s, 0, %d) "+
			"ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = n + %d;", daysTable, ref, t, d.sql.dayOf(ref), delta, delta)
	}
	body := func(ref string, delta int) string {
		b := up("'"+t+"'", ref, delta) + " " + day(ref, delta)
		for _, c := range d.values[t] {
			b += " " + up(valueKey(t, c, ref), ref, delta)
		}
		return b
	}
	out := append(sqliteTrigger(t+"_totals_ai", "INSERT ON "+t, body("new.", 1)), sqliteTrigger(t+"_totals_ad", "DELETE ON "+t, body("old.", -1))...)
	for _, c := range d.values[t] {
		out = append(out, sqliteTrigger(t+"_totals_"+c+"_au", fmt.Sprintf("UPDATE OF %[2]s ON %[1]s WHEN old.%[2]s IS NOT new.%[2]s", t, c),
			up(valueKey(t, c, "old."), "old.", -1)+" "+up(valueKey(t, c, "new."), "new.", 1))...)
	}
	return out
}

// sqliteTrigger replaces trigger name, which runs body after on
// ("INSERT ON t", "UPDATE OF c ON t WHEN ...").
func sqliteTrigger(name, on, body string) []string {
	return []string{"DROP TRIGGER IF EXISTS " + name, fmt.Sprintf("CREATE TRIGGER %s AFTER %s BEGIN %s END", name, on, body)}
}
