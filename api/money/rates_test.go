package money

import (
	"math/rand/v2"
	"testing"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// The VAT summary adds up to the document's totals whatever the lines:
// each rate's row is the sum of its lines as priced, lowest rate first.
func TestByRateAddsUpToTheTotals(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	rates := []int64{0, 550, 1000, 2000}
	for range 200 {
		lines := make([]shape.DocLine, 1+r.IntN(30))
		for i := range lines {
			lines[i] = shape.DocLine{QtyMilli: r.Int64N(10_000) + 1, UnitPriceCents: r.Int64N(1_000_000),
				VATRateBasisPoints: rates[r.IntN(len(rates))], DiscountBP: r.Int64N(3) * 500}
		}
		tot, err := Price(lines)
		if err != nil {
			t.Fatal(err)
		}
		var e, v, in int64
		sums := ByRate(lines)
		for i, s := range sums {
			if i > 0 && sums[i-1].RateBP >= s.RateBP {
				t.Fatalf("rates out of order: %+v", sums)
			}
			var want RateSum
			for _, l := range lines {
				if l.VATRateBasisPoints == s.RateBP {
					want.ExclVATCents += l.AmountExclVATCents
					want.VATCents += l.VATAmountCents
					want.InclVATCents += l.AmountInclVATCents
				}
			}
			if want.RateBP = s.RateBP; want != s {
				t.Fatalf("rate %d: %+v, want %+v", s.RateBP, s, want)
			}
			e, v, in = e+s.ExclVATCents, v+s.VATCents, in+s.InclVATCents
		}
		if e != tot.ExclVATCents || v != tot.VATCents || in != tot.InclVATCents {
			t.Fatalf("summary %d %d %d, totals %+v", e, v, in, tot)
		}
	}
	if ByRate(nil) != nil {
		t.Error("no lines, no summary")
	}
}
