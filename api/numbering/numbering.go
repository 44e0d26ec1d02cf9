// Package numbering gives records their numbers: each series (INV-000042)
// is a workspace counter advanced in the write's transaction, so failed
// writes leave no gaps. The counters also serialize checks and number events.
package numbering

import (
	"context"
	"fmt"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/sequence"
)

// Series is a workspace counter and the numbers it prints: ITM-000123.
type Series struct{ Name, Prefix string }

// The series of every numbered record.
var (
	Bills       = Series{"bills", "BILL"}
	CreditNotes = Series{"credit_notes", "CRN"}
	Invoices    = Series{"invoices", "INV"}
	Items       = Series{"items", "ITM"}
	Quotes      = Series{"quotes", "QUO"}
	Returns     = Series{"returns", "RMA"}
	SalesOrders = Series{"sales_orders", "SO"}
	Shipments   = Series{"shipments", "SHP"}
)

func (s Series) format(v int64) string { return fmt.Sprintf("%s-%06d", s.Prefix, v) }

// Reserve takes the next n values of the workspace's counter name and
// returns the first. One upsert creates and advances the counter, locking
// its row until commit, so concurrent writers queue for distinct values.
func Reserve(ctx context.Context, tx *ent.Tx, workspaceID, name string, n int64) (int64, error) {
	err := tx.Sequence.Create().SetWorkspaceID(workspaceID).SetName(name).SetValue(n).
		OnConflictColumns(sequence.FieldWorkspaceID, sequence.FieldName).
		Update(func(u *ent.SequenceUpsert) { u.AddValue(n).UpdateUpdatedAt() }).
		Exec(ctx)
	if err != nil {
		return 0, err
	}
	last, err := tx.Sequence.Query().
		Where(sequence.WorkspaceID(workspaceID), sequence.Name(name)).
		Select(sequence.FieldValue).Int(ctx)
	if err != nil {
		return 0, err
	}
	return int64(last) - n + 1, nil
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
// reports those, and the counter moves past them.
func (s Series) Allocate(ctx context.Context, tx *ent.Tx, workspaceID string, n int,
	taken func([]string) (map[string]bool, error)) ([]string, error) {
	out := make([]string, 0, n)
	for len(out) < n {
		want := n - len(out)
		first, err := Reserve(ctx, tx, workspaceID, s.Name, int64(want))
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
