package shortcut

import (
	"context"
	"database/sql"
	"time"
)

// sqlDialect is every piece of SQL that differs between SQLite (sqlite.go)
// and PostgreSQL (postgres.go). The rest of this package, and the read
// engine in api/records, write one text for both.
type sqlDialect interface {
	// rowKey is the cheapest unique key of a row of the table aliased t:
	// SQLite's rowid, PostgreSQL's id.
	rowKey() string
	// jsonList is a subquery of the elements of a JSON array argument.
	jsonList() string
	// jsonAgg aggregates col's values into a JSON array, "[]" over no rows.
	jsonAgg(col string) string
	// wordsOf is the SQL of the folded words of a text expression,
	// separated by single spaces: exactly the terms the word index holds.
	wordsOf(expr string) string
	// wordsCond is the condition that every token of toks starts a word of
	// the word index (or, with or, that one does), with its arguments;
	// sub, when not empty, is a query of the matching rowKeys alone, which
	// cond tests membership in.
	wordsCond(s Search, wsID string, toks []string, or bool) (cond string, args []any, sub string)
	// manyAmong is cond (a membership test of rowKey in a subquery that
	// selects many rows) written so that the planner walks the list's
	// index and tests each row, rather than fetching every key and sorting.
	manyAmong(cond string) string
	// foldTokens splits q as the word index folds it, when SearchTokens
	// would not (ok false: SearchTokens folds it alike).
	foldTokens(ctx context.Context, d *Set, q string) ([]string, bool, error)
	// dayOf is the SQL of a row's UTC day of creation, "2006-01-02".
	dayOf(ref string) string
	// dayBound is the argument of "created_at < ?" for the start of day.
	dayBound(day time.Time) any
	// boolText is a boolean as the counters' names spell it.
	boolText(b bool) string
	// dropTrigger drops trigger name on table, if it exists.
	dropTrigger(name, table string) string
	// valuesTriggers keep search_values' counts of table t's column c.
	valuesTriggers(t, c string) []string
	// newValueTrigger runs body after each insert into search_values.
	newValueTrigger(body string) []string
	// totalsTriggers keep the list counters of table t; staleTotals drops
	// those of value columns no longer declared.
	totalsTriggers(d *Set, t string) []string
	staleTotals(ctx context.Context, tx *sql.Tx) ([]string, error)
	// sumsTriggers keep list_sums' sums of table t's rows.
	sumsTriggers(t string) []string
	// searchIndex builds the word index of s.
	searchIndex(ctx context.Context, d *Set, s Search) error
}
