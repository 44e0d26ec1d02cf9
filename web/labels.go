package web

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// acronyms are the words of names that people write in capitals
// ("amount_incl_vat_cents" reads "Amount incl VAT").
var acronyms = map[string]string{
	"api": "API", "bic": "BIC", "csv": "CSV", "ean": "EAN", "gtin": "GTIN", "http": "HTTP", "https": "HTTPS",
	"iban": "IBAN", "id": "ID", "ids": "IDs", "ip": "IP", "iso": "ISO", "json": "JSON", "mcp": "MCP", "pdf": "PDF",
	"sku": "SKU", "skus": "SKUs", "url": "URL", "urls": "URLs", "utc": "UTC", "uuid": "UUID", "vat": "VAT",
}

// words are the abbreviations of names that people write out
// ("qty_milli" reads "Quantity").
var spelled = map[string]string{"qty": "quantity"}

// label names a field for people: the unit suffix is dropped, since the
// value is shown in its unit ("cost_cents" is "Cost", shown as 14.90 EUR).
func label(name string) string {
	for _, suffix := range []string{"_cents", "_milli", "_bp", "_g"} {
		if strings.HasSuffix(name, suffix) && len(name) > len(suffix) {
			return humanize(strings.TrimSuffix(name, suffix))
		}
	}
	return humanize(name)
}

// humanize turns "credit-notes" or "amount_incl_vat" into words, in
// sentence case with acronyms in capitals: "Credit notes", "Amount incl VAT".
func humanize(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	for i, w := range words {
		if a, ok := acronyms[strings.ToLower(w)]; ok {
			words[i] = a
			continue
		}
		if long, ok := spelled[strings.ToLower(w)]; ok {
			w, words[i] = long, long
		}
		if i == 0 {
			r, n := utf8.DecodeRuneInString(w)
			words[i] = string(unicode.ToUpper(r)) + w[n:]
		}
	}
	return strings.Join(words, " ")
}

// lowerLabel is a label inside a sentence: "unit price", "VAT rate" (a
// leading acronym keeps its capitals).
func lowerLabel(l string) string {
	first, _, _ := strings.Cut(l, " ")
	if a, ok := acronyms[strings.ToLower(first)]; ok && a == first {
		return l
	}
	r, n := utf8.DecodeRuneInString(l)
	return string(unicode.ToLower(r)) + l[n:]
}
