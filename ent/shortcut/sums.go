package shortcut

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Kept sums: the admin dashboard's money figures, kept by triggers in
// list_sums in the writing transaction (as list_totals keeps counts), per
// workspace, status, currency and grouping value (a due date, a month), so
// a reader adds up a few hundred rows at most.

const (
	sumsTable   = "list_sums"
	sumsVersion = "v1"
)

// Sum declares one kept sum over the rows of Table in one of States.
type Sum struct {
	Name   string // "invoices.open"
	Table  string
	States []string // values of the status column that are summed
	// By is the grouping value of a row: SQL over its columns, each named
	// with the row reference passed in ("new.", "old." or "").
	By     func(ref string) string
	Amount string // the column summed
	// Columns are the columns By reads (a change to them moves the row).
	Columns []string
}

// Sums are the kept sums; their states repeat the documents' declared
// states (api/resource) that make money owed or invoiced.
var Sums = []Sum{
	{Name: "invoices.open", Table: "invoices", States: []string{"sent", "partially_paid", "overdue"},
		By: func(r string) string { return "coalesce(" + r + "due_date, '')" }, Columns: []string{"due_date"}, Amount: "remaining_cents"},
	{Name: "invoices.issued", Table: "invoices", States: []string{"sent", "partially_paid", "paid", "overdue"},
		By: func(r string) string { return "substr(" + r + "date, 1, 7)" }, Columns: []string{"date"}, Amount: "amount_excl_vat_cents"},
	{Name: "bills.open", Table: "bills", States: []string{"open", "partially_paid"},
		By: func(r string) string { return "coalesce(" + r + "due_date, '')" }, Columns: []string{"due_date"}, Amount: "remaining_cents"},
}

// SumRow is the kept sum of the rows of one status, currency and grouping value.
type SumRow struct {
	Status, Currency, By string
	N, Cents             int64
}

// key is the SQL of a row's key in list_sums: name:status:currency:by.
func (s Sum) key(ref string) string {
	return fmt.Sprintf("'%s:' || %sstatus || ':' || %scurrency_code || ':' || %s", s.Name, ref, ref, s.By(ref))
}

func (s Sum) states() string { return "('" + strings.Join(s.States, "', '") + "')" }

func sumsTables() []string {
	var out []string
	for _, s := range Sums {
		out = appendNew(out, s.Table)
	}
	return out
}

func sumsOf(table string) []Sum {
	return slices.DeleteFunc(slices.Clone(Sums), func(s Sum) bool { return s.Table != table })
}

// watched are the columns whose change moves a row between sums.
func watched(table string) []string {
	cols := []string{"status", "currency_code"}
	for _, s := range sumsOf(table) {
		cols = appendNew(cols, append([]string{s.Amount}, s.Columns...)...)
	}
	return cols
}

const sumsUpsert = " ON CONFLICT (workspace_id, k, shard) DO UPDATE SET n = %[1]s.n + excluded.n, cents = %[1]s.cents + excluded.cents"

// sumsTriggers on SQLite: one statement per sum, each doing nothing for a
// row outside the sum's states. SQLite has one writer: shard 0.
func (sqliteSQL) sumsTriggers(t string) []string {
	body := func(ref, sign string) string {
		var b []string
		for _, s := range sumsOf(t) {
			b = append(b, fmt.Sprintf("INSERT INTO %s (workspace_id, k, shard, n, cents) SELECT %sworkspace_id, %s, 0, %s1, %s%s%s WHERE %sstatus IN %s"+sumsUpsert+";",
				sumsTable, ref, s.key(ref), sign, sign, ref, s.Amount, ref, s.states(), sumsTable))
		}
		return strings.Join(b, " ")
	}
	var changed []string
	for _, c := range watched(t) {
		changed = append(changed, fmt.Sprintf("old.%[1]s IS NOT new.%[1]s", c))
	}
	return slices.Concat(sqliteTrigger(t+"_sums_ai", "INSERT ON "+t, body("new.", "")), sqliteTrigger(t+"_sums_ad", "DELETE ON "+t, body("old.", "-")),
		sqliteTrigger(t+"_sums_au", "UPDATE OF "+strings.Join(watched(t), ", ")+" ON "+t+" WHEN "+strings.Join(changed, " OR "), body("old.", "-")+" "+body("new.", "")))
}

