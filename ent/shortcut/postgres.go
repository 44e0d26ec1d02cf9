package shortcut

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// postgresSQL is PostgreSQL's half of sqlDialect.
type postgresSQL struct{}

func (postgresSQL) rowKey() string   { return "t.id" }
func (postgresSQL) jsonList() string { return "(SELECT jsonb_array_elements_text(CAST(? AS jsonb)))" }
func (postgresSQL) jsonAgg(col string) string {
	return "COALESCE(json_agg(" + col + ")::text, '[]')"
}
func (postgresSQL) manyAmong(cond string) string                           { return cond }
func (postgresSQL) dayBound(day time.Time) any                             { return day }
func (postgresSQL) boolText(b bool) string                                 { return fmt.Sprint(b) }
func (postgresSQL) staleTotals(context.Context, *sql.Tx) ([]string, error) { return nil, nil }

func (postgresSQL) wordsOf(expr string) string {
	return "regexp_replace(lower(" + expr + "), '[^[:alnum:]]+', ' ', 'g')"
}

// foldTokens: SearchTokens folds as to_tsvector('simple') over the
// lowered, punctuation-free text does.
func (postgresSQL) foldTokens(context.Context, *Set, string) ([]string, bool, error) {
	return nil, false, nil
}

func (postgresSQL) wordsCond(s Search, _ string, toks []string, or bool) (string, []any, string) {
	op := " & "
	if or {
		op = " | "
	}
	// Each token a prefix: "ab:* & cd:*" (toks is never empty).
	return postgresVector("t.", s.words()) + " @@ to_tsquery('simple', ?)", []any{strings.Join(toks, ":*"+op) + ":*"}, ""
}

func (postgresSQL) dayOf(ref string) string {
	return "to_char(" + ref + "created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
}

func (postgresSQL) dropTrigger(name, table string) string {
	return "DROP TRIGGER IF EXISTS " + name + " ON " + table
}

func (postgresSQL) newValueTrigger(body string) []string {
	return []string{plpgsql(valuesTable+"_new", strings.ReplaceAll(body, "new.", "NEW.")),
		fmt.Sprintf("CREATE TRIGGER %[1]s_new AFTER INSERT ON %[1]s FOR EACH ROW EXECUTE FUNCTION %[1]s_new()", valuesTable)}
}

func plpgsql(name, body string) string {
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n\t%s\n\tRETURN NULL;\nEND $$", name, body)
}

