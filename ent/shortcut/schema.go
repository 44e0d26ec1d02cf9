package shortcut

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Search declares the columns of a table that `q` searches.
type Search struct {
	Table   string
	Columns []string
	// Few names at most one of Columns whose values repeat across many rows
	// (the client's name on every invoice), searched by value, not in the
	// word index (see search.go).
	Few []string
	// Counted are the table's enum and boolean columns that lists filter
	// on: rows are counted per value of each (see Set.values). A Search
	// may carry only these, with no Columns.
	Counted []string
}

// Searches are the searches and counted columns the declarations ask for
// (api/records.Searches).
type Searches []Search

// Migrate brings the search indexes and counters up to date (see
// database.DB.Migrate).
func (searches Searches) Migrate(ctx context.Context, db *database.DB) error {
	d := Of(db)
	d.setValueColumns(searches)
	if err := d.migrateTotals(ctx); err != nil {
		return fmt.Errorf("shortcut: list totals: %w", err)
	}
	if err := d.migrateSums(ctx); err != nil {
		return fmt.Errorf("shortcut: kept sums: %w", err)
	}
	if err := d.migrateAccess(ctx); err != nil {
		return fmt.Errorf("shortcut: access changes: %w", err)
	}
	merged := MergeSearches(searches)
	for _, s := range merged {
		if len(s.Few) > 1 || (len(s.Few) == 1 && !slices.Contains(s.Columns, s.Few[0])) {
			return fmt.Errorf("shortcut: search on %s: at most one few-valued column, and one of the searched columns", s.Table)
		}
	}
	searchesOf := map[string]Search{}
	for _, s := range merged {
		if len(s.Columns) == 0 {
			continue // counted columns only
		}
		searchesOf[s.Table] = s
		if err := d.sql.searchIndex(ctx, d, s); err != nil {
			return fmt.Errorf("shortcut: search index on %s: %w", s.Table, err)
		}
	}
	d.searches = searchesOf
	if err := d.migrateValues(ctx, merged); err != nil {
		return fmt.Errorf("shortcut: search values: %w", err)
	}
	return nil
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

func hasWorkspaceColumn(table string) bool { return slices.Contains(countedTables(), table) }

// SearchTokens splits q into the lower-case words the search indexes hold.
func SearchTokens(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
