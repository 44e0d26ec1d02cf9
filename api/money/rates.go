package money

import (
	"cmp"
	"slices"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// RateSum is what a document's lines at one VAT rate add up to: the
// taxable base and the VAT, each the sum of the lines' stored amounts.
type RateSum struct {
	RateBP                               int64
	ExclVATCents, VATCents, InclVATCents int64
}

// ByRate sums priced lines per VAT rate, lowest rate first: the VAT summary
// a document prints. Nothing is priced again, so the rows add up to the
// document's totals.
func ByRate(lines []shape.DocLine) []RateSum {
	var out []RateSum
	for _, l := range lines {
		i := slices.IndexFunc(out, func(s RateSum) bool { return s.RateBP == l.VATRateBasisPoints })
		if i < 0 {
			out = append(out, RateSum{RateBP: l.VATRateBasisPoints})
			i = len(out) - 1
		}
		out[i].ExclVATCents += l.AmountExclVATCents
		out[i].VATCents += l.VATAmountCents
		out[i].InclVATCents += l.AmountInclVATCents
	}
	slices.SortFunc(out, func(a, b RateSum) int { return cmp.Compare(a.RateBP, b.RateBP) })
	return out
}
