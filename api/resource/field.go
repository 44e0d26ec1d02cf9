package resource

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
	MaxLen   int     // String/Array length bound; 0 = the default bound
	Items    []Field // Array of objects: the fields of each element
	Open     bool    // Object: any keys (translations); else Items are its fields
	Doc      string
}

func min0() *int64 { z := int64(0); return &z }

// Field constructors keep the declarations short and readable.
func str(name, doc string) Field       { return Field{Name: name, Type: String, Doc: doc} }
func req(f Field) Field                { f.Required = true; return f }
func null(f Field) Field               { f.Nullable = true; return f }
func money(name, doc string) Field     { return Field{Name: name, Type: Integer, Min: min0(), Doc: doc} }
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
var Languages = []string{"en", "fr", "ar", "bilingual"}
