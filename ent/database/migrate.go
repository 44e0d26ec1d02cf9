package database

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// Search declares the columns of a table that `q` searches.
type Search struct {
	Table   string
	Columns []string
	// Few names at most one of Columns whose values repeat across many rows
	// of a workspace (the client's name on every invoice). It is not put in
	// the word index: `q` resolves it through the workspace's distinct
	// values (search_values) and the (workspace_id, column, created_at, id)
	// index instead, see search.go.
	Few []string
	// Counted are the table's enum and boolean columns that lists filter
	// on: rows are counted per value of each (see valueColumns). A Search
	// may carry only these, with no Columns.
	Counted []string
}

// few is the column searched by value, or "" (tables without a workspace
// keep every column in the word index).
func (s Search) few() string {
	if len(s.Few) == 0 || !hasWorkspaceColumn(s.Table) {
		return ""
	}
	return s.Few[0]
}

// words are the columns of the word index (FTS4 or GIN).
func (s Search) words() []string {
	few := s.few()
	var out []string
	for _, c := range s.Columns {
		if c != few {
			out = append(out, c)
		}
	}
	return out
}

// schemaCreate serialises ent's schema creation within the process: it
// links columns to indexes by writing into the generated tables, which are
// package variables shared by every client, so two databases migrating at
// once (parallel tests, a bench seeding while a server starts) crashed the
// process with a concurrent map write.
var schemaCreate sync.Mutex

func createSchema(ctx context.Context, s *migrate.Schema) error {
	schemaCreate.Lock()
	defer schemaCreate.Unlock()
	return s.Create(ctx, migrate.WithGlobalUniqueID(false))
}

