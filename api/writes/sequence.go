package writes

import (
	"context"
	"fmt"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/sequence"
)

// series is a workspace counter and the numbers it prints: ITM-000123.
type series struct{ name, prefix string }

var (
	itemNumbers     = series{"items", "ITM"}
	shipmentNumbers = series{"shipments", "SHP"}
)

func (s series) format(v int64) string { return fmt.Sprintf("%s-%06d", s.prefix, v) }

// reserve takes the next n values of the workspace's counter and returns
// the first. One upsert both creates the counter and advances it: on
// PostgreSQL it locks the counter's row until the transaction ends, so
// concurrent writers queue instead of taking the same value; on SQLite the
// single writer does the same. A rolled-back transaction gives its values
// back, so numbers have no gaps from failed writes.
func reserve(ctx context.Context, tx *ent.Tx, workspaceID, name string, n int64) (int64, error) {
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

// serialize makes the workspace's writers that name the same counter take
// turns until the transaction ends: the counter's row lock on PostgreSQL,
// the single writer on SQLite. Category moves use it so two concurrent moves
// cannot each pass the cycle check and build a cycle together.
func serialize(ctx context.Context, tx *ent.Tx, workspaceID, name string) error {
	_, err := reserve(ctx, tx, workspaceID, name, 0)
	return err
}

// allocate returns n fresh numbers of the series. Numbers a caller chose
// by hand may already hold a value the counter reaches later; taken
// reports those, and the counter moves past them.
func (s series) allocate(ctx context.Context, tx *ent.Tx, workspaceID string, n int,
	taken func([]string) (map[string]bool, error)) ([]string, error) {
	out := make([]string, 0, n)
	for len(out) < n {
		want := n - len(out)
		first, err := reserve(ctx, tx, workspaceID, s.name, int64(want))
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
