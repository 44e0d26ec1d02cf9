package web

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

func TestPeoplesUnitsReadExactly(t *testing.T) {
	money := resource.Field{Name: "unit_price_cents", Type: resource.Integer, Unit: resource.MinorUnits}
	gift := money
	one := int64(1)
	gift.Min = &one
	qty := resource.Field{Name: "qty_milli", Type: resource.Integer, Unit: resource.Thousandths}
	zero, hundred := int64(0), int64(10_000)
	rate := resource.Field{Name: "vat_rate_bp", Type: resource.Integer, Unit: resource.BasisPoints, Min: &zero, Max: &hundred}
	for _, c := range []struct {
		f         resource.Field
		text, cur string
		want      int64
		problem   string
	}{
		{money, "120.00", "EUR", 12000, ""},
		{money, "120", "EUR", 12000, ""},
		{money, " 1,234.5 ", "EUR", 123450, ""},
		{money, ".5", "EUR", 50, ""},
		{money, "-7", "EUR", -700, ""},
		{money, "1.250", "KWD", 1250, ""},
		{money, "500", "JPY", 500, ""},
		{money, "12.34", "XTS", 1234, ""}, // a code CLDR may not know: its exponent as money.Digits says
		{money, "1.234", "EUR", 0, "has at most 2 decimals in EUR"},
		{money, "1.2345", "KWD", 0, "has at most 3 decimals in KWD"},
		{money, "500.5", "JPY", 0, "has no decimals in JPY"},
		{money, "1.230", "EUR", 123, ""}, // a trailing zero is no decimal
		{money, "abc", "EUR", 0, "must be an amount in EUR, such as 120.00"},
		{money, "5,5", "EUR", 0, "must be an amount in EUR, such as 120.00 (with a point for decimals: 5.5)"},
		{money, "1,23,4", "EUR", 0, "must be an amount in EUR, such as 120.00"},
		{money, "1e3", "EUR", 0, "must be an amount in EUR, such as 120.00"},
		{money, "€12", "EUR", 0, "must be an amount in EUR, such as 120.00"},
		{money, ".", "EUR", 0, "must be an amount in EUR, such as 120.00"},
		{money, "99999999999999999999", "EUR", 0, "is too large"},
		{gift, "0", "EUR", 0, "must be more than 0"},
		{qty, "3", "", 3000, ""},
		{qty, "2.5", "", 2500, ""},
		{qty, "0.001", "", 1, ""},
		{qty, "2.5555", "", 0, "must be a number with at most 3 decimals"},
		{qty, "two", "", 0, "must be a number, such as 3 or 2.5"},
		{rate, "20", "", 2000, ""},
		{rate, "5.5", "", 550, ""},
		{rate, "5.5 %", "", 550, ""},
		{rate, "100", "", 10000, ""},
		{rate, "100.01", "", 0, "must be at most 100 %"},
		{rate, "-1", "", 0, "must not be negative"},
		{rate, "5.555", "", 0, "has at most 2 decimals"},
		{rate, "abc", "", 0, "must be a percentage, such as 20 or 5.5"},
	} {
		n, problem := parseUnit(c.f, c.text, c.cur)
		if n != c.want || problem != c.problem {
			t.Errorf("%s %q in %q: %d %q, want %d %q", c.f.Unit, c.text, c.cur, n, problem, c.want, c.problem)
		}
	}
	for _, c := range []struct {
		f    resource.Field
		n    int64
		cur  string
		want string
	}{
		{money, 12000, "EUR", "120.00"}, {money, 1250, "KWD", "1.250"}, {money, 500, "JPY", "500"}, {money, -5, "EUR", "-0.05"},
		{qty, 3000, "", "3"}, {qty, 2500, "", "2.5"}, {qty, 1, "", "0.001"},
		{rate, 2000, "", "20"}, {rate, 550, "", "5.5"},
	} {
		if got := unitText(c.f, c.n, c.cur); got != c.want {
			t.Errorf("unitText(%s %d %s) = %q, want %q", c.f.Unit, c.n, c.cur, got, c.want)
		}
		if back, problem := parseUnit(c.f, c.want, c.cur); back != c.n && problem == "" {
			t.Errorf("%q read back as %d, want %d", c.want, back, c.n)
		}
	}
	if got := numberText(qty, json.Number("1500"), ""); got != "1.5" {
		t.Errorf("a stored 1500 thousandths shows %q", got)
	}
	if got := convertAmount(money, 45000, "EUR", "KWD"); got != "450.000" {
		t.Errorf("an item's EUR price on a KWD document: %q", got)
	}
	if got := convertAmount(money, 45050, "EUR", "JPY"); got != "450.50" {
		t.Errorf("an item's EUR price with cents on a JPY document: %q", got)
	}
}

// TestFormHintsSpeakPeoplesUnits checks the help under every field a form
// shows in a person's unit: no word of the API's integers is left.
func TestFormHintsSpeakPeoplesUnits(t *testing.T) {
	var walk func(fs []resource.Field)
	n := 0
	walk = func(fs []resource.Field) {
		for _, f := range fs {
			walk(f.Items)
			if !unitField(f) {
				continue
			}
			n++
			h := unitHint(f, "EUR")
			for _, api := range []string{"minor units", "thousandths", "basis points", "1500 =", "2000 ="} {
				if strings.Contains(h, api) {
					t.Errorf("%s: the hint %q speaks of %s", f.Name, h, api)
				}
			}
		}
	}
	for _, r := range resource.All {
		for _, op := range r.Ops {
			walk(op.Body)
		}
	}
	if n == 0 {
		t.Fatal("no field in a person's unit")
	}
}

func TestAPIRefusalsInWords(t *testing.T) {
	for _, c := range []struct{ input, param, message, want string }{
		{"lines[1].qty_milli", "lines[0].qty_milli", "lines[0].qty_milli is required", "Line 2: Quantity is required."},
		{"currency_code", "currency_code", "currency_code must be an ISO 4217 code", "Currency code must be an ISO 4217 code."},
		{"amount_incl_vat_cents", "amount_incl_vat_cents", "the payment exceeds the open balance", "The payment exceeds the open balance."},
		{"payments[0].amount_cents", "payments[0].amount_cents", "payments[0].amount_cents is required", "Payment 1: Amount is required."},
	} {
		if got := inWords(c.input, c.param, c.message); got != c.want {
			t.Errorf("inWords(%q, %q) = %q, want %q", c.input, c.message, got, c.want)
		}
	}
}

// TestRowsOfOneFormHaveTheirOwnNames: a screen reader tells "Attribute 1
// code" from "Variant axis 1 code"; two rows editors of one form sharing a
// word would give their fields one name.
func TestRowsOfOneFormHaveTheirOwnNames(t *testing.T) {
	for _, e := range resource.AllEndpoints() {
		seen := map[string]string{}
		for _, f := range e.Op.Body {
			if !rowsField(f) {
				continue
			}
			w := rowWord(f.Name)
			if w == "" || w == label(f.Name) {
				t.Errorf("%s %s: rows of %s are called %q", e.Method, e.Path, f.Name, w)
			}
			if other, ok := seen[w]; ok {
				t.Errorf("%s %s: rows of %s and %s are both called %q", e.Method, e.Path, other, f.Name, w)
			}
			seen[w] = f.Name
		}
	}
}