// Migrate brings the schema up to date: ent's tables and indexes, then the
// search indexes. It is safe to run on every start and from several processes.
func (d *DB) Migrate(ctx context.Context, searches []Search) error {
	if err := createSchema(ctx, d.Ent.Schema); err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	d.setValueColumns(searches)
	if err := d.migrateTotals(ctx); err != nil {
		return fmt.Errorf("database: list totals: %w", err)
	}
	if err := d.migrateSums(ctx); err != nil {
		return fmt.Errorf("database: kept sums: %w", err)
	}
	if err := d.migrateAccess(ctx); err != nil {
		return fmt.Errorf("database: access changes: %w", err)
	}
	merged := MergeSearches(searches)
	for _, s := range merged {
		if len(s.Few) > 1 || (len(s.Few) == 1 && !slices.Contains(s.Columns, s.Few[0])) {
			return fmt.Errorf("database: search on %s: at most one few-valued column, and one of the searched columns", s.Table)
		}
	}
	for _, s := range merged {
		if len(s.Columns) == 0 {
			continue // counted columns only
		}
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
	if err := d.migrateValues(ctx, merged); err != nil {
		return fmt.Errorf("database: search values: %w", err)
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
		for _, c := range s.Few {
			if !slices.Contains(out[i].Few, c) {
				out[i].Few = append(out[i].Few, c)
			}
		}
		for _, c := range s.Counted {
			if !slices.Contains(out[i].Counted, c) {
				out[i].Counted = append(out[i].Counted, c)
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
	return slices.Contains(countedTables(), table)
}

func (d *DB) sqliteSearch(ctx context.Context, s Search) error {
	fts := s.Table + "_fts"
	lid, register, bump := "0", "", ""
	if hasWorkspaceColumn(s.Table) {
		lid = "(SELECT lid FROM " + searchWorkspaces + " WHERE workspace_id = new.workspace_id)"
		register = "INSERT OR IGNORE INTO " + searchWorkspaces + " (workspace_id) VALUES (new.workspace_id); "
		// Cached word lookups (see probe) hold while the table's list_totals
		// gen does: the totals triggers bump it on every insert and delete,
		// and this on an update of a searched column, so an insert costs no
		// write of its own for it.
		bump = fmt.Sprintf("UPDATE %s SET gen = gen + 1 WHERE workspace_id = old.workspace_id AND tbl = '%s' AND shard = 0; ", totalsTable, s.Table)
	}
	cols := s.words()
	insert := fmt.Sprintf("INSERT INTO %s(docid, body, lid) VALUES (new.rowid, %s, %s);", fts, document("new.", cols), lid)
	triggers := []string{
		fmt.Sprintf("CREATE TRIGGER %s_ai AFTER INSERT ON %s BEGIN %s%s END", fts, s.Table, register, insert),
		fmt.Sprintf("CREATE TRIGGER %s_au AFTER UPDATE OF %s ON %s BEGIN %sDELETE FROM %s WHERE docid = old.rowid; %s END",
			fts, strings.Join(cols, ", "), s.Table, bump, fts, insert),
		fmt.Sprintf("CREATE TRIGGER %s_ad AFTER DELETE ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; END", fts, s.Table, fts),
	}
	if _, err := d.Write.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+searchWorkspaces+
		" (lid INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL UNIQUE)"); err != nil {
		return err
	}
	// search_tokenize splits text exactly as the FTS tables do (case and
	// diacritics folded): rows and values are checked against q with it.
	if _, err := d.Write.ExecContext(ctx, "CREATE VIRTUAL TABLE IF NOT EXISTS "+tokenizeTable+" USING fts3tokenize(unicode61)"); err != nil {
		return err
	}
	if len(cols) == 0 {
		for _, q := range []string{"DROP TRIGGER IF EXISTS " + fts + "_ai", "DROP TRIGGER IF EXISTS " + fts + "_au",
			"DROP TRIGGER IF EXISTS " + fts + "_ad", "DROP TABLE IF EXISTS " + fts} {
			if _, err := d.Write.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
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
	fill := fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT rowid, %s, 0 FROM %s", fts, document("", cols), s.Table)
	if lid != "0" {
		fill = fmt.Sprintf("INSERT INTO %s(docid, body, lid) SELECT t.rowid, %s, w.lid FROM %s t JOIN %s w ON w.workspace_id = t.workspace_id",
			fts, document("t.", cols), s.Table, searchWorkspaces)
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
	name := ""
	if cols := s.words(); len(cols) > 0 {
		vec := postgresVector("", cols)
		sum := sha256.Sum256([]byte(vec))
		name = s.Table + "_q_" + hex.EncodeToString(sum[:4])
		// fastupdate off: with it on, GIN queues new entries in a pending
		// list that every search reads in full until a vacuum or a 4 MB
		// limit merges it. The bench's payments (updates of indexed rows)
		// left 63,000 entries there, and a lookup of a word nothing holds
		// took 10.6 ms instead of 0.09 ms. Indexes made before this are
		// switched, and what they queued is merged, on every start.
		for _, q := range []string{
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s USING gin ((%s)) WITH (fastupdate = off)", name, s.Table, vec),
			fmt.Sprintf("ALTER INDEX %s SET (fastupdate = off)", name),
			fmt.Sprintf("SELECT gin_clean_pending_list('%s')", name),
		} {
			if _, err := d.Write.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
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

// SearchTokens splits q into the lower-case words the search indexes hold.
func SearchTokens(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// rebuild builds part of the schema from scratch — the SQL build returns,
// run in one transaction that records marker in versionTable — unless
// versionTable already holds marker and broken (if any) finds nothing
// wrong. On PostgreSQL the transaction first locks versionTable, which
// serializes servers starting at once until it commits.
func (d *DB) rebuild(ctx context.Context, versionTable, marker string, broken func(context.Context) bool,
	build func(tx *sql.Tx) ([]string, error)) error {
	if _, err := d.Write.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+versionTable+" (v TEXT NOT NULL)"); err != nil {
		return err
	}
	var have string
	_ = d.Write.QueryRowContext(ctx, "SELECT v FROM "+versionTable).Scan(&have)
	if have == marker && (broken == nil || !broken(ctx)) {
		return nil
	}
	tx, err := d.Write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if d.Dialect == dialect.Postgres {
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+versionTable+" IN EXCLUSIVE MODE"); err != nil {
			return err
		}
	}
	stmts, err := build(tx)
	if err != nil {
		return err
	}
	stmts = append(stmts, "DELETE FROM "+versionTable)
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.Rebind("INSERT INTO "+versionTable+" (v) VALUES (?)"), marker); err != nil {
		return err
	}
	return tx.Commit()
}
