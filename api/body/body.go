// Package body validates JSON request bodies against a resource's declared
// fields: one clear 400 naming the first field at fault, in declaration order.
package body

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// DefaultMaxLen bounds strings and arrays that declare no bound.
const DefaultMaxLen = 10_000

// Values is a validated body (or one element of an array of objects).
type Values struct {
	m      map[string]any
	fields []resource.Field
}

// Read takes a write's JSON body (anything else is 415); optional lets an
// empty body stand for {}, whatever its Content-Type.
func Read(contentType string, raw []byte, optional bool) ([]byte, error) {
	if optional && len(raw) == 0 {
		return []byte("{}"), nil
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
		return nil, apierr.New(http.StatusUnsupportedMediaType, "unsupported_media_type", "send JSON with 'Content-Type: application/json'")
	}
	return raw, nil
}

// Decode reads raw as one JSON object (numbers kept exact).
func Decode(raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, apierr.InvalidJSON("the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, apierr.InvalidJSON("the body is not valid JSON: %s", jsonMsg(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apierr.InvalidJSON("the body has data after its JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.InvalidJSON("the body must be a JSON object")
	}
	return m, nil
}

func jsonMsg(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

// Parse decodes and validates raw against fields.
func Parse(raw []byte, fields []resource.Field) (Values, error) {
	m, err := Decode(raw)
	if err != nil {
		return Values{}, err
	}
	return Check(m, fields, "")
}

// Check validates a decoded object; path prefixes params ("lines[0].").
func Check(m map[string]any, fields []resource.Field, path string) (Values, error) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.ContainsFunc(fields, func(f resource.Field) bool { return f.Name == k }) {
			return Values{}, apierr.Invalid(path+k, "unknown field %q", path+k)
		}
	}
	for i := range fields {
		f := &fields[i]
		v, present := m[f.Name]
		p := path + f.Name
		if !present {
			if f.Required {
				return Values{}, apierr.Invalid(p, "%s is required", p)
			}
			continue
		}
		nv, err := checkValue(f, v, p)
		if err != nil {
			return Values{}, err
		}
		m[f.Name] = nv
	}
	return Values{m: m, fields: fields}, nil
}

func maxLen(f *resource.Field) int {
	if f.MaxLen > 0 {
		return f.MaxLen
	}
	return DefaultMaxLen
}

