package mcpbridge

import (
	"bytes"
	"encoding/json"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// object is a JSON Schema object whose properties keep declaration order,
// so a model reads required and important arguments first.
type object struct {
	names []string
	props map[string]any
	req   []string
	doc   string
	// open allows any keys (translations); closed objects refuse unknown
	// ones, as the API does.
	open bool
}

func newObject(doc string) *object { return &object{props: map[string]any{}, doc: doc} }

func (o *object) add(name string, schema any, required bool) {
	if _, dup := o.props[name]; !dup {
		o.names = append(o.names, name)
	}
	o.props[name] = schema
	if required {
		o.req = append(o.req, name)
	}
}

func (o *object) has(name string) bool { _, ok := o.props[name]; return ok }

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object"`)
	if o.doc != "" {
		d, _ := json.Marshal(o.doc)
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
	if !o.open {
		b.WriteString(`,"additionalProperties":false`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// fieldsObject is the schema of an object made of declared body fields.
func fieldsObject(doc string, fs []resource.Field) *object {
	o := newObject(doc)
	for _, f := range fs {
		o.add(f.Name, fieldSchema(f), f.Required)
	}
	return o
}

// fieldSchema states one declared field as JSON Schema: its type, enum,
// nullability, bounds and the API's default length limit, so a model can
// build a valid body without trial and error.
func fieldSchema(f resource.Field) any {
	s := map[string]any{}
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	// Only declared bounds are stated: the API's default bound on every
	// string is a safety net no real value reaches, not worth a model's context.
	typ := ""
	switch f.Type {
	case resource.String:
		typ = "string"
		if f.MaxLen > 0 {
			s["maxLength"] = f.MaxLen
		}
	case resource.Enum:
		typ = "string"
		vals := make([]any, 0, len(f.Values)+1)
		for _, v := range f.Values {
			vals = append(vals, v)
		}
		if f.Nullable {
			vals = append(vals, nil)
		}
		s["enum"] = vals
	case resource.Date:
		typ = "string"
		s["format"] = "date"
		s["pattern"] = `^\d{4}-\d{2}-\d{2}$`
	case resource.Time:
		typ = "string"
		s["format"] = "date-time"
	case resource.Integer:
		typ = "integer"
		if f.Min != nil {
			s["minimum"] = *f.Min
		}
		if f.Max != nil {
			s["maximum"] = *f.Max
		}
	case resource.Boolean:
		typ = "boolean"
	case resource.Object:
		if !f.Open {
			o := fieldsObject(f.Doc, f.Items)
			return nullable(o, f.Nullable)
		}
		typ = "object"
		s["additionalProperties"] = true
	case resource.Array:
		typ = "array"
		if f.MaxLen > 0 {
			s["maxItems"] = f.MaxLen
		}
		s["items"] = elementSchema(f.Items)
	case resource.Ref:
		return refSchema(f)
	default: // resource.Any: the operation checks it
		return s
	}
	if f.Nullable {
		s["type"] = []string{typ, "null"}
	} else {
		s["type"] = typ
	}
	return s
}

// elementSchema is the schema of an array's elements: one nameless field is
// a scalar (a list of strings), named fields make an object.
func elementSchema(items []resource.Field) any {
	if len(items) == 1 && items[0].Name == "" {
		return fieldSchema(items[0])
	}
	return fieldsObject("", items)
}

func nullable(schema any, null bool) any {
	if !null {
		return schema
	}
	return map[string]any{"anyOf": []any{schema, map[string]any{"type": "null"}}}
}

// refSchema is external_ref: "system:connection:id" or its object form.
func refSchema(f resource.Field) any {
	obj := fieldsObject("", resource.ExternalRefFields)
	return map[string]any{
		"description": f.Doc,
		"anyOf": []any{
			map[string]any{"type": "string", "pattern": "^[^:]+:[^:]*:.+$", "description": "system:connection:id"},
			obj,
		},
	}
}
