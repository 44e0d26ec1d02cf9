package database

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
			if !contains(out[i].Columns, c) {
				out[i].Columns = append(out[i].Columns, c)
			}
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// document is the SQL expression of the searchable text of a row.
func document(prefix string, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "coalesce(" + prefix + c + ", '')"
	}
	return strings.Join(parts, " || ' ' || ")
}

func (d *DB) sqliteSearch(ctx context.Context, s Search) error {
	fts := s.Table + "_fts"
	insert := fmt.Sprintf("INSERT INTO %s(docid, body) VALUES (new.rowid, %s);", fts, document("new.", s.Columns))
	triggers := []string{
		fmt.Sprintf("CREATE TRIGGER %s_ai AFTER INSERT ON %s BEGIN %s END", fts, s.Table, insert),
		fmt.Sprintf("CREATE TRIGGER %s_au AFTER UPDATE OF %s ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; %s END",
			fts, strings.Join(s.Columns, ", "), s.Table, fts, insert),
		fmt.Sprintf("CREATE TRIGGER %s_ad AFTER DELETE ON %s BEGIN DELETE FROM %s WHERE docid = old.rowid; END", fts, s.Table, fts),
	}
	// Rebuild only when the searched columns changed since the last start.
	var have string
	_ = d.Write.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", fts+"_ai").Scan(&have)
	if have == triggers[0] {
		return nil
	}
	tx, err := d.Write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := []string{
		"DROP TRIGGER IF EXISTS " + fts + "_ai", "DROP TRIGGER IF EXISTS " + fts + "_au", "DROP TRIGGER IF EXISTS " + fts + "_ad",
		"DROP TABLE IF EXISTS " + fts,
		// unicode61 splits on anything but letters and digits, like searchTokens.
		fmt.Sprintf(`CREATE VIRTUAL TABLE %s USING fts4(body, tokenize=unicode61, prefix="2,4")`, fts),
		fmt.Sprintf("INSERT INTO %s(docid, body) SELECT rowid, %s FROM %s", fts, document("", s.Columns), s.Table),
	}
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
	for i, t := range toks {
		toks[i] = t + "*"
	}
	return p + "rowid IN (SELECT docid FROM " + s.Table + "_fts WHERE body MATCH ?)", strings.Join(toks, " "), true
}