// statementTriggers run ins, del and upd once per statement on table t,
// over its transition tables new_rows and old_rows, as <t>_<kind>_ai, _ad
// and _au; an empty body drops its trigger. (PostgreSQL allows no column
// list on triggers with transition tables.)
func statementTriggers(t, kind, ins, del, upd string) []string {
	var out []string
	for _, e := range []struct{ body, fn, name, event, tables string }{
		{ins, "ins", "ai", "INSERT", "NEW TABLE AS new_rows"},
		{del, "del", "ad", "DELETE", "OLD TABLE AS old_rows"},
		{upd, "upd", "au", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"},
	} {
		prefix := t + "_" + kind + "_"
		out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %s%s ON %s", prefix, e.name, t))
		if e.body != "" {
			out = append(out, plpgsql(prefix+e.fn, e.body), fmt.Sprintf("CREATE TRIGGER %s%s AFTER %s ON %s REFERENCING %s FOR EACH STATEMENT EXECUTE FUNCTION %s%s()",
				prefix, e.name, e.event, t, e.tables, prefix, e.fn))
		}
	}
	return out
}

// postgresValues counts per statement (a bulk insert touches each value
// once) into the transaction's shard of totalShards, so concurrent inserts
// of the same client's invoices do not queue on one row.
func (postgresSQL) valuesTriggers(t, c string) []string {
	upsert := func(sel string) string {
		return fmt.Sprintf(`INSERT INTO %[1]s (workspace_id, tbl, value, shard, n) %[2]s
	ON CONFLICT (workspace_id, tbl, value, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;`, valuesTable, sel)
	}
	rows := func(from, sign string) string {
		return upsert(fmt.Sprintf("SELECT workspace_id, '%s', coalesce(%s, ''), (txid_current() %% %d)::int, %scount(*) FROM %s GROUP BY 1, 3",
			t, c, totalShards, sign, from))
	}
	moved := func(side, sign string) string {
		return upsert(fmt.Sprintf("SELECT %[1]s.workspace_id, '%[2]s', coalesce(%[1]s.%[3]s, ''), (txid_current() %% %[4]d)::int, %[5]scount(*) "+
			"FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.%[3]s IS DISTINCT FROM n.%[3]s GROUP BY 1, 3", side, t, c, totalShards, sign))
	}
	return statementTriggers(t, "values", rows("new_rows", ""), rows("old_rows", "-"), moved("o", "-")+"\n\t"+moved("n", ""))
}

// postgresVector is the indexed expression; queries must repeat it exactly.
func postgresVector(prefix string, cols []string) string {
	return fmt.Sprintf(`to_tsvector('simple'::regconfig, regexp_replace(lower(%s), '[^[:alnum:]]+', ' ', 'g'))`, document(prefix, cols))
}

func (postgresSQL) searchIndex(ctx context.Context, d *Set, s Search) error {
	name := ""
	if cols := s.words(); len(cols) > 0 {
		vec := postgresVector("", cols)
		sum := sha256.Sum256([]byte(vec))
		name = s.Table + "_q_" + hex.EncodeToString(sum[:4])
		// fastupdate off: GIN's pending list is read in full by every search
		// until merged. Older indexes are switched and merged on every start.
		if err := database.ExecAll(ctx, d.db.WritePool,
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s USING gin ((%s)) WITH (fastupdate = off)", name, s.Table, vec),
			fmt.Sprintf("ALTER INDEX %s SET (fastupdate = off)", name),
			fmt.Sprintf("SELECT gin_clean_pending_list('%s')", name)); err != nil {
			return err
		}
	}
	// Drop indexes of earlier column sets.
	drops, err := database.QueryStrings(ctx, d.db.WritePool, "SELECT 'DROP INDEX IF EXISTS ' || indexname FROM pg_indexes WHERE tablename = $1 AND indexname LIKE $2 AND indexname <> $3",
		s.Table, s.Table+"_q_%", name)
	if err != nil {
		return err
	}
	return database.ExecAll(ctx, d.db.WritePool, drops...)
}

func (postgresSQL) totalsTriggers(d *Set, t string) []string {
	add := func(rows, sign string) string {
		q := fmt.Sprintf(`INSERT INTO %[1]s (workspace_id, tbl, shard, n, gen)
	SELECT workspace_id, '%[2]s', (txid_current() %% %[3]d)::int, %[4]scount(*), 1 FROM %[5]s GROUP BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n, gen = %[1]s.gen + 1;
	INSERT INTO %[6]s (workspace_id, tbl, day, shard, n)
	SELECT workspace_id, '%[2]s', %[7]s, (txid_current() %% %[3]d)::int, %[4]scount(*) FROM %[5]s GROUP BY 1, 3 ORDER BY 1, 3
	ON CONFLICT (workspace_id, tbl, day, shard) DO UPDATE SET n = %[6]s.n + EXCLUDED.n;`,
			totalsTable, t, totalShards, sign, rows, daysTable, d.sql.dayOf(""))
		for _, c := range d.values[t] {
			q += fmt.Sprintf(`
	INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, %[2]s, (txid_current() %% %[3]d)::int, %[4]scount(*) FROM %[5]s GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;`, totalsTable, valueKey(t, c, ""), totalShards, sign, rows)
		}
		return q
	}
	// An update grows the table's gen, its version (versions.go), and moves
	// rows between values, netted per value, so one that keeps the value
	// touches no counter. Rows go in key order: two updates taking two
	// shards of one counter in opposite orders deadlock.
	moved := fmt.Sprintf(`INSERT INTO %[1]s (workspace_id, tbl, shard, n, gen)
	SELECT workspace_id, '%[2]s', (txid_current() %% %[3]d)::int, 0, 1 FROM new_rows GROUP BY workspace_id ORDER BY workspace_id
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET gen = %[1]s.gen + 1;`, totalsTable, t, totalShards)
	for _, c := range d.values[t] {
		moved += fmt.Sprintf(`
	INSERT INTO %[1]s (workspace_id, tbl, shard, n)
	SELECT workspace_id, k, (txid_current() %% %[3]d)::int, SUM(d) FROM (
		SELECT workspace_id, %[2]s AS k, -1 AS d FROM old_rows UNION ALL SELECT workspace_id, %[2]s, 1 FROM new_rows) x
	GROUP BY 1, 2 HAVING SUM(d) <> 0 ORDER BY 1, 2
	ON CONFLICT (workspace_id, tbl, shard) DO UPDATE SET n = %[1]s.n + EXCLUDED.n;`, totalsTable, valueKey(t, c, ""), totalShards)
	}
	return statementTriggers(t, "totals", add("new_rows", ""), add("old_rows", "-"), moved)
}
