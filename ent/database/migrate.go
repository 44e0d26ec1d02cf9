package database

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// Search declares the columns of a table that `q` searches.
type Search struct {
	Table   string
	Columns []string
}

// Migrate brings the schema up to date: ent's tables and indexes, then the
// search indexes. It is safe to run on every start and from several processes.
func (d *DB) Migrate(ctx context.Context, searches []Search) error {
	if err := d.Ent.Schema.Create(ctx, migrate.WithGlobalUniqueID(false)); err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	if err := d.migrateTotals(ctx); err != nil {
		return fmt.Errorf("database: list totals: %w", err)
	}
	for _, s := range MergeSearches(searches) {
		var err error
		if d.Dialect == dialect.Postgres {
			err = d.postgresSearch(ctx, s)
		} else {
			err = d.sqliteSearch(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("database: search index on %s: %w", s.Table, err)
		}
	}
	return nil
}

// MergeSearches joins the columns of resources that share a table (items and products).
func MergeSearches(in []Search) []Search {
	var out []Search
	idx := map[string]int{}
	for _, s := range in {
		i, ok := idx[s.Table]
		if !ok {
			idx[s.Table] = len(out)
			out = append(out, Search{Table: s.Table})
			i = len(out) - 1
		}
		for _, c := range s.Columns {
			if !slices.Contains(out[i].Columns, c) {
				out[i].Columns = append(out[i].Columns, c)
			}
		}
	}
	return out
}

// document is the SQL expression of the searchable text of a row.
func document(prefix string, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "coalesce(" + prefix + c + ", '')"
	}
	return strings.Join(parts, " || ' ' || ")
}

// searchWorkspaces gives each workspace a small stable integer: the FTS
// tables are partitioned by it (FTS4 languageid), so a search and its
// count read only the caller's workspace's part of the index.
const searchWorkspaces = "search_workspaces"

func hasWorkspaceColumn(table string) bool {
	for _, t := range countedTables() {
		if t == table {
			return true
		}
	}
	return false
}

func (d *DB) sqliteSearch(ctx context.Context, s Search) error {
	fts := s.Table + "_fts"
	lid, register := "0", ""
	if hasWorkspaceColumn(s.Table) {
		lid = "(SELECT lid FROM " + searchWorkspaces + " WHERE workspace_id = new.workspace_id)"
		register = "INSERT OR IGNORE INTO " + searchWorkspaces + " (workspace_id) VALUES (new.workspace_id); "
	}
	insert := fmt.Sprintf("INSERT INTO %s(docid, body, lid) VALUES (new.rowid, %s, %s);", fts, document("new.", s.Columns), lid)
	triggers := []string{
		fmt.Sprintf("CREATE TRIGGER %s_ai AFTER INSERT ON %s BEGIN %s%s END", fts, s.Table, register, insert),
		fmt.Sprintf("CREATE TRIGGER %s_au AFTER UPDATE OF %s ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; %s END",
			fts, strings.Join(s.Columns, ", "), s.Table, fts, insert),
		fmt.Sprintf("CREATE TRIGGER %s_ad AFTER DELETE ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; END", fts, s.Table, fts),
	}
	if _, err := d.Write.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+searchWorkspaces+
		" (lid INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL UNIQUE)"); err != nil {
		return err
	}
	// unicode61 splits on anything but letters and digits, like
	// SearchTokens. No prefix indexes: they double the index work of every
	// insert, and the prefixes people type (a number, a name) are longer
	// than the 2 or 4 characters such an index would serve.
	// matchinfo=fts3 drops the per-row %_docsize table, which only
	// matchinfo's length values read (nothing here ranks): one page write
	// less per indexed row.
	create := fmt.Sprintf(`CREATE VIRTUAL TABLE %s USING fts4(body, tokenize=unicode61, languageid="lid", matchinfo=fts3)`, fts)
	// Rebuild only when the table or the searched columns changed since the last start.
	var haveTrigger, haveTable string
	_ = d.Write.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", fts+"_ai").Scan(&haveTrigger)
	_ = d.Write.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", fts).Scan(&haveTable)
	if haveTrigger == triggers[0] && haveTable == create {
		return nil
	}
	tx, err := d.Write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	fill := fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT rowid, %s, 0 FROM %s", fts, document("", s.Columns), s.Table)
	if lid != "0" {
		fill = fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT t.rowid, %s, w.lid FROM %s t JOIN %s w ON w.workspace_id = t.workspace_id",
			fts, document("t.", s.Columns), s.Table, searchWorkspaces)
	}
	stmts := []string{
		"DROP TRIGGER IF EXISTS " + fts + "_ai", "DROP TRIGGER IF EXISTS " + fts + "_au", "DROP TRIGGER IF EXISTS " + fts + "_ad",
		"DROP TABLE IF EXISTS " + fts, create,
	}
	if lid != "0" {
		stmts = append(stmts, fmt.Sprintf("INSERT OR IGNORE INTO %s (workspace_id) SELECT DISTINCT workspace_id FROM %s", searchWorkspaces, s.Table))
	}
	stmts = append(stmts, fill,
		// Few, large segments keep prefix queries fast; automerge keeps them
		// few as rows arrive one transaction at a time.
		fmt.Sprintf("INSERT INTO %s(%s) VALUES ('optimize')", fts, fts),
		fmt.Sprintf("INSERT INTO %s(%s) VALUES ('automerge=4')", fts, fts))
	for _, q := range append(stmts, triggers...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return tx.Commit()
}

