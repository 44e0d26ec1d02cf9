package database

import (
	"context"
	"database/sql"
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
	// on: rows are counted per value of each (see DB.values). A Search
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
	return slices.DeleteFunc(slices.Clone(s.Columns), func(c string) bool { return c == few })
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

// retiredIndexes were declared once and are dropped where they remain: the
// events log lists by seq and bounds its ids instead (ent/schema/events.go).
var retiredIndexes = []string{"DROP INDEX IF EXISTS event_created_at", "DROP INDEX IF EXISTS event_workspace_id_created_at_id"}

// Migrate brings the schema up to date: ent's tables and indexes, then the
// search indexes. It is safe to run on every start and from several processes.
func (d *DB) Migrate(ctx context.Context, searches []Search) error {
	if err := createSchema(ctx, d.Writer.Schema); err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	// ent adds indexes but never drops one the schema no longer declares.
	if err := execAll(ctx, d.WritePool, retiredIndexes...); err != nil {
		return fmt.Errorf("database: %w", err)
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
	d.searches = map[string]Search{}
	for _, s := range merged {
		if len(s.Columns) == 0 {
			continue // counted columns only
		}
		d.searches[s.Table] = s
		if err := d.sql.searchIndex(ctx, d, s); err != nil {
			return fmt.Errorf("database: search index on %s: %w", s.Table, err)
		}
	}
	if err := d.migrateValues(ctx, merged); err != nil {
		return fmt.Errorf("database: search values: %w", err)
	}
	if d.Dialect == dialect.SQLite {
		optimize(ctx, d.WritePool)
	}
	return nil
}

// MergeSearches joins the columns of resources that share a table (items and products).
func MergeSearches(in []Search) []Search {
	var out []Search
	for _, s := range in {
		i := slices.IndexFunc(out, func(o Search) bool { return o.Table == s.Table })
		if i < 0 {
			i, out = len(out), append(out, Search{Table: s.Table})
		}
		out[i].Columns = appendNew(out[i].Columns, s.Columns...)
		out[i].Few = appendNew(out[i].Few, s.Few...)
		out[i].Counted = appendNew(out[i].Counted, s.Counted...)
	}
	return out
}

// appendNew appends the elements of vs that s does not hold yet.
func appendNew[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
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

func hasWorkspaceColumn(table string) bool { return countedSet()[table] }

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
	if _, err := d.WritePool.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+versionTable+" (v TEXT NOT NULL)"); err != nil {
		return err
	}
	var have string
	_ = d.WritePool.QueryRowContext(ctx, "SELECT v FROM "+versionTable).Scan(&have)
	if have == marker && (broken == nil || !broken(ctx)) {
		return nil
	}
	return inTx(ctx, d.WritePool, func(tx *sql.Tx) error {
		if d.Dialect == dialect.Postgres {
			if _, err := tx.ExecContext(ctx, "LOCK TABLE "+versionTable+" IN EXCLUSIVE MODE"); err != nil {
				return err
			}
		}
		stmts, err := build(tx)
		if err != nil {
			return err
		}
		if err := execAll(ctx, tx, append(stmts, "DELETE FROM "+versionTable)...); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, d.Rebind("INSERT INTO "+versionTable+" (v) VALUES (?)"), marker)
		return err
	})
}
