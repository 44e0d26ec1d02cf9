package money

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bojanz/currency"
)

// What a person reads and types: amounts in their currency's unit (its ISO
// 4217 exponent: JPY 0, EUR 2, KWD 3), formatted for the document's
// language with CLDR's data (en "€1,234.50", fr "1 234,50 €", ar with the
// currency's code); quantities and rates as decimals. The API keeps minor
// units, thousandths and basis points. bilingual and unknown languages
// read as en.

// formatters are the CLDR formatters of the languages documents are in.
var formatters = func() map[string]*currency.Formatter {
	m := map[string]*currency.Formatter{}
	for _, lang := range []string{"en", "fr", "ar"} {
		f := currency.NewFormatter(currency.NewLocale(lang))
		if lang == "ar" {
			f.CurrencyDisplay = currency.DisplayCode
		}
		m[lang] = f
	}
	return m
}()

func formatter(lang string) *currency.Formatter {
	if f, ok := formatters[lang]; ok {
		return f
	}
	return formatters["en"]
}

// Digits is the currency's ISO 4217 exponent (2 for a code CLDR does not know).
func Digits(code string) int {
	if d, ok := currency.GetDigits(code); ok {
		return int(d)
	}
	return 2
}

// Format is minor units of the currency as a person reads them in lang.
func Format(minor int64, code, lang string) string {
	a, err := currency.NewAmountFromInt64(minor, code)
	if err != nil { // an unknown code: the number in its exponent, then the code
		return Decimal(minor, Digits(code), lang) + " " + code
	}
	return formatter(lang).Format(a)
}

// Parse reads an amount a person typed in the currency's unit ("1,234.5",
// "1 234,50 €") into minor units; more decimals than the currency has is
// an error, never a rounding.
func Parse(text, code, lang string) (int64, error) {
	a, err := formatter(lang).Parse(strings.TrimSpace(text), code)
	if err != nil {
		return 0, fmt.Errorf("%q is not an amount in %s", text, code)
	}
	digits := uint8(Digits(code))
	if !a.RoundTo(digits, currency.RoundHalfUp).Equal(a) {
		return 0, fmt.Errorf("%s has %d decimals at most", code, digits)
	}
	n, err := a.RoundTo(digits, currency.RoundHalfUp).Int64()
	if err != nil {
		return 0, fmt.Errorf("%q is too large", text)
	}
	return n, nil
}

// Plain is minor units as a plain decimal in the currency's unit, every
// decimal of its exponent kept and no grouping: what a form's input and a
// CSV cell hold ("1234.50", KWD "1.250", JPY "1235").
func Plain(minor int64, code string) string {
	d := Digits(code)
	s := Decimal(minor, d, "en")
	if d == 0 {
		return s
	}
	whole, frac, _ := strings.Cut(s, ".")
	return whole + "." + frac + strings.Repeat("0", d-len(frac))
}

// Decimal is n with scale implied decimals (a quantity in thousandths:
// scale 3; a rate in basis points as a percentage: scale 2) in lang's
// separators, without trailing zeros: Decimal(1500, 3, "fr") is "1,5".
func Decimal(n int64, scale int, lang string) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	whole, frac := s[:len(s)-scale], strings.TrimRight(s[len(s)-scale:], "0")
	sep := "."
	if lang == "fr" {
		sep = ","
	}
	if neg {
		whole = "-" + whole
	}
	if frac == "" {
		return whole
	}
	return whole + sep + frac
}