// postgresVector is the indexed expression; queries must repeat it exactly.
func postgresVector(prefix string, cols []string) string {
	return fmt.Sprintf(`to_tsvector('simple'::regconfig, regexp_replace(lower(%s), '[^[:alnum:]]+', ' ', 'g'))`, document(prefix, cols))
}

func (d *DB) postgresSearch(ctx context.Context, s Search) error {
	vec := postgresVector("", s.Columns)
	sum := sha256.Sum256([]byte(vec))
	name := s.Table + "_q_" + hex.EncodeToString(sum[:4])
	if _, err := d.Write.ExecContext(ctx, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s USING gin ((%s))", name, s.Table, vec)); err != nil {
		return err
	}
	// Drop indexes of earlier column sets.
	rows, err := d.Write.QueryContext(ctx, "SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexname LIKE $2 AND indexname <> $3",
		s.Table, s.Table+"_q_%", name)
	if err != nil {
		return err
	}
	var old []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		old = append(old, n)
	}
	rows.Close()
	for _, n := range old {
		if _, err := d.Write.ExecContext(ctx, "DROP INDEX IF EXISTS "+n); err != nil {
			return err
		}
	}
	return nil
}

// SearchRows returns a subquery listing the row keys (rowid on SQLite) of
// workspaceID's rows of s.Table that match every token of q, with its
// arguments. It reads the search index alone — no table rows — so it also
// counts matches cheaply. ok is false when q holds no word, or on
// PostgreSQL, whose SearchCondition the planner combines better.
func (d *DB) SearchRows(s Search, q, workspaceID string) (sub string, args []any, ok bool) {
	if d.Dialect == dialect.Postgres || !hasWorkspaceColumn(s.Table) {
		return "", nil, false
	}
	match, ok := ftsMatch(q)
	if !ok {
		return "", nil, false
	}
	return "SELECT docid FROM " + s.Table + "_fts WHERE body MATCH ? AND lid = (SELECT lid FROM " + searchWorkspaces +
		" WHERE workspace_id = ?)", []any{match, workspaceID}, true
}

func ftsMatch(q string) (string, bool) {
	toks := SearchTokens(q)
	if len(toks) == 0 {
		return "", false
	}
	if len(toks) > 16 {
		toks = toks[:16]
	}
	for i, t := range toks {
		toks[i] = t + "*"
	}
	return strings.Join(toks, " "), true
}

// SearchTokens splits q into the lower-case words the search indexes hold.
func SearchTokens(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// SearchCondition returns a condition on table (aliased as alias, or bare
// when alias is empty) that keeps rows matching every token of q as a word
// prefix, with its one argument; ok is false when q holds no word.
func (d *DB) SearchCondition(s Search, alias string, q string) (cond string, arg any, ok bool) {
	toks := SearchTokens(q)
	if len(toks) == 0 {
		return "", nil, false
	}
	if len(toks) > 16 {
		toks = toks[:16]
	}
	p := ""
	if alias != "" {
		p = alias + "."
	}
	if d.Dialect == dialect.Postgres {
		for i, t := range toks {
			toks[i] = t + ":*"
		}
		return postgresVector(p, s.Columns) + " @@ to_tsquery('simple', ?)", strings.Join(toks, " & "), true
	}
	match, _ := ftsMatch(q)
	return p + "rowid IN (SELECT docid FROM " + s.Table + "_fts WHERE body MATCH ?)", match, true
}