// sumsTriggers on PostgreSQL work per statement, as the totals do. The
// shard follows the transaction, so one never holds two shards of a sum
// (which could deadlock), while concurrent ones mostly differ.
func (postgresSQL) sumsTriggers(t string) []string {
	rows := func(rel, sign string) string {
		var q []string
		for _, s := range sumsOf(t) {
			q = append(q, fmt.Sprintf("SELECT workspace_id, %s AS k, %s1 AS n, %s%s AS cents FROM %s WHERE status IN %s",
				s.key(""), sign, sign, s.Amount, rel, s.states()))
		}
		return strings.Join(q, " UNION ALL ")
	}
	apply := func(from string) string {
		return fmt.Sprintf(`INSERT INTO %[1]s (workspace_id, k, shard, n, cents)
	SELECT workspace_id, k, (txid_current() %% %[2]d)::int, SUM(n)::bigint, SUM(cents)::bigint FROM (%[3]s) x
	GROUP BY 1, 2 HAVING SUM(n) <> 0 OR SUM(cents) <> 0 ORDER BY 1, 2`+sumsUpsert+";", sumsTable, totalShards, from)
	}
	return statementTriggers(t, "sums", apply(rows("new_rows", "")), apply(rows("old_rows", "-")), apply(rows("old_rows", "-")+" UNION ALL "+rows("new_rows", "")))
}

// sumRows is the SQL that sums the rows of t above a rowid (bulk loads) or
// all of them, grouped as list_sums keeps them.
func sumRows(t, where string) string {
	var parts []string
	for _, s := range sumsOf(t) {
		parts = append(parts, fmt.Sprintf("SELECT workspace_id, %s AS k, COUNT(*) AS n, SUM(%s) AS cents FROM %s WHERE %s AND status IN %s GROUP BY 1, 2",
			s.key(""), s.Amount, t, where, s.states()))
	}
	return strings.Join(parts, " UNION ALL ")
}

func (d *Set) migrateSums(ctx context.Context) error {
	marker := sumsVersion
	for _, s := range Sums {
		marker += ";" + s.Name + "=" + s.key("") + " " + s.states() + " " + s.Amount
	}
	return d.db.Rebuild(ctx, sumsTable+"_version", marker, d.insertTriggersMissing(sumsTables(), "_sums_ai"), func(tx *sql.Tx) ([]string, error) {
		stmts := []string{"DROP TABLE IF EXISTS " + sumsTable,
			`CREATE TABLE ` + sumsTable + ` (workspace_id TEXT NOT NULL, k TEXT NOT NULL, shard INTEGER NOT NULL,
				n BIGINT NOT NULL, cents BIGINT NOT NULL, PRIMARY KEY (workspace_id, k, shard))`}
		for _, t := range sumsTables() {
			stmts = append(stmts, d.sql.sumsTriggers(t)...)
			// In the triggers' transaction: nothing counted twice or missed.
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, k, shard, n, cents) SELECT workspace_id, k, 0, n, cents FROM (%s) x",
				sumsTable, sumRows(t, "true")))
		}
		return stmts, nil
	})
}

// bulkSums adds the rows a bulk load inserted (rowid above its argument)
// to list_sums, as the insert trigger would have one by one.
func (d *Set) bulkSums(t string) []bulkStmt {
	return []bulkStmt{{q: fmt.Sprintf("INSERT INTO %s (workspace_id, k, shard, n, cents) SELECT workspace_id, k, 0, n, cents FROM (%s) x WHERE true"+sumsUpsert,
		sumsTable, sumRows(t, "rowid > ?1"), sumsTable), above: true}}
}

// SumsOf reads a kept sum of the workspace: one row per status, currency
// and grouping value that has rows. The dashboard keeps what it makes of
// them (web's figuresOf).
func (d *Set) SumsOf(ctx context.Context, workspaceID, name string) ([]SumRow, error) {
	var out []SumRow
	var k string
	var r SumRow
	q, args := "SELECT k, CAST(SUM(n) AS BIGINT), CAST(SUM(cents) AS BIGINT) FROM "+sumsTable+" WHERE workspace_id = ? AND k >= ? AND k < ? GROUP BY k",
		[]any{workspaceID, name + ":", name + ";"}
	if !d.db.Uses("keptSums") {
		// The plain path: the rows summed.
		for _, s := range Sums {
			if s.Name == name {
				q, args = fmt.Sprintf("SELECT %s, COUNT(*), CAST(SUM(%s) AS BIGINT) FROM %s WHERE workspace_id = ? AND status IN %s GROUP BY 1",
					s.key(""), s.Amount, s.Table, s.states()), []any{workspaceID}
			}
		}
	}
	err := database.EachRow(ctx, d.db.ReadPool, d.db.Rebind(q), args, []any{&k, &r.N, &r.Cents}, func() {
		parts := strings.SplitN(strings.TrimPrefix(k, name+":"), ":", 3)
		// r.N == 0: every row of it left the sum.
		if r.N != 0 && len(parts) == 3 {
			r.Status, r.Currency, r.By = parts[0], parts[1], parts[2]
			out = append(out, r)
		}
	})
	return out, err
}
