package ids

import (
	"math/rand/v2"
	"strings"
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
	if x, y := New("inv"), New("inv"); x == y {
		t.Fatalf("ids repeat: %s", x)
	}
}

func TestQuickIDsLookLikeNewOnes(t *testing.T) {
	t.Parallel()
	a := QuickAt("req", time.Now())
	if !HasPrefix(a, "req") || len(a) != len(New("req")) {
		t.Fatalf("bad id %q", a)
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := QuickAt("req", time.Now())
		if seen[id] {
			t.Fatalf("id %s repeats", id)
		}
		seen[id] = true
	}
	time.Sleep(2 * time.Millisecond)
	if b := QuickAt("req", time.Now()); !(a < b) || !(a[:14] <= New("req")[:14]) {
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

// format agrees with the plain reading of TypeID's encoding: the 128 bits,
// two zero bits in front, cut into 26 groups of five from the top.
func TestFormatMatchesBitByBit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var u uuid.UUID
		for i := range u {
			u[i] = byte(r.Uint32())
		}
		want := []byte("req_")
		for g := 0; g < 26; g++ {
			v := 0
			for k := 0; k < 5; k++ {
				bit := g*5 + k - 2 // the leading two bits are zero
				v <<= 1
				if bit >= 0 && u[bit/8]>>(7-bit%8)&1 == 1 {
					v |= 1
				}
			}
			want = append(want, alphabet[v])
		}
		if got := format("req", u); got != string(want) {
			t.Fatalf("%x: %s, want %s", u, got, want)
		}
	}
	long := strings.Repeat("p", 60)
	if got := format(long, uuid.UUID{}); got != long+"_00000000000000000000000000" {
		t.Errorf("long prefix: %s", got)
	}
}

func BenchmarkQuick(b *testing.B) {
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		_ = QuickAt("req", now)
	}
}

// Floor bounds the ids of a time range, which is how events are pruned and
// filtered by created_at without an index on it.
func TestFloorBoundsTheIDsOfItsMillisecond(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 2000; i++ {
		at := base.Add(time.Duration(rand.IntN(3_000_000)) * time.Microsecond) // within 3 s
		id := At("evt", at)
		for _, ms := range []time.Duration{-1, 0, 1} {
			edge := at.Truncate(time.Millisecond).Add(ms * time.Millisecond)
			f := Floor("evt", edge)
			if ms <= 0 && !(f <= id) || ms > 0 && !(id < f) {
				t.Fatalf("Floor(%s) = %s misplaces At(%s) = %s", edge.Format(time.RFC3339Nano), f, at.Format(time.RFC3339Nano), id)
			}
		}
	}
}
