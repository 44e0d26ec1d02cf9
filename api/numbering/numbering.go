// Package numbering gives records their numbers: each series (INV-000042)
// is a workspace counter. Gapless series advance it in the write's
// transaction, so failed writes leave no gaps; on PostgreSQL the others
// advance it in a statement of their own, so their writers do not queue
// behind one row. The counters also serialize checks.
package numbering

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// Series is a workspace counter and the numbers it prints: ITM-000123.
type Series struct {
	Name, Prefix string
	// Gapless: the law wants every number used, in order (invoices,
	// credit notes); a failed write gives its number back.
	Gapless bool
}

// The series of every numbered record.
var (
	Bills       = Series{Name: "bills", Prefix: "BILL"}
	CreditNotes = Series{Name: "credit_notes", Prefix: "CRN", Gapless: true}
	Invoices    = Series{Name: "invoices", Prefix: "INV", Gapless: true}
	Items       = Series{Name: "items", Prefix: "ITM"}
	Quotes      = Series{Name: "quotes", Prefix: "QUO"}
	Returns     = Series{Name: "returns", Prefix: "RMA"}
	SalesOrders = Series{Name: "sales_orders", Prefix: "SO"}
	Shipments   = Series{Name: "shipments", Prefix: "SHP"}
)

// apart reports whether s takes its numbers outside the write's
// transaction: not gapless, on PostgreSQL (SQLite's one writer queues
// anyway, and keeps them gapless for free).
func (s Series) apart(db *database.DB) bool { return !s.Gapless && db.Dialect == dialect.Postgres }

// Claim lets a caller's own number be checked free and stored while no
// other writer of the series is between taking a number and its commit:
// they take turns until commit.
func (s Series) Claim(ctx context.Context, db *database.DB, tx *ent.Tx, workspaceID string) error {
	if s.apart(db) {
		return database.LockSeries(ctx, tx, workspaceID, s.Name, false)
	}
	return Serialize(ctx, tx, workspaceID, s.Name)
}

func (s Series) format(v int64) string { return fmt.Sprintf("%s-%06d", s.Prefix, v) }

// Reserve takes the next n values of the workspace's counter name and
// returns the first. One upsert creates and advances the counter, locking
// its row until commit, so concurrent writers queue for distinct values.
func Reserve(ctx context.Context, tx *ent.Tx, workspaceID, name string, n int64) (int64, error) {
	return sqlstore.Reserve(ctx, tx, workspaceID, name, n)
}

// Serialize makes the workspace's writers that name the same counter take
// turns until commit, so two concurrent writes cannot each pass a check and
// break it together.
func Serialize(ctx context.Context, tx *ent.Tx, workspaceID, name string) error {
	_, err := Reserve(ctx, tx, workspaceID, name, 0)
	return err
}

// Allocate returns n fresh numbers of the series. Numbers a caller chose
// by hand may already hold a value the counter reaches later; taken
// reports those, and the counter moves past them. A series apart holds its
// shared lock to commit, so a Claim waits for its number to be stored.
func (s Series) Allocate(ctx context.Context, db *database.DB, tx *ent.Tx, workspaceID string, n int,
	taken func([]string) (map[string]bool, error)) ([]string, error) {
	reserve := func(n int64) (int64, error) { return Reserve(ctx, tx, workspaceID, s.Name, n) }
	if s.apart(db) {
		if err := database.LockSeries(ctx, tx, workspaceID, s.Name, true); err != nil {
			return nil, err
		}
		reserve = func(n int64) (int64, error) { return sqlstore.Reserve(ctx, db.SidePool, workspaceID, s.Name, n) }
	}
	out := make([]string, 0, n)
	for len(out) < n {
		want := n - len(out)
		first, err := reserve(int64(want))
		if err != nil {
			return nil, err
		}
		batch := make([]string, want)
		for i := range batch {
			batch[i] = s.format(first + int64(i))
		}
		used := map[string]bool{}
		if taken != nil {
			if used, err = taken(batch); err != nil {
				return nil, err
			}
		}
		for _, num := range batch {
			if !used[num] {
				out = append(out, num)
			}
		}
	}
	return out, nil
}
