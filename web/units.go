package web

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// People's units: a form shows and takes an integer field in the unit its
// declaration names (resource.Field.Unit): money as a decimal in the
// document's currency with its ISO 4217 exponent (120.00 EUR, 1.250 KWD,
// 500 JPY), quantities as decimals (2.5), rates as percentages (5.5). The
// text is read exactly into the API's integers, never through a float,
// and more decimals than the unit holds is refused, never rounded.

// defaultCurrency is the API's currency when a document names none.
const defaultCurrency = "EUR"

// unitField reports whether a form shows f in a person's unit.
func unitField(f resource.Field) bool { return f.Type == resource.Integer && f.Unit != resource.Count }

// digits is how many decimals f's people's text has at most.
func digits(f resource.Field, cur string) int {
	if f.Unit == resource.MinorUnits {
		return pricing.Digits(cur)
	}
	return f.Unit.Scale()
}

// unitText is n of f as its input shows it: money with all the
// currency's decimals ("120.00"), a quantity or a rate without trailing
// zeros ("2.5", "20").
func unitText(f resource.Field, n int64, cur string) string {
	if f.Unit == resource.MinorUnits {
		return pricing.Plain(n, cur)
	}
	return pricing.Decimal(n, f.Unit.Scale(), "en")
}

// numberText is a stored value of f as its input shows it; anything but
// an integer is shown as it is.
func numberText(f resource.Field, x any, cur string) string {
	n, ok := x.(json.Number)
	if !ok || !unitField(f) {
		return scalarText(x)
	}
	i, err := n.Int64()
	if err != nil {
		return n.String()
	}
	return unitText(f, i, cur)
}

// unitSuffix is the unit shown beside f's input: the currency, "%".
func unitSuffix(f resource.Field, cur string) string {
	switch f.Unit {
	case resource.MinorUnits:
		return cur
	case resource.BasisPoints:
		return "%"
	}
	return ""
}

// plainDecimal is a number as people type it in the admin's English: an
// optional sign, digits (grouped by commas in threes, or not), an
// optional point and decimals. "5,5" is not one: read as English it would
// be 55, so it is refused rather than guessed.
var plainDecimal = regexp.MustCompile(`^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?$`)

// decimalComma is a number written with a comma for its point ("5,5",
// "2,50"), which plainDecimal refuses.
var decimalComma = regexp.MustCompile(`^[+-]?\d+,\d+$`)

