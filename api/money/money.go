// Package money prices documents: the one place money is computed; clients
// never send totals. Per line:
//
//	amount_excl_vat_cents = round(qty_milli × unit_price_cents × (10000 − discount_bp) / (1000 × 10000))
//	vat_amount_cents      = round(amount_excl_vat_cents × vat_rate_bp / 10000)
//	amount_incl_vat_cents = amount_excl_vat_cents + vat_amount_cents
//
// each rounded half away from zero, once per line, from exact integers (no
// floats); a document's totals are the sums of its lines. A value that
// does not fit in int64 is a 400 naming the field, never a wrapped number.
package money

import (
	"fmt"
	"math/big"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

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

// line computes a line's amounts in place, with its own discount; param
// names the line for errors.
func line(l *shape.DocLine, param string) error {
	n := new(big.Int).Mul(big.NewInt(l.QtyMilli), big.NewInt(l.UnitPriceCents))
	n.Mul(n, big.NewInt(10_000-l.DiscountBP))
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

// Totals are a document's amounts: the sums of its lines.
type Totals struct{ ExclVATCents, VATCents, InclVATCents int64 }

// Price computes every line's amounts in place (lines[i] names the i-th
// in errors) and returns their sums, refusing a sum past int64.
func Price(lines []shape.DocLine) (Totals, error) {
	var e, v, i big.Int
	for n := range lines {
		l := &lines[n]
		if err := line(l, fmt.Sprintf("lines[%d]", n)); err != nil {
			return Totals{}, err
		}
		e.Add(&e, big.NewInt(l.AmountExclVATCents))
		v.Add(&v, big.NewInt(l.VATAmountCents))
		i.Add(&i, big.NewInt(l.AmountInclVATCents))
	}
	var t Totals
	var err error
	if t.ExclVATCents, err = fits("lines", &e); err != nil {
		return t, err
	}
	if t.VATCents, err = fits("lines", &v); err != nil {
		return t, err
	}
	t.InclVATCents, err = fits("lines", &i)
	return t, err
}

// Lines reads a validated body's lines and prices them.
func Lines(v body.Values) ([]shape.DocLine, Totals, error) {
	raw, _ := v.Objects("lines")
	lines := make([]shape.DocLine, len(raw))
	for i, l := range raw {
		d := &lines[i]
		if id, ok := l.String("item_id"); ok {
			d.ItemID = &id
		}
		d.Description, _ = l.String("description")
		d.QtyMilli, _ = l.Int("qty_milli")
		d.UnitPriceCents, _ = l.Int("unit_price_cents")
		d.VATRateBasisPoints, _ = l.Int("vat_rate_bp")
		d.DiscountBP, _ = l.Int("discount_bp")
	}
	t, err := Price(lines)
	return lines, t, err
}

// Part is a share of a line's amount: Qty of its Of units (Of > 0).
type Part struct{ Amount, Qty, Of int64 }

// Parts is the sum of each Amount × Qty / Of, rounded half away from zero
// once per part; a sum past int64 is a 400 naming param.
func Parts(param string, parts []Part) (int64, error) {
	sum := new(big.Int)
	for _, p := range parts {
		sum.Add(sum, roundDiv(new(big.Int).Mul(big.NewInt(p.Amount), big.NewInt(p.Qty)), big.NewInt(p.Of)))
	}
	return fits(param, sum)
}
