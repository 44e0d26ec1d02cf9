package resource

import (
	"net/mail"
	text "strings"

	values "github.com/ledgerbase/ledgerbase/ent/enum"
)

// Type is the JSON type of a body field.
type Type string

const (
	String  Type = "string"
	Integer Type = "integer"
	Boolean Type = "boolean"
	Object  Type = "object"
	Array   Type = "array"
	Enum    Type = "enum" // a string from Values
	Date    Type = "date" // a YYYY-MM-DD string
	Time    Type = "time" // an RFC 3339 string
	Ref     Type = "ref"  // external_ref: string "system:connection:id" or object
	Any     Type = "any"  // an object or a string, checked by the operation
)

// Field is one field of a request body.
type Field struct {
	Name     string
	Type     Type
	Required bool
	Nullable bool
	Values   []string // Enum
	Min      *int64   // Integer lower bound (money and quantities are >= 0)
	Max      *int64
	MaxLen   int // String/Array length bound; 0 = the default bound
	// NonBlank refuses "" and all-space strings: the column is NotEmpty
	// (names, SKUs, payment ids). req sets it on every required string.
	NonBlank bool
	// Format is a shape a String must have (ISO 4217 currency codes).
	Format *Format
	Items  []Field // Array of objects: the fields of each element
	Open   bool    // Object: any keys (translations); else Items are its fields
	Doc    string
	// UpdateOnly is a field meant for updates (PATCH) of a body that
	// creates share: tools that create do not offer it (the MCP bridge).
	UpdateOnly bool
	// Refers names the resource (by Name) whose record a string field
	// holds the id of, where the field's name does not say it: X_id names
	// the resource whose Singular is X (client_id, sales_order_id). The
	// admin forms pick such a record by its name.
	Refers string
	// Unit is what an Integer counts, for people: the admin UI shows and
	// takes the field in the unit a person writes (120.00 EUR, 2.5, 20 %).
	// /v1, OpenAPI and MCP keep the integer as is.
	Unit Unit
}

// Unit is the unit of an Integer field as people write it.
type Unit string

const (
	Count       Unit = ""      // a plain integer
	MinorUnits  Unit = "minor" // money in minor units of the record's currency (its ISO 4217 exponent: 12000 is 120.00 EUR)
	Thousandths Unit = "milli" // a quantity in thousandths: 2500 is 2.5
	BasisPoints Unit = "bp"    // a rate in basis points, written as a percentage: 550 is 5.5 %
)

// Scale is how many decimals of the unit the integer holds (money's
// depend on the currency: see api/money.Digits).
func (u Unit) Scale() int {
	switch u {
	case Thousandths:
		return 3
	case BasisPoints:
		return 2
	}
	return 0
}

// Format is a shape a string must have: checked by api/body, stated in the
// OpenAPI document as Pattern.
type Format struct {
	Pattern string            // the same rule as a regular expression
	Says    string            // "an ISO 4217 code of three capital letters, e.g. EUR"
	Match   func(string) bool // the rule, without a regexp on the hot path
}

// CurrencyCode is an ISO 4217 code: three capital letters. The column
// holds at most 3 characters (ent MaxLen(3), varchar(3) on PostgreSQL).
var CurrencyCode = &Format{
	Pattern: "^[A-Z]{3}$",
	Says:    "an ISO 4217 code of three capital letters, e.g. EUR",
	Match: func(s string) bool {
		if len(s) != 3 {
			return false
		}
		for i := 0; i < 3; i++ {
			if s[i] < 'A' || s[i] > 'Z' {
				return false
			}
		}
		return true
	},
}

func min0() *int64 { z := int64(0); return &z }

// Field constructors keep the declarations short and readable.
func str(name, doc string) Field { return Field{Name: name, Type: String, Doc: doc} }
func req(f Field) Field {
	f.Required = true
	f.NonBlank = f.NonBlank || f.Type == String // a required string must say something
	return f
}
func currency(doc string) Field {
	return Field{Name: "currency_code", Type: String, Format: CurrencyCode, MaxLen: 3, Doc: doc}
}
func null(f Field) Field       { f.Nullable = true; return f }
func updateOnly(f Field) Field { f.UpdateOnly = true; return f }

// refers declares the resource whose record f names (Field.Refers).
func refers(f Field, resource string) Field { f.Refers = resource; return f }

func money(name, doc string) Field {
	return Field{Name: name, Type: Integer, Min: min0(), Unit: MinorUnits, Doc: doc}
}

// quantity is a quantity in thousandths, at least lo.
func quantity(name string, lo int64, doc string) Field {
	return Field{Name: name, Type: Integer, Min: &lo, Unit: Thousandths, Doc: doc}
}

// rate is a rate in basis points, 0 to 10000 (100 %).
func rate(name, doc string) Field {
	return Field{Name: name, Type: Integer, Min: min0(), Max: bp(10_000), Unit: BasisPoints, Doc: doc}
}

// grams is a weight in grams, not below 0.
func grams(name, doc string) Field     { return Field{Name: name, Type: Integer, Min: min0(), Doc: doc} }
func integer(name, doc string) Field   { return Field{Name: name, Type: Integer, Doc: doc} }
func boolean(name, doc string) Field   { return Field{Name: name, Type: Boolean, Doc: doc} }
func date(name, doc string) Field      { return Field{Name: name, Type: Date, Doc: doc} }
func timestamp(name, doc string) Field { return Field{Name: name, Type: Time, Doc: doc} }
func enum(name, doc string, v ...string) Field {
	return Field{Name: name, Type: Enum, Values: v, Doc: doc}
}
func objects(name, doc string, items ...Field) Field {
	return Field{Name: name, Type: Array, Items: items, Doc: doc}
}
func openObject(name, doc string) Field { return Field{Name: name, Type: Object, Open: true, Doc: doc} }
func strings(name, doc string) Field {
	return Field{Name: name, Type: Array, Items: []Field{{Type: String}}, Doc: doc}
}

// Languages are the values of preferred_language.
var Languages = values.Languages

// EmailAddress is one bare address (ada@example.com), as net/mail reads it.
var EmailAddress = &Format{
	Pattern: `^[^@\s<>,;"]+@[^@\s<>,;"]+$`,
	Says:    "an email address, e.g. ada@example.com",
	Match: func(s string) bool {
		if text.ContainsAny(s, " \t\r\n<>,;\"") || text.Count(s, "@") != 1 || text.HasPrefix(s, "@") || text.HasSuffix(s, "@") {
			return false
		}
		a, err := mail.ParseAddress(s)
		return err == nil && a.Address == s
	},
}

// MaxRecipients bounds to and cc of an emailing action.
const MaxRecipients = 10

// emailAddresses is a body's list of recipients.
func emailAddresses(name, doc string) Field {
	return Field{Name: name, Type: Array, MaxLen: MaxRecipients, Items: []Field{{Type: String, Format: EmailAddress, MaxLen: 254}}, Doc: doc}
}

// EmailBody is the body of an action that emails its document (Op.Emails);
// all of it is optional: no body (or {}) emails the client.
var EmailBody = []Field{
	boolean("email", "Email the document's PDF, in the client's preferred_language, to \"to\" or else the client's email. Omitted: emailed when there is an address, else only the state moves (as before emails existed); true: an address is required (409 no_recipient); false: only the state moves."),
	emailAddresses("to", "Recipients instead of the client's email (at most 10)."),
	emailAddresses("cc", "Copies (at most 10)."),
	{Name: "message", Type: String, MaxLen: 5000, Doc: "Your words, put before the standard text of the email (at most 5000 characters)."},
}