// checkValue validates v and returns it in its Go form: string, int64, bool,
// map[string]any, []any, []Values (arrays of objects) or nil.
func checkValue(f *resource.Field, v any, p string) (any, error) {
	if v == nil {
		if f.Nullable {
			return nil, nil
		}
		return nil, apierr.Invalid(p, "%s must not be null", p)
	}
	switch f.Type {
	case resource.String, resource.Enum, resource.Date, resource.Time:
		s, ok := v.(string)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be a string", p)
		}
		if err := text(s, p); err != nil {
			return nil, err
		}
		if f.Format != nil && !f.Format.Match(s) {
			return nil, apierr.Invalid(p, "%s must be %s", p, f.Format.Says)
		}
		if len(s) > maxLen(f) && utf8.RuneCountInString(s) > maxLen(f) { // characters, as OpenAPI's maxLength
			return nil, apierr.Invalid(p, "%s is longer than %d characters", p, maxLen(f))
		}
		if f.NonBlank && strings.TrimSpace(s) == "" {
			return nil, apierr.Invalid(p, "%s must not be blank", p)
		}
		switch f.Type {
		case resource.Enum:
			if !slices.Contains(f.Values, s) {
				return nil, apierr.Invalid(p, "%s must be one of %v", p, f.Values)
			}
		case resource.Date:
			if _, err := time.Parse("2006-01-02", s); err != nil {
				return nil, apierr.Invalid(p, "%s must be a date YYYY-MM-DD", p)
			}
		case resource.Time:
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return nil, apierr.Invalid(p, "%s must be an RFC 3339 time, e.g. 2026-01-31T14:00:00Z", p)
			}
		}
		return s, nil
	case resource.Integer:
		n, ok := v.(json.Number)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be an integer", p)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return nil, apierr.Invalid(p, "%s must be a whole number that fits in 64 bits (amounts are in minor units)", p)
		}
		if f.Min != nil && i < *f.Min {
			return nil, apierr.Invalid(p, "%s must be at least %d", p, *f.Min)
		}
		if f.Max != nil && i > *f.Max {
			return nil, apierr.Invalid(p, "%s must be at most %d", p, *f.Max)
		}
		return i, nil
	case resource.Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be true or false", p)
		}
		return b, nil
	case resource.Object:
		o, ok := v.(map[string]any)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be an object", p)
		}
		if f.Open {
			return o, anyText(o, p)
		}
		vals, err := Check(o, f.Items, p+".")
		return vals, err
	case resource.Array:
		a, ok := v.([]any)
		if !ok {
			return nil, apierr.Invalid(p, "%s must be an array", p)
		}
		if len(a) > maxLen(f) {
			return nil, apierr.Invalid(p, "%s has more than %d elements", p, maxLen(f))
		}
		if len(f.Items) == 1 && f.Items[0].Name == "" { // array of scalars
			out := make([]any, len(a))
			for i, x := range a {
				nv, err := checkValue(&f.Items[0], x, fmt.Sprintf("%s[%d]", p, i))
				if err != nil {
					return nil, err
				}
				out[i] = nv
			}
			return out, nil
		}
		out := make([]Values, len(a))
		for i, x := range a {
			o, ok := x.(map[string]any)
			ep := fmt.Sprintf("%s[%d]", p, i)
			if !ok {
				return nil, apierr.Invalid(ep, "%s must be an object", ep)
			}
			vals, err := Check(o, f.Items, ep+".")
			if err != nil {
				return nil, err
			}
			out[i] = vals
		}
		return out, nil
	case resource.Ref:
		switch x := v.(type) {
		case string:
			return x, text(x, p)
		case map[string]any:
			return Check(x, resource.ExternalRefFields, p+".")
		}
		return nil, apierr.Invalid(p, "%s must be a string \"system:connection:id\" or an object", p)
	case resource.Any:
		return v, anyText(v, p)
	}
	return nil, apierr.Invalid(p, "%s has an unsupported type", p)
}

// text refuses NUL, which PostgreSQL refuses in text and jsonb (invalid
// UTF-8 the JSON decoder already turned into U+FFFD).
func text(s, p string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return apierr.Invalid(p, "%s must not contain the NUL character (\\u0000)", p)
	}
	return nil
}

// anyText applies text to every key and string inside a free-form value
// (translations, the raw events of a bulk body).
func anyText(v any, p string) error {
	switch x := v.(type) {
	case string:
		return text(x, p)
	case map[string]any:
		for k, e := range x {
			kp := p + "." + k
			if err := text(k, kp); err != nil {
				return apierr.Invalid(p, "%s has a key with the NUL character (\\u0000)", p)
			}
			if err := anyText(e, kp); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := anyText(e, fmt.Sprintf("%s[%d]", p, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Has reports whether the field was sent (even as null).
func (v Values) Has(name string) bool { _, ok := v.m[name]; return ok }

// IsNull reports whether the field was sent as null.
func (v Values) IsNull(name string) bool { x, ok := v.m[name]; return ok && x == nil }

// String returns a sent, non-null string field.
func (v Values) String(name string) (string, bool) { s, ok := v.m[name].(string); return s, ok }

// Int returns a sent integer field.
func (v Values) Int(name string) (int64, bool) { i, ok := v.m[name].(int64); return i, ok }

// Bool returns a sent boolean field.
func (v Values) Bool(name string) (bool, bool) { b, ok := v.m[name].(bool); return b, ok }

// Object returns a sent open object field.
func (v Values) Object(name string) (map[string]any, bool) {
	o, ok := v.m[name].(map[string]any)
	return o, ok
}

// Nested returns a sent object field with declared fields.
func (v Values) Nested(name string) (Values, bool) { o, ok := v.m[name].(Values); return o, ok }

// Objects returns a sent array-of-objects field.
func (v Values) Objects(name string) ([]Values, bool) { a, ok := v.m[name].([]Values); return a, ok }

// Strings returns a sent array-of-strings field.
func (v Values) Strings(name string) ([]string, bool) {
	a, ok := v.m[name].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}

// Raw returns the field's Go value as validated.
func (v Values) Raw(name string) any { return v.m[name] }

// Map returns the underlying validated object.
func (v Values) Map() map[string]any { return v.m }
