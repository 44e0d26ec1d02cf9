package shortcut

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Bulk loading on PostgreSQL, with Alone and the load's tables named: the
// load's transaction locks those tables, drops their statement-level insert
// triggers (totals, sums, values) and the plain indexes and foreign keys of
// those still empty, runs the load, does each dropped trigger's work once
// over the rows the transaction inserted, and puts triggers, foreign keys
// and indexes back from their own definitions before it commits. PostgreSQL
// DDL is transactional: a failure leaves the database as it was.

// bulkWorkMem is the memory each index build may use: a GIN index built in
// memory is written once, not merged from runs on disk.
const bulkWorkMem = "512MB"

// pgDeferred is one dropped object, with the SQL that drops and restores it.
type pgDeferred struct{ drop, restore string }

// pgTrigger is an insert trigger of a loaded table whose work bulkPostgres
// does once: body is its function's SQL over the transition table new_rows.
type pgTrigger struct {
	table, name, def, body string
}

// CopyFrom loads rows into table by COPY, in tx, when tx is the
// transaction of a Bulk load on PostgreSQL with its triggers and indexes
// deferred: args holds the rows one after the other, each with a value
// per column of cols. Without indexes to maintain, COPY loads faster than
// multi-row INSERTs (no statement of thousands of parameters to parse and
// bind). ok is false for any other tx (nothing was
// done: the caller inserts).
func (d *Set) CopyFrom(ctx context.Context, tx *sql.Tx, table string, cols []string, args []any) (ok bool, err error) {
	c, found := d.bulkConns.Load(tx)
	if !found || len(cols) == 0 {
		return false, nil
	}
	n := len(args) / len(cols)
	src := pgx.CopyFromSlice(n, func(i int) ([]any, error) { return args[i*len(cols) : (i+1)*len(cols)], nil })
	// On the transaction's own connection, so the COPY is part of it.
	return true, c.(*sql.Conn).Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("database: COPY needs a pgx connection")
		}
		got, err := pc.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, src)
		if err == nil && got != int64(n) {
			err = fmt.Errorf("copied %d rows of %d", got, n)
		}
		if err != nil {
			return fmt.Errorf("database: copy into %s: %w", table, err)
		}
		return nil
	})
}

