package resource

import (
	"bytes"
	"encoding/json"
)

// The JSON Schema of declared fields, written once for every reader of the
// declarations: the OpenAPI document and the MCP bridge's tool arguments.

// SchemaOptions tunes a schema for its reader.
type SchemaOptions struct {
	// DefaultMaxLen, when set, is the bound of undeclared strings and arrays
	// (OpenAPI); zero leaves it out (MCP: no use in a model's context).
	DefaultMaxLen int
}

// ObjectSchema is a JSON Schema object whose properties keep declaration order,
// so a reader (a model) meets required and important fields first.
type ObjectSchema struct {
	names []string
	props map[string]any
	req   []string
	Doc   string
	// Open objects allow any keys (translations); closed ones refuse
	// unknown keys, as the API does.
	Open bool
	// Null admits null as well as the object.
	Null bool
}

// NewObject starts an empty closed object.
func NewObject(doc string) *ObjectSchema { return &ObjectSchema{props: map[string]any{}, Doc: doc} }

// Add sets a property; adding a name again replaces its schema in place.
func (o *ObjectSchema) Add(name string, schema any, required bool) {
	if _, dup := o.props[name]; !dup {
		o.names = append(o.names, name)
	}
	o.props[name] = schema
	if required {
		o.req = append(o.req, name)
	}
}

// Has reports whether the object has the property.
func (o *ObjectSchema) Has(name string) bool { _, ok := o.props[name]; return ok }

// MarshalJSON writes the properties in the order they were added.
func (o *ObjectSchema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if o.Null {
		b.WriteString(`{"type":["object","null"]`)
	} else {
		b.WriteString(`{"type":"object"`)
	}
	if o.Doc != "" {
		d, _ := json.Marshal(o.Doc)
		b.WriteString(`,"description":`)
		b.Write(d)
	}
	b.WriteString(`,"properties":{`)
	for i, n := range o.names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		v, err := json.Marshal(o.props[n])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	if len(o.req) > 0 {
		r, _ := json.Marshal(o.req)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	if !o.Open {
		b.WriteString(`,"additionalProperties":false`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// FieldsSchema is the closed object made of declared fields.
func FieldsSchema(doc string, fs []Field, o SchemaOptions) *ObjectSchema {
	obj := NewObject(doc)
	for _, f := range fs {
		obj.Add(f.Name, FieldSchema(f, o), f.Required)
	}
	return obj
}

// FieldSchema states one declared field as JSON Schema — type, enum,
// nullability, bounds, format — accepting exactly what api/body accepts.
func FieldSchema(f Field, o SchemaOptions) any {
	s := map[string]any{}
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	maxLen := f.MaxLen
	if maxLen == 0 {
		maxLen = o.DefaultMaxLen
	}
	typ := ""
	switch f.Type {
	case String:
		typ = "string"
		if maxLen > 0 {
			s["maxLength"] = maxLen
		}
		if f.NonBlank {
			s["minLength"] = 1
			s["pattern"] = `\S` // not only spaces
		}
		if f.Format != nil {
			s["pattern"] = f.Format.Pattern
		}
	case Enum:
		typ = "string"
		vals := make([]any, 0, len(f.Values)+1)
		for _, v := range f.Values {
			vals = append(vals, v)
		}
		if f.Nullable {
			vals = append(vals, nil)
		}
		s["enum"] = vals
	case Date:
		typ = "string"
		s["format"] = "date"
		s["pattern"] = `^\d{4}-\d{2}-\d{2}$`
	case Time:
		typ = "string"
		s["format"] = "date-time"
	case Integer:
		typ = "integer"
		if f.Min != nil {
			s["minimum"] = *f.Min
		}
		if f.Max != nil {
			s["maximum"] = *f.Max
		}
	case Boolean:
		typ = "boolean"
	case Object:
		if !f.Open {
			obj := FieldsSchema(f.Doc, f.Items, o)
			obj.Null = f.Nullable
			return obj
		}
		typ = "object"
	case Array:
		typ = "array"
		if maxLen > 0 {
			s["maxItems"] = maxLen
		}
		if len(f.Items) == 1 && f.Items[0].Name == "" { // a list of scalars
			s["items"] = FieldSchema(f.Items[0], o)
		} else {
			s["items"] = FieldsSchema("", f.Items, o)
		}
	case Ref:
		alts := []any{
			map[string]any{"type": "string", "pattern": "^[^:]+:[^:]*:.+$",
				"description": `"system:connection:id"; "system::id" when there is no connection.`},
			FieldsSchema("", ExternalRefFields, o),
		}
		if f.Nullable {
			alts = append(alts, map[string]any{"type": "null"})
		}
		s["anyOf"] = alts
		return s
	default: // Any: the operation checks it
		return s
	}
	if f.Nullable {
		s["type"] = []string{typ, "null"}
	} else {
		s["type"] = typ
	}
	return s
}
