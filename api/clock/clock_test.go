package clock

import (
	"maps"
	"slices"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// The table of moves is the declarations' Resource.Clock: every state a
// declaration says the clock moves records to has a move (its events are
// published types), and no move goes to an undeclared state.
func TestMovesAreTheDeclaredClock(t *testing.T) {
	declared, moved := map[string]bool{}, map[string]bool{}
	for _, r := range resource.All {
		for _, st := range r.Clock {
			declared[r.Name+" → "+st] = true
		}
	}
	for _, m := range moves {
		moved[m.r.Name+" → "+m.to] = true
	}
	if !maps.Equal(declared, moved) {
		t.Fatalf("declared %v\nmoved %v", slices.Sorted(maps.Keys(declared)), slices.Sorted(maps.Keys(moved)))
	}
}
