// Package demo fills a workspace with realistic, internally consistent
// records: the data behind `serve --demo`, `ledgerbase demo` and benchmarks.
//
// Consistency is the point: totals, balances and statuses are what the
// rows behind them (payments, shipments, ledgers, variants) add up to.
package demo

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/sequence"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Options scales the data: Invoices invoices, every other resource in
// proportion unless counted here.
type Options struct {
	Invoices int
	// Clients, SalesOrders and Products, when above zero, override their
	// proportion to Invoices (by default /40, /20 and /100).
	Clients, SalesOrders, Products int
	// Seed and Now make the content reproducible (ids stay unique per run).
	Seed uint64
	Now  time.Time
	// RowTriggers keeps the insert triggers firing row by row (statement
	// by statement on PostgreSQL), in transactions of commitEvery rows. By
	// default a SQLite load, and a PostgreSQL one with Alone, is one
	// shortcut.Set.Bulk, which does their work at the end.
	RowTriggers bool
	// Alone promises that nothing else uses the database while the run
	// loads (shortcut.BulkOptions.Alone): SQLite may then skip the WAL, and
	// PostgreSQL's load locks the tables it fills until it commits.
	Alone bool
	// Progress, when set, hears the name of each step as it starts
	// ("catalog", ..., "indexes" for a Bulk load's rebuild, "done").
	Progress func(step string)
}

// Counts says how many records of each table a run wrote.
type Counts map[string]int

// span is how far back the demo's history reaches.
const span = 2 * 365 * 24 * time.Hour

// Seed fills workspace wsID.
func Seed(ctx context.Context, db *database.DB, wsID string, o Options) error {
	_, err := Run(ctx, db, wsID, o)
	return err
}

// Run fills workspace wsID and reports what it wrote.
func Run(ctx context.Context, db *database.DB, wsID string, o Options) (Counts, error) {
	return run(ctx, db, wsID, o, maxRows)
}

