package writes

import (
	"math/big"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Money on documents is computed here and only here; clients never send
// totals. Per line:
//
//	amount_excl_vat_cents = round(qty_milli × unit_price_cents × (10000 − discount_bp) / (1000 × 10000))
//	vat_amount_cents      = round(amount_excl_vat_cents × vat_rate_bp / 10000)
//	amount_incl_vat_cents = amount_excl_vat_cents + vat_amount_cents
//
// each rounded half away from zero, once per line, from exact integers (no
// floats); the document's totals are the sums of its lines. A value that
// does not fit in int64 is a 400 naming the field, never a wrapped number.

// roundDiv is n / d rounded half away from zero (d > 0).
func roundDiv(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

var (
	bigBasis  = big.NewInt(10_000)
	bigScale  = big.NewInt(1000 * 10_000)
	maxAmount = big.NewInt(1<<63 - 1)
)

func fits(param string, v *big.Int) (int64, error) {
	if v.CmpAbs(maxAmount) > 0 {
		return 0, apierr.Invalid(param, "%s is too large: the amounts it makes do not fit in 64 bits", param)
	}
	return v.Int64(), nil
}

// priceLine computes a line's amounts in place; param names the line for errors.
func priceLine(l *shape.DocLine, discountBP int64, param string) error {
	n := new(big.Int).Mul(big.NewInt(l.QtyMilli), big.NewInt(l.UnitPriceCents))
	n.Mul(n, big.NewInt(10_000-discountBP))
	excl := roundDiv(n, bigScale)
	vat := roundDiv(new(big.Int).Mul(excl, big.NewInt(l.VATRateBasisPoints)), bigBasis)
	var err error
	if l.AmountExclVATCents, err = fits(param+".qty_milli", excl); err != nil {
		return err
	}
	if l.VATAmountCents, err = fits(param+".vat_rate_bp", vat); err != nil {
		return err
	}
	if l.AmountInclVATCents, err = fits(param+".unit_price_cents", new(big.Int).Add(excl, vat)); err != nil {
		return err
	}
	return nil
}

// docTotals are a document's sums of its lines.
type docTotals struct{ excl, vat, incl int64 }

// sumLines adds the lines' amounts, refusing a sum past int64.
func sumLines(lines []shape.DocLine) (docTotals, error) {
	var e, v, i big.Int
	for _, l := range lines {
		e.Add(&e, big.NewInt(l.AmountExclVATCents))
		v.Add(&v, big.NewInt(l.VATAmountCents))
		i.Add(&i, big.NewInt(l.AmountInclVATCents))
	}
	var t docTotals
	var err error
	if t.excl, err = fits("lines", &e); err != nil {
		return t, err
	}
	if t.vat, err = fits("lines", &v); err != nil {
		return t, err
	}
	t.incl, err = fits("lines", &i)
	return t, err
}

// Totals are a document's amounts as its create and edit store them.
type Totals struct{ ExclVATCents, VATCents, InclVATCents int64 }

// PriceLines prices a validated body's lines exactly as a document's
// create and edit do: each line's amounts, then the sums. The admin UI
// shows these as one types; a refusal is the 400 the write would answer.
func PriceLines(v Values) ([]shape.DocLine, Totals, error) {
	lines, t, err := pricedLines(v)
	return lines, Totals{t.excl, t.vat, t.incl}, err
}
