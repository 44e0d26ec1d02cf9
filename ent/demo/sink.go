package demo

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"

	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Bulk loading: full batches of rows go as multi-row INSERTs (COPY in a
// PostgreSQL bulk load) to one writer goroutine, so generating the next
// rows overlaps with writing the last ones; see Options.RowTriggers for the
// transactions they go in.

const (
	// maxArgs stays under SQLite's default variable limit (32766) and
	// PostgreSQL's (65535).
	maxArgs = 30000
	// maxRows caps one statement: fewer, larger statements load faster.
	maxRows = 2000
	// commitEvery bounds the size of one transaction (rows).
	commitEvery = 200_000
)

type job struct {
	t    *table
	args []any
	rows int
}

type sink struct {
	db      *database.DB
	tx      *sql.Tx // the one transaction of a bulk load, or nil
	maxRows int
	ctx     context.Context
	jobs    chan job
	done    chan error
	failed  atomic.Bool
}

func newSink(ctx context.Context, db *database.DB, tx *sql.Tx, rows int) *sink {
	s := &sink{db: db, tx: tx, maxRows: rows, ctx: ctx, jobs: make(chan job, 8), done: make(chan error, 1)}
	go s.run()
	return s
}

// table is one destination of rows, with the tables its rows reference:
// those are flushed first so foreign keys always find their parent.
type table struct {
	s       *sink
	name    string
	cols    []string
	per     int // rows per statement
	buf     []any
	parents []*table
	Rows    int
}

func (s *sink) table(name string, cols []string, parents ...*table) *table {
	per := min(s.maxRows, maxArgs/len(cols))
	return &table{s: s, name: name, cols: cols, per: per, buf: make([]any, 0, per*len(cols)), parents: parents}
}

// row adds one row; vals follow the table's columns.
func (t *table) row(vals ...any) {
	if len(vals) != len(t.cols) {
		panic("demo: " + t.name + ": row has the wrong number of values") // a bug in this package
	}
	t.buf = append(t.buf, vals...)
	t.Rows++
	if len(t.buf) == cap(t.buf) {
		t.flush()
	}
}

func (t *table) flush() {
	for _, p := range t.parents {
		p.flush()
	}
	if len(t.buf) == 0 {
		return
	}
	if !t.s.failed.Load() {
		t.s.jobs <- job{t: t, args: t.buf, rows: len(t.buf) / len(t.cols)}
	}
	t.buf = make([]any, 0, t.per*len(t.cols))
}

func (t *table) insertSQL(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(t.name)
	b.WriteString(" (")
	b.WriteString(strings.Join(t.cols, ", "))
	b.WriteString(") VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ") + ")"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return t.s.db.Rebind(b.String())
}

type stmtKey struct {
	t    *table
	rows int
}

// run is the writer: it executes batches in order, committing every
// commitEvery rows outside a bulk load; after an error it only drains.
func (s *sink) run() {
	var err error
	tx := s.tx
	stmts := map[stmtKey]*sql.Stmt{}
	since := 0
	for j := range s.jobs {
		if err != nil {
			continue
		}
		if tx == nil {
			if tx, err = s.db.WritePool.BeginTx(s.ctx, nil); err != nil {
				s.failed.Store(true)
				continue
			}
		}
		// A PostgreSQL bulk load copies (without indexes, COPY is faster).
		var copied bool
		if copied, err = shortcut.Of(s.db).CopyFrom(s.ctx, tx, j.t.name, j.t.cols, j.args); copied || err != nil {
			if err != nil {
				s.failed.Store(true)
			}
			continue
		}
		k := stmtKey{j.t, j.rows}
		st := stmts[k]
		if st == nil {
			if st, err = tx.PrepareContext(s.ctx, j.t.insertSQL(j.rows)); err != nil {
				s.failed.Store(true)
				continue
			}
			stmts[k] = st
		}
		if _, err = st.ExecContext(s.ctx, j.args...); err != nil {
			s.failed.Store(true)
			continue
		}
		if since += j.rows; since >= commitEvery && s.tx == nil {
			err = tx.Commit()
			tx, since = nil, 0
			clear(stmts) // closed with their transaction
			if err != nil {
				s.failed.Store(true)
			}
		}
	}
	if tx != nil && s.tx == nil {
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
	}
	s.done <- err
}

// close flushes every table (parents first) and waits for the writer.
func (s *sink) close(tables []*table) error {
	for _, t := range tables {
		t.flush()
	}
	close(s.jobs)
	return <-s.done
}

// stopped reports whether writing failed, so generation can stop early.
func (s *sink) stopped() bool { return s.failed.Load() || s.ctx.Err() != nil }
