package ids

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestIDsArePrefixedAndSortByTime(t *testing.T) {
	t.Parallel()
	a := At("inv", time.Unix(1000, 0))
	b := At("inv", time.Unix(2000, 0))
	if !HasPrefix(a, "inv") || len(a) != 30 {
		t.Fatalf("bad id %q", a)
	}
	if !(a < b) {
		t.Fatalf("ids do not sort by time: %s >= %s", a, b)
	}
	if New("inv") == New("inv") {
		t.Fatal("ids repeat")
	}
}

func TestQuickIDsLookLikeNewOnes(t *testing.T) {
	t.Parallel()
	a := Quick("req")
	if !HasPrefix(a, "req") || len(a) != len(New("req")) {
		t.Fatalf("bad id %q", a)
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := Quick("req")
		if seen[id] {
			t.Fatalf("id %s repeats", id)
		}
		seen[id] = true
	}
	time.Sleep(2 * time.Millisecond)
	if b := Quick("req"); !(a < b) || !(a[:14] <= New("req")[:14]) {
		t.Fatalf("ids do not sort by time: %s, %s", a, b)
	}
}

func TestFormatIsTypeIDs(t *testing.T) {
	t.Parallel()
	var zero, max uuid.UUID
	for i := range max {
		max[i] = 0xff
	}
	if got := format("inv", zero); got != "inv_00000000000000000000000000" {
		t.Errorf("zero: %s", got)
	}
	if got := format("inv", max); got != "inv_7zzzzzzzzzzzzzzzzzzzzzzzzz" {
		t.Errorf("max: %s", got)
	}
}