// bulkPostgres is Bulk's transaction on PostgreSQL.
func (d *Set) bulkPostgres(ctx context.Context, tables []string, load func(tx *sql.Tx) error) error {
	conn, err := d.db.WritePool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return database.RunTx(ctx, conn, func(tx *sql.Tx) error {
		quoted := make([]string, len(tables))
		for i, t := range tables {
			quoted[i] = quoteIdent(t)
		}
		// All locks at once, in one statement: other sessions wait for the
		// commit rather than write without the triggers, and no lock taken
		// later by a DROP can deadlock with them.
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+strings.Join(quoted, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		triggers, err := d.pgDeferredTriggers(ctx, tx, tables)
		if err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		var objects []pgDeferred
		for _, t := range triggers {
			objects = append(objects, pgDeferred{drop: "DROP TRIGGER " + quoteIdent(t.name) + " ON " + quoteIdent(t.table), restore: t.def})
		}
		for _, t := range tables {
			more, err := pgDeferredOfEmpty(ctx, tx, t)
			if err != nil {
				return fmt.Errorf("database: bulk load: %w", err)
			}
			objects = append(objects, more...)
		}
		for _, o := range objects {
			if _, err := tx.ExecContext(ctx, o.drop); err != nil {
				return fmt.Errorf("database: bulk load: %s: %w", o.drop, err)
			}
		}
		d.bulkConns.Store(tx, conn)
		err = load(tx)
		d.bulkConns.Delete(tx)
		if err != nil {
			return err
		}
		if err := pgFill(ctx, tx, triggers); err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		// Parallel workers build B-trees (max_parallel_maintenance_workers).
		if _, err := tx.ExecContext(ctx, "SET LOCAL maintenance_work_mem = '"+bulkWorkMem+"'"); err != nil {
			return fmt.Errorf("database: bulk load: %w", err)
		}
		// In the reverse order of the drops.
		for i := len(objects) - 1; i >= 0; i-- {
			if _, err := tx.ExecContext(ctx, objects[i].restore); err != nil {
				return fmt.Errorf("database: bulk load: restore: %s: %w", objects[i].restore, err)
			}
		}
		return nil
	})
}

// pgFill does the deferred triggers' work: each one's own SQL, with the
// rows this transaction inserted into its table as new_rows (xmin: a load
// only inserts). new_rows is a temporary copy of the columns the triggers
// of a table name, so the table is read once, not once per statement.
func pgFill(ctx context.Context, tx *sql.Tx, triggers []pgTrigger) error {
	for i := 0; i < len(triggers); {
		t := triggers[i].table
		var bodies []string
		for ; i < len(triggers) && triggers[i].table == t; i++ {
			bodies = append(bodies, triggers[i].body)
		}
		cols, err := database.QueryStrings(ctx, tx, "SELECT attname FROM pg_attribute WHERE attrelid = CAST($1 AS regclass) AND attnum > 0 AND NOT attisdropped ORDER BY attnum", quoteIdent(t))
		if err != nil {
			return err
		}
		// Any column a body names as a word (more is harmless).
		var used []string
		all := strings.Join(bodies, "\n")
		for _, c := range cols {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(c) + `\b`).MatchString(all) {
				used = append(used, quoteIdent(c))
			}
		}
		if len(used) == 0 {
			used = []string{"*"}
		}
		stmts := append([]string{"CREATE TEMP TABLE new_rows ON COMMIT DROP AS SELECT " + strings.Join(used, ", ") + " FROM " + quoteIdent(t) +
			" WHERE xmin = pg_current_xact_id()::xid"}, bodies...)
		if err := database.ExecAll(ctx, tx, append(stmts, "DROP TABLE pg_temp.new_rows")...); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

// pgDeferredTriggers finds the statement-level insert triggers of tables
// whose function is exactly the one this package makes (totals, sums,
// values): their work is one INSERT ... SELECT over new_rows, which
// bulkPostgres runs over the load's rows. Any other trigger keeps firing.
func (d *Set) pgDeferredTriggers(ctx context.Context, tx *sql.Tx, tables []string) ([]pgTrigger, error) {
	// The functions this package makes for the tables, by name.
	made := map[string]string{}
	for _, t := range tables {
		var stmts []string
		if hasWorkspaceColumn(t) {
			stmts = append(stmts, d.sql.totalsTriggers(d, t)...)
		}
		if len(sumsOf(t)) > 0 {
			stmts = append(stmts, d.sql.sumsTriggers(t)...)
		}
		if s, ok := d.searches[t]; ok && s.few() != "" {
			stmts = append(stmts, d.sql.valuesTriggers(t, s.few())...)
		}
		for _, q := range stmts {
			if name, src, ok := plpgsqlSource(q); ok {
				made[name] = src
			}
		}
	}
	var out []pgTrigger
	var tr pgTrigger
	var fn, src string
	// tgtype 4: AFTER INSERT, FOR EACH STATEMENT.
	err := database.EachRow(ctx, tx, `SELECT c.relname, g.tgname, pg_get_triggerdef(g.oid), p.proname, p.prosrc
		FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
		WHERE g.tgrelid IN (SELECT CAST(x AS regclass) FROM unnest(CAST($1 AS text[])) x) AND NOT g.tgisinternal AND g.tgenabled = 'O'
			AND g.tgtype = 4 AND g.tgnargs = 0 AND p.pronargs = 0
		ORDER BY c.relname, g.tgname`,
		[]any{"{" + strings.Join(tables, ",") + "}"}, []any{&tr.table, &tr.name, &tr.def, &fn, &src}, func() {
			if want, ok := made[fn]; ok && want == src && strings.HasPrefix(fn, tr.table+"_") {
				if body, ok := plpgsqlBody(src); ok {
					tr.body = body
					out = append(out, tr)
				}
			}
		})
	return out, err
}

// pgDeferredOfEmpty are, when table t is empty, its plain indexes (not
// unique: upserts and keys need those; not backing a constraint) and its
// foreign keys: built again after the load, an index is one sort rather
// than a million inserts at random places, and a foreign key is checked
// by one join rather than a lookup per row. A table that already holds
// rows keeps them.
func pgDeferredOfEmpty(ctx context.Context, tx *sql.Tx, t string) ([]pgDeferred, error) {
	var has bool
	if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quoteIdent(t)+")").Scan(&has); err != nil || has {
		return nil, err
	}
	var out []pgDeferred
	var o pgDeferred
	// Foreign keys come first, so they come back last (see bulkPostgres).
	err := database.EachRow(ctx, tx, `SELECT 'ALTER TABLE ' || CAST(conrelid AS regclass) || ' DROP CONSTRAINT ' || quote_ident(conname),
			'ALTER TABLE ' || CAST(conrelid AS regclass) || ' ADD CONSTRAINT ' || quote_ident(conname) || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE conrelid = CAST($1 AS regclass) AND contype = 'f' AND convalidated
		ORDER BY conname`, []any{quoteIdent(t)}, []any{&o.drop, &o.restore}, func() { out = append(out, o) })
	if err != nil {
		return nil, err
	}
	// pg_get_indexdef omits the tablespace and the CLUSTER mark: indexes
	// with either stay.
	err = database.EachRow(ctx, tx, `SELECT 'DROP INDEX ' || CAST(x.indexrelid AS regclass), pg_get_indexdef(x.indexrelid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = CAST($1 AS regclass) AND NOT x.indisunique AND NOT x.indisexclusion AND x.indisvalid AND x.indisready
			AND NOT x.indisclustered AND i.reltablespace = 0
			AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)
		ORDER BY CAST(x.indexrelid AS regclass)`, []any{quoteIdent(t)}, []any{&o.drop, &o.restore}, func() { out = append(out, o) })
	return out, err
}

// plpgsqlSource splits a statement of plpgsql (postgres.go) into the
// function's name and source, as pg_proc.prosrc holds it.
func plpgsqlSource(q string) (name, src string, ok bool) {
	head, rest, ok := strings.Cut(q, "() RETURNS trigger LANGUAGE plpgsql AS $$")
	name, found := strings.CutPrefix(head, "CREATE OR REPLACE FUNCTION ")
	src, end := strings.CutSuffix(rest, "$$")
	return name, src, ok && found && end
}

// plpgsqlBody is the statements of a function source plpgsql made.
func plpgsqlBody(src string) (string, bool) {
	body, ok := strings.CutPrefix(src, "\nBEGIN\n\t")
	body, end := strings.CutSuffix(body, "\n\tRETURN NULL;\nEND ")
	return body, ok && end && body != ""
}