// scaled reads s (plainDecimal) into an integer with scale implied
// decimals, exactly: scaled("2.5", 3) is 2500.
func scaled(s string, scale int) (int64, string) {
	if !plainDecimal.MatchString(s) || strings.Trim(s, "+-.,") == "" {
		return 0, "nan"
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(strings.ReplaceAll(s, ",", ""), "+-")
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > scale {
		return 0, "decimals"
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", scale-len(frac)), 10, 64)
	if err != nil {
		return 0, "large"
	}
	if neg {
		n = -n
	}
	return n, ""
}

// parseUnit reads what a person typed in f into the API's integer; the
// refusal is in words that follow the field's label ("has at most 2
// decimals"). Money is read by api/money in cur.
func parseUnit(f resource.Field, text, cur string) (int64, string) {
	s := strings.TrimSpace(text)
	if f.Unit == resource.BasisPoints {
		s = strings.TrimSpace(strings.TrimSuffix(s, "%"))
	}
	d := digits(f, cur)
	n, problem := scaled(s, d)
	switch {
	case problem == "nan":
		// A decimal comma is named, with the point it takes ("5,5": 5.5).
		point := ""
		if decimalComma.MatchString(s) {
			point = " (with a point for decimals: " + strings.Replace(s, ",", ".", 1) + ")"
		}
		switch f.Unit {
		case resource.MinorUnits:
			return 0, "must be an amount in " + cur + ", such as " + unitText(f, 120*pow10(d), cur) + point
		case resource.BasisPoints:
			return 0, "must be a percentage, such as 20 or 5.5" + point
		}
		return 0, "must be a number, such as 3 or 2.5" + point
	case problem == "decimals":
		switch {
		case f.Unit == resource.MinorUnits && d == 0:
			return 0, "has no decimals in " + cur
		case f.Unit == resource.MinorUnits:
			return 0, "has at most " + strconv.Itoa(d) + " decimals in " + cur
		case f.Unit == resource.Thousandths:
			return 0, "must be a number with at most " + strconv.Itoa(d) + " decimals"
		}
		return 0, "has at most " + strconv.Itoa(d) + " decimals"
	case problem != "":
		return 0, "is too large"
	}
	if f.Unit == resource.MinorUnits {
		// The currency's own reading (a code CLDR does not know keeps the
		// exact reading above, in money.Digits' exponent).
		if m, err := pricing.Parse(s, cur, "en"); err == nil {
			n = m
		}
	}
	if f.Min != nil && n < *f.Min {
		switch *f.Min {
		case 0:
			return 0, "must not be negative"
		case 1:
			return 0, "must be more than 0"
		}
		return 0, "must be at least " + strings.TrimSpace(unitText(f, *f.Min, cur)+" "+unitSuffix(f, cur))
	}
	if f.Max != nil && n > *f.Max {
		return 0, "must be at most " + strings.TrimSpace(unitText(f, *f.Max, cur)+" "+unitSuffix(f, cur))
	}
	return n, ""
}

func pow10(n int) int64 {
	p := int64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// apiUnitWords are the words of a declaration's doc that speak of the
// API's integers ("minor units", "in thousandths (1500 = 1.5)"), left out
// where a form takes the field in people's units.
var apiUnitWords = regexp.MustCompile(`,? (?:in )?(?:minor units(?: of [a-z_']+(?: [a-z_']+)*)?|thousandths(?: \([^)]*\))?|basis points(?: \([^)]*\))?(?:, 0 to 10000 \([^)]*\))?)`)

// unitHint is the help of f's input in its unit: the declaration's doc
// without the API's unit, then how to type it.
func unitHint(f resource.Field, cur string) string {
	doc := apiUnitWords.ReplaceAllString(f.Doc, "")
	var how string
	switch d := digits(f, cur); {
	case f.Unit == resource.MinorUnits && d == 0:
		how = "In " + cur + ", without decimals."
	case f.Unit == resource.MinorUnits:
		how = "In " + cur + ", at most " + strconv.Itoa(d) + " decimals, e.g. " + unitText(f, 120*pow10(d), cur) + "."
	case f.Unit == resource.BasisPoints:
		how = "A percentage, at most 2 decimals, e.g. 20 or 5.5."
	default:
		how = "At most 3 decimals, e.g. 3 or 2.5."
	}
	return strings.TrimSpace(doc + " " + how)
}

// hasMoney reports whether fields (or their rows) hold an amount of money.
func hasMoney(fields []resource.Field) bool {
	for _, f := range fields {
		if f.Unit == resource.MinorUnits || hasMoney(f.Items) {
			return true
		}
	}
	return false
}

func declares(fields []resource.Field, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// currencyOf is the currency of an operation's amounts: the form's own
// currency_code, else the currency of a record the form is about (the
// record edited or acted on, a payment's invoice), of the record it is
// of (a shipment's order), of its client or vendor; else the API's
// default. "" when the operation has no money.
func (u *UI) currencyOf(c *fiber.Ctx, op resource.Op, v formValues, about ...record) string {
	if !hasMoney(op.Body) {
		return ""
	}
	if cur := strings.TrimSpace(v["currency_code"]); declares(op.Body, "currency_code") && resource.CurrencyCode.Match(cur) {
		return cur
	}
	of := func(rec record) string {
		if cur := textOf(rec.get("currency_code")); resource.CurrencyCode.Match(cur) {
			return cur
		}
		return ""
	}
	for _, rec := range about {
		if cur := of(rec); cur != "" {
			return cur
		}
	}
	if _, rec := u.linked(c, op, v); rec != nil && of(rec) != "" {
		return of(rec)
	}
	for _, p := range []struct {
		field string
		r     *resource.Resource
	}{{"client_id", resource.Clients}, {"vendor_id", resource.Vendors}} {
		if id := strings.TrimSpace(v[p.field]); id != "" && declares(op.Body, p.field) {
			if rec, err := u.current(c, p.r, id); err == nil && rec != nil && of(rec) != "" {
				return of(rec)
			}
		}
	}
	return defaultCurrency
}

// formCurrency is currencyOf a form's page: the record edited (rec) or,
// under a parent, the parent's.
func (u *UI) formCurrency(c *fiber.Ctx, s formSpec, v formValues, rec record) string {
	if !hasMoney(s.RT.Op.Body) {
		return ""
	}
	about := []record{rec}
	if s.Parent != nil {
		if parent, err := u.current(c, s.Parent, s.ID); err == nil {
			about = append(about, parent)
		}
	}
	return u.currencyOf(c, s.RT.Op, v, about...)
}

// convertAmount is minor units of one currency as text in another's
// exponent, when it is exact there (an item's price on a document in
// another currency); else in its own.
func convertAmount(f resource.Field, n int64, from, to string) string {
	df, dt := pricing.Digits(from), pricing.Digits(to)
	switch {
	case dt >= df:
		return unitText(f, n*pow10(dt-df), to)
	case n%pow10(df-dt) == 0:
		return unitText(f, n/pow10(df-dt), to)
	}
	return unitText(f, n, from)
}

// inWords is a refusal of the API that names its param ("lines[1].qty_milli
// is required") as the form names the input (input): by its line and the
// label a person sees ("Line 2: Qty is required."). Other messages are
// kept, capitalized.
func inWords(input, param, message string) string {
	if rest, named := strings.CutPrefix(message, param); named && param != "" {
		return fieldWords(input) + rest + "."
	}
	// A message naming a field without a param ("currency_code must be …").
	if m := namedParam.FindStringIndex(message); m != nil {
		return fieldWords(message[:m[1]]) + message[m[1]:] + "."
	}
	return capitalize(message) + "."
}

// fieldWords names an input as its form shows it: "Line 2: Qty", "Currency code".
func fieldWords(input string) string {
	if row, ok := rowOf(input); ok {
		if rows, col, ok := strings.Cut(input, "]."); ok {
			rows, _, _ = strings.Cut(rows, "[")
			return rowWord(rows) + " " + strconv.Itoa(row+1) + ": " + label(col)
		}
	}
	return label(input)
}

// rowWord names a row of the rows field named rows by the field's label
// in the singular ("Line", "Variant axis"), so the rows of two editors
// of one form never share a name.
func rowWord(rows string) string {
	w := label(rows)
	switch {
	case w == "Media":
		return "Medium"
	case strings.HasSuffix(w, "axes"):
		return strings.TrimSuffix(w, "es") + "is"
	case strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "sses"):
		return strings.TrimSuffix(w, "es")
	}
	return strings.TrimSuffix(w, "s")
}

// columnDoc is a rows editor's column help: in people's units, the
// declaration's doc without the API's unit.
func columnDoc(f resource.Field) string {
	if !unitField(f) {
		return f.Doc
	}
	return apiUnitWords.ReplaceAllString(f.Doc, "")
}
