package ids

import (
	"testing"
	"time"
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
