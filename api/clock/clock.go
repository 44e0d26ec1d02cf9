// Package clock moves the records whose state follows time (an invoice
// past its due date becomes overdue), each move a system write with its
// events (writes.Request.MoveStale). The tick makes every move in every
// workspace; a read of a resource whose state must be exact makes its
// moves in the reader's workspace first (Clock.Exact). Each record moves,
// and is told of, once, however many processes and readers race.
package clock

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/event"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// move is one kind of move: the records of r that stale selects go to
// status to.
type move struct {
	r     *resource.Resource
	to    string
	job   string // the events' actor id
	exact bool   // made before every read of r too, not only by the tick
	date  bool   // stale compares with today's date (UTC), not the time
	// stale is the SQL condition (besides the workspace) selecting the
	// records the clock has overtaken; every ? is the time (or date).
	stale string
}

// moves is every move of the clock, in the tick's order. Times compare as
// stored: SQLite's UTC text sorts in time order. A promotion both of whose
// dates passed expires without being active first.
var moves = []move{
	// A payment on an overdue invoice keeps it overdue while money remains
	// (api/writes/payments.go).
	{r: resource.Invoices, to: "overdue", job: "overdue_sweep", date: true,
		stale: "status IN ('sent', 'partially_paid') AND due_date < ? AND remaining_cents > 0"},
	// A depleted card stays depleted: nothing is left to expire.
	{r: resource.GiftCards, to: "expired", job: "gift_card_expiry", exact: true,
		stale: "status = 'active' AND expires_at <= ?"},
	// A promotion's status follows its dates until it is archived
	// (api/writes/promotions.go).
	{r: resource.Promotions, to: "expired", job: "promotion_dates", exact: true,
		stale: "status IN ('scheduled', 'active') AND ends_at <= ?"},
	{r: resource.Promotions, to: "active", job: "promotion_dates", exact: true,
		stale: "status = 'scheduled' AND (starts_at IS NULL OR starts_at <= ?) AND (ends_at IS NULL OR ends_at > ?)"},
}

// args are the arguments of m.stale as of now: the time, or today's date
// (UTC), for each ?.
func (m move) args(now time.Time) []any {
	now = now.UTC()
	at := any(now)
	if m.date {
		at = now.Format("2006-01-02")
	}
	args := make([]any, strings.Count(m.stale, "?"))
	for i := range args {
		args[i] = at
	}
	return args
}

// batch bounds how many records one transaction moves, so a backlog never
// holds the writer long.
const batch = 500

// Clock makes the moves on a database, rendering the records (for their
// events) with the engine that reads them.
type Clock struct {
	db  *database.DB
	eng *records.Engine
}

// New is the clock of db, whose records eng reads.
func New(db *database.DB, eng *records.Engine) *Clock { return &Clock{db: db, eng: eng} }

// Exact makes, in workspace ws, the moves of r that must be exact when
// read: the records engine's Refresh, run before every Get and list of r.
// One read asks whether any of them has a record to move; usually none has.
func (c *Clock) Exact(ctx context.Context, r *resource.Resource, ws string) error {
	now := time.Now()
	exact := func(m move) bool { return m.r == r && m.exact }
	var stale []string
	args := []any{ws}
	for _, m := range moves {
		if exact(m) {
			stale, args = append(stale, "("+m.stale+")"), append(args, m.args(now)...)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	found, err := database.QueryStrings(ctx, c.db.ReadPool, c.db.Rebind("SELECT id FROM "+r.Table+
		" WHERE workspace_id = ? AND ("+strings.Join(stale, " OR ")+") LIMIT 1"), args...)
	if err != nil || len(found) == 0 {
		return err
	}
	_, err = c.runAll(ctx, now, ws, exact)
	return err
}

// Tick makes the moves of rs (of every resource, with none) in every
// workspace, as of now, and says how many records moved.
func (c *Clock) Tick(ctx context.Context, now time.Time, rs ...*resource.Resource) (int64, error) {
	return c.runAll(ctx, now, "", func(m move) bool { return len(rs) == 0 || slices.Contains(rs, m.r) })
}

// runAll runs the moves which picks, in table order, in workspace ws
// (every workspace, with ""), and says how many records moved.
func (c *Clock) runAll(ctx context.Context, now time.Time, ws string, which func(move) bool) (int64, error) {
	var total int64
	for _, m := range moves {
		if which(m) {
			n, err := c.run(ctx, m, now, ws)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// run makes move m as of now in workspace ws (in every workspace with
// records to move, with ws ""), a batch per transaction, and says how
// many records moved.
func (c *Clock) run(ctx context.Context, m move, now time.Time, ws string) (int64, error) {
	args := m.args(now)
	find, findArgs := "SELECT DISTINCT workspace_id FROM "+m.r.Table+" WHERE "+m.stale, args
	if ws != "" {
		find, findArgs = "SELECT workspace_id FROM "+m.r.Table+" WHERE workspace_id = ? AND ("+m.stale+") LIMIT 1", append([]any{ws}, args...)
	}
	wss, err := database.QueryStrings(ctx, c.db.ReadPool, c.db.Rebind(find), findArgs...)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, ws := range wss {
		var w access.Workspace
		if err := c.db.ReadPool.QueryRowContext(ctx, c.db.Rebind("SELECT id, commerce_mode, commerce_module FROM workspaces WHERE id = ?"), ws).
			Scan(&w.ID, &w.CommerceMode, &w.CommerceModule); err != nil {
			return total, err
		}
		q := &writes.Request{Ctx: ctx, DB: c.db, Records: c.eng, Resource: m.r, System: m.job, Principal: &access.Principal{Workspace: w}}
		for {
			n, err := q.MoveStale(m.to, m.stale, args, now.UTC(), batch)
			total += int64(n)
			if err != nil {
				return total, err
			}
			if n < batch {
				break
			}
		}
	}
	return total, nil
}

// Run makes every move (Tick), and deletes the events older than
// retention (0 keeps them), now and then every period until ctx ends.
func (c *Clock) Run(ctx context.Context, period, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := c.Tick(ctx, time.Now()); err != nil && ctx.Err() == nil {
			log.Warn("moving the records the clock overtook", "err", err)
		} else if n > 0 {
			log.Info("records moved by the clock", "count", n)
		}
		if retention > 0 {
			if n, err := PruneEvents(ctx, c.db, time.Now().Add(-retention)); err != nil && ctx.Err() == nil {
				log.Warn("pruning events", "err", err)
			} else if n > 0 {
				log.Info("old events deleted", "count", n, "retention", retention)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// PruneEvents deletes the events created before cutoff, their deliveries
// first, a batch at a time so no transaction holds the writer long.
func PruneEvents(ctx context.Context, db *database.DB, cutoff time.Time) (int64, error) {
	if _, err := webhooks.Prune(ctx, db, cutoff); err != nil {
		return 0, err
	}
	floor := ids.Floor("evt", cutoff) // an event's id is made from its created_at
	var total int64
	for {
		old, err := db.Writer.Event.Query().Where(event.IDLT(floor)).Limit(1000).IDs(ctx)
		if err != nil || len(old) == 0 {
			return total, err
		}
		n, err := db.Writer.Event.Delete().Where(event.IDIn(old...)).Exec(ctx)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}