// run writes at most rows rows per statement.
func run(ctx context.Context, db *database.DB, wsID string, o Options, rows int) (Counts, error) {
	if o.Invoices <= 0 {
		o.Invoices = 50
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	g := &gen{
		rng: rand.New(rand.NewPCG(o.Seed, 0x1edb)), now: o.Now.UTC().Truncate(time.Second),
		ws: wsID, seed: o.Seed, n: o.Invoices, o: o, sqlite: db.Dialect == dialect.SQLite,
		seq: map[string]int{}, quota: map[string]int{},
	}
	// A second run into the same workspace numbers after the first.
	var err error
	if g.run, err = priorRuns(ctx, db, wsID); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	load := func(tx *sql.Tx) error {
		s := newSink(ctx, db, tx, rows)
		g.t = newTables(s)
		g.generate(s)
		if err := s.close(g.t.all); err != nil {
			return err
		}
		if tx != nil {
			g.progress("indexes")
		}
		return ctx.Err()
	}
	// PostgreSQL defers triggers and indexes only with Alone: the load
	// then locks its tables until it commits.
	if !o.RowTriggers && db.Uses("bulkLoad") && (g.sqlite || o.Alone) {
		err = shortcut.Of(db).Bulk(ctx, shortcut.BulkOptions{Alone: o.Alone, Tables: tableNames()}, load)
	} else {
		restore := shortcut.Of(db).BulkCache(ctx)
		err = load(nil)
		restore()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := g.advanceSequences(ctx, db); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if !g.sqlite {
		// Fresh statistics: autovacuum refreshes them only later, and until
		// then PostgreSQL would plan a q search on a big workspace as if it
		// were a rare one. ANALYZE samples a bounded number of rows.
		g.progress("statistics")
		for _, t := range g.t.all {
			if t.Rows == 0 {
				continue
			}
			if _, err := db.WritePool.ExecContext(ctx, "ANALYZE "+t.name); err != nil {
				return nil, fmt.Errorf("demo: analyze %s: %w", t.name, err)
			}
		}
	}
	g.progress("done")
	c := Counts{}
	for _, t := range g.t.all {
		c[t.name] = t.Rows
	}
	return c, nil
}

// demoSeries are the workspace counters (see api/writes' series) behind
// the numbers the demo gives out, by the demo's own sequence names.
var demoSeries = map[string]string{"inv": "invoices", "quo": "quotes", "crn": "credit_notes", "so": "sales_orders", "bill": "bills", "shp": "shipments", "ret": "returns"}

// advanceSequences moves the workspace's number counters past the demo's,
// so numbers the API allocates next never collide with them.
func (g *gen) advanceSequences(ctx context.Context, db *database.DB) error {
	for name, series := range demoSeries {
		n, ok := g.seq[name]
		if !ok {
			continue
		}
		v := int64(g.run*10_000_000 + n)
		cur, err := db.Writer.Sequence.Query().Where(sequence.WorkspaceID(g.ws), sequence.Name(series)).Only(ctx)
		switch {
		case ent.IsNotFound(err):
			err = db.Writer.Sequence.Create().SetWorkspaceID(g.ws).SetName(series).SetValue(v).Exec(ctx)
		case err == nil && cur.Value < v:
			err = db.Writer.Sequence.UpdateOneID(cur.ID).SetValue(v).Exec(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// priorRuns tells runs into the same workspace apart (by their stores,
// which only demo runs make) so this one's numbers, SKUs and codes differ.
func priorRuns(ctx context.Context, db *database.DB, wsID string) (int, error) {
	var n int
	err := db.WritePool.QueryRowContext(ctx, db.Rebind("SELECT COUNT(*) FROM stores WHERE workspace_id = ?"), wsID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("demo: %w", err)
	}
	return n, nil
}

func (g *gen) generate(s *sink) {
	g.progress("catalog")
	g.stores()
	g.categories()
	g.catalog()
	g.progress("clients")
	g.clients()
	g.vendors()
	if s.stopped() {
		return
	}
	g.progress("invoices")
	g.invoices()
	if s.stopped() {
		return
	}
	g.progress("quotes")
	g.standaloneQuotes()
	g.progress("sales orders")
	g.salesOrders()
	if s.stopped() {
		return
	}
	g.progress("promotions, gift cards, bills")
	g.promotions()
	g.giftCards()
	g.bills()
}

func (g *gen) progress(step string) {
	if g.o.Progress != nil {
		g.o.Progress(step)
	}
}

// gen holds the generator's state, and the records later ones refer to.
type gen struct {
	rng  *rand.Rand
	now  time.Time
	ws   string
	seed uint64
	n    int
	o    Options
	run  int // earlier runs in this workspace
	t    *tables
	// sqlite: times go to the driver preformatted (see tm).
	sqlite bool

	storeList []store
	cats      []category
	items     []item
	products  []int // indexes into items
	clientsL  []party
	vendorsL  []party
	// delivered online orders, for gift card redemptions
	shopOrders []string
	seq        map[string]int
	quota      map[string]int
}

type party struct {
	id, name, currency string
}

// scale is n/div, at least lo.
func scale(n, div, lo int) int { return max(lo, n/div) }

// count is want when it is set, else n/div, at least lo.
func count(want, n, div, lo int) int {
	if want > 0 {
		return want
	}
	return scale(n, div, lo)
}

// timeline spreads the i-th of n records over the demo's history, oldest
// first, so ids (which carry their creation time) sort like created_at.
func (g *gen) timeline(i, n int) time.Time {
	step := span / time.Duration(n+1)
	t := g.now.Add(-span + step*time.Duration(i+1))
	if step > 2*time.Second {
		t = t.Add(-time.Duration(g.rng.Int64N(int64(step / 2))))
	}
	return t.Truncate(time.Millisecond)
}

// after is a moment between from and now, at most within days.
func (g *gen) after(from time.Time, minH, maxDays int) time.Time {
	lo := from.Add(time.Duration(minH) * time.Hour)
	hi := from.Add(time.Duration(maxDays) * 24 * time.Hour)
	if hi.After(g.now) {
		hi = g.now
	}
	if !hi.After(lo) {
		if lo.After(g.now) {
			return g.now
		}
		return lo
	}
	return lo.Add(time.Duration(g.rng.Int64N(int64(hi.Sub(lo))))).Truncate(time.Millisecond)
}

func (g *gen) id(prefix string, at time.Time) string { return ids.At(prefix, at) }

// next is the next number of a sequence, after those of earlier runs.
func (g *gen) next(name string) int {
	g.seq[name]++
	return g.run*10_000_000 + g.seq[name]
}

// recent places the newest records of a stream, those a user acts on next
// whatever the scale: the i-th of n records, when among the len(ages)
// newest, gets its rank (0 the newest) and the moment ages[rank] ago; any
// other gets -1 and its place in the timeline.
func (g *gen) recent(i, n int, ages []time.Duration) (time.Time, int) {
	if r := n - 1 - i; r < len(ages) {
		return g.now.Add(-ages[r]).Truncate(time.Millisecond), r
	}
	return g.timeline(i, n), -1
}

const oneDay = 24 * time.Hour

// first is true the first k times it is asked about name: small runs still
// get one of each rare case (a cancelled order, a return).
func (g *gen) first(name string, k int) bool {
	g.quota[name]++
	return g.quota[name] <= k
}

func (g *gen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

func day(t time.Time) string { return t.Format("2006-01-02") }

func js(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain types are marshalled
	}
	return b
}

func str(s string) *string { return &s }

// nullable turns "" into NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
