package money

import "testing"

func TestFormatUsesTheCurrencysExponentAndTheLanguage(t *testing.T) {
	for _, c := range []struct {
		minor      int64
		code, lang string
		want       string
	}{
		{123450, "EUR", "en", "€1,234.50"},
		{123450, "EUR", "fr", "1\u202f234,50\u00a0€"},
		{123450, "EUR", "bilingual", "€1,234.50"},
		{12000, "JPY", "en", "¥12,000"},
		{1234567, "KWD", "en", "KWD\u00a01,234.567"},
		{1234567, "KWD", "ar", "\u200f1,234.567\u00a0KWD"},
		{-500, "USD", "en", "-$5.00"},
	} {
		if got := Format(c.minor, c.code, c.lang); got != c.want {
			t.Errorf("Format(%d, %s, %s) = %q, want %q", c.minor, c.code, c.lang, got, c.want)
		}
	}
}

func TestParseRefusesMoreDecimalsThanTheCurrencyHas(t *testing.T) {
	for _, c := range []struct {
		text, code, lang string
		want             int64
		ok               bool
	}{
		{"1,234.5", "EUR", "en", 123450, true},
		{"1 234,50 €", "EUR", "fr", 123450, true},
		{"12", "JPY", "en", 12, true},
		{"1.234", "KWD", "en", 1234, true},
		{"1.234", "EUR", "en", 0, false},
		{"1.5", "JPY", "en", 0, false},
		{"twelve", "EUR", "en", 0, false},
	} {
		got, err := Parse(c.text, c.code, c.lang)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Parse(%q, %s) = %d, %v; want %d, ok %v", c.text, c.code, got, err, c.want, c.ok)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		n     int64
		scale int
		lang  string
		want  string
	}{{1500, 3, "fr", "1,5"}, {550, 2, "en", "5.5"}, {2000, 2, "en", "20"}, {5, 3, "en", "0.005"}, {-1500, 3, "en", "-1.5"}} {
		if got := Decimal(c.n, c.scale, c.lang); got != c.want {
			t.Errorf("Decimal(%d, %d, %s) = %q, want %q", c.n, c.scale, c.lang, got, c.want)
		}
	}
}

func TestPlainKeepsEveryDecimalOfTheExponent(t *testing.T) {
	for _, c := range []struct {
		minor int64
		code  string
		want  string
	}{
		{123450, "EUR", "1234.50"}, {0, "EUR", "0.00"}, {-5, "EUR", "-0.05"}, {-150, "USD", "-1.50"},
		{1250, "KWD", "1.250"}, {1235, "JPY", "1235"}, {7, "XYZ", "0.07"},
	} {
		if got := Plain(c.minor, c.code); got != c.want {
			t.Errorf("Plain(%d, %s) = %q, want %q", c.minor, c.code, got, c.want)
		}
	}
}
