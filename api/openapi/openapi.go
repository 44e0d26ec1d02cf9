// Package openapi derives the OpenAPI 3.1 document of /v1 from the resource
// declarations, so it cannot drift from the code; the test suite validates
// every request and response against it.
package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"entgo.io/ent/schema/field"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/rest"
)

// Path is where the document is served, without a key.
const Path = "/v1/openapi.json"

var (
	once    sync.Once
	built   *openapi3.T
	encoded []byte
	failed  error
)

// Document returns the document and its JSON, built once per process.
func Document() (*openapi3.T, []byte, error) {
	once.Do(func() {
		doc, err := Build()
		if err == nil {
			encoded, err = json.Marshal(doc)
		}
		if err == nil {
			// Loading the served bytes resolves every $ref, so validators use
			// exactly what clients get.
			built, err = openapi3.NewLoader().LoadFromData(encoded)
		}
		failed = err
	})
	return built, encoded, failed
}

// Register serves the document at GET /v1/openapi.json with no key.
func Register(s *rest.Server) error {
	_, b, err := Document()
	if err != nil {
		return err
	}
	s.Public(func(r fiber.Router) {
		r.Get(strings.TrimPrefix(Path, "/v1"), func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			c.Set(fiber.HeaderCacheControl, "public, max-age=300")
			return c.Send(b)
		})
	})
	return nil
}

// Build derives the document from the declarations.
func Build() (*openapi3.T, error) {
	b := &builder{schemas: openapi3.Schemas{}, bodies: map[string][]resource.Field{}, params: pageParameterDecls()}
	doc := &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title:   "Ledgerbase workspace API",
			Version: "v1",
			License: &openapi3.License{Name: "MIT", Identifier: "MIT"},
			Description: "Business records of a workspace over JSON. Every call but this document needs " +
				"`Authorization: Bearer <API key>`. Money is in minor units (`*_cents`), quantities in thousandths " +
				"(`qty_milli`), times RFC 3339 UTC, dates YYYY-MM-DD. POST accepts an `Idempotency-Key` header.",
		},
		Servers: openapi3.Servers{{URL: "/", Description: "The server this document was fetched from."}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:    b.schemas,
			Parameters: b.params,
			SecuritySchemes: openapi3.SecuritySchemes{"bearer": &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
				Type: "http", Scheme: "bearer",
				Description: "A workspace API key (lb_...) created with `ledgerbase key create` or in the admin UI.",
			}}},
			Responses: openapi3.ResponseBodies{"Error": &openapi3.ResponseRef{Value: openapi3.NewResponse().
				WithDescription("An error; `code` says which (see the README's error table).").
				WithJSONSchemaRef(ref("Error"))}},
		},
		Security: openapi3.SecurityRequirements{{"bearer": []string{}}},
	}
	b.schemas["Error"] = openapi3.NewSchemaRef("", errorSchema())
	b.schemas["ListMeta"] = openapi3.NewSchemaRef("", object(map[string]*openapi3.Schema{
		"limit":  integer(nil, nil, "Page size."),
		"offset": integer(nil, nil, "Records skipped."),
		"total":  integer(nil, nil, "Exact number of records matching the list's filters."),
	}, "limit", "offset", "total"))
	if err := b.me(); err != nil {
		return nil, err
	}
	for _, rt := range api.Routes() {
		op, err := b.operation(rt)
		if err != nil {
			return nil, err
		}
		doc.AddOperation(pathOf(rt.Path), rt.Method, op)
	}
	b.events(doc)
	b.webhooks(doc)
	self := openapi3.NewOperation()
	self.OperationID, self.Summary, self.Tags = "getOpenAPI", "This document (no key needed).", []string{"meta"}
	self.Security = openapi3.NewSecurityRequirements()
	self.AddResponse(200, openapi3.NewResponse().WithDescription("The OpenAPI 3.1 document.").
		WithJSONSchema(&openapi3.Schema{Type: types(openapi3.TypeObject)}))
	// A request line or headers longer than the server reads (8 KiB).
	self.Responses.Set("431", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	self.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	doc.AddOperation(Path, "GET", self)
	return doc, nil
}

type builder struct {
	schemas openapi3.Schemas
	bodies  map[string][]resource.Field // the fields behind each body schema
	params  openapi3.ParametersMap      // shared parameters: a list's limit and offset
}

func ref(name string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

func types(t ...string) *openapi3.Types { x := openapi3.Types(t); return &x }

var closed = openapi3.AdditionalProperties{Has: new(bool)} // additionalProperties: false

// object is a closed object schema: unknown keys are refused, as the API refuses them.
func object(props map[string]*openapi3.Schema, required ...string) *openapi3.Schema {
	s := &openapi3.Schema{Type: types(openapi3.TypeObject), Properties: openapi3.Schemas{}, AdditionalProperties: closed}
	for n, p := range props {
		s.Properties[n] = openapi3.NewSchemaRef("", p)
	}
	sort.Strings(required)
	s.Required = required
	return s
}

func integer(min, max *int64, doc string) *openapi3.Schema {
	s := &openapi3.Schema{Type: types(openapi3.TypeInteger), Format: "int64", Description: doc}
	if min != nil {
		f := float64(*min)
		s.Min = &f
	}
	if max != nil {
		f := float64(*max)
		s.Max = &f
	}
	return s
}

// nullable lets a schema also be null, the 3.1 way (a type list, and null
// among enum values).
func nullable(s *openapi3.Schema) *openapi3.Schema {
	switch {
	case s.Type != nil:
		if !s.Type.Includes(openapi3.TypeNull) {
			*s.Type = append(*s.Type, openapi3.TypeNull)
		}
		if len(s.Enum) > 0 {
			s.Enum = append(s.Enum, nil)
		}
	case len(s.OneOf) > 0:
		s.OneOf = append(s.OneOf, openapi3.NewSchemaRef("", &openapi3.Schema{Type: types(openapi3.TypeNull)}))
	}
	return s
}

// str is a string schema described by doc.
func str(doc string) *openapi3.Schema {
	return &openapi3.Schema{Type: types(openapi3.TypeString), Description: doc}
}

func errorSchema() *openapi3.Schema {
	return object(map[string]*openapi3.Schema{
		"error": object(map[string]*openapi3.Schema{
			"code":       str("Machine-readable code, e.g. invalid_request, permission_denied, amount_exceeds_balance."),
			"message":    str("What went wrong, for a person."),
			"request_id": str("The request's id, also in the X-Request-Id header."),
			"param":      str("The field, query parameter or header at fault (400 only)."),
		}, "code", "message", "request_id"),
	}, "error")
}

// bodyOptions state the API's exact bounds, so the document accepts exactly
// what api/body accepts.
var bodyOptions = resource.SchemaOptions{DefaultMaxLen: body.DefaultMaxLen}

// fieldSchema is a declared body field's schema (resource.FieldSchema, the
// one the MCP bridge also uses) as kin-openapi's type.
func fieldSchema(f resource.Field) *openapi3.Schema { return kin(resource.FieldSchema(f, bodyOptions)) }

// fieldsSchema is the closed object of a list of declared fields.
func fieldsSchema(fs []resource.Field) *openapi3.Schema {
	return kin(resource.FieldsSchema("", fs, bodyOptions))
}

// kin converts a JSON Schema value. The declarations are static, so a
// failure is a programming error that the document's own test catches.
func kin(v any) *openapi3.Schema {
	b, err := json.Marshal(v)
	if err == nil {
		s := &openapi3.Schema{}
		if err = json.Unmarshal(b, s); err == nil {
			return s
		}
	}
	panic(fmt.Sprintf("openapi: declared schema %s: %v", b, err))
}

// columnSchema maps an ent column type to its JSON form on reads.
func columnSchema(c records.ColumnInfo) *openapi3.Schema {
	var s *openapi3.Schema
	switch c.Type {
	case field.TypeInt, field.TypeInt8, field.TypeInt16, field.TypeInt32, field.TypeInt64,
		field.TypeUint, field.TypeUint8, field.TypeUint16, field.TypeUint32, field.TypeUint64:
		s = &openapi3.Schema{Type: types(openapi3.TypeInteger), Format: "int64"}
	case field.TypeFloat32, field.TypeFloat64:
		s = &openapi3.Schema{Type: types(openapi3.TypeNumber)}
	case field.TypeBool:
		s = &openapi3.Schema{Type: types(openapi3.TypeBoolean)}
	case field.TypeTime:
		s = &openapi3.Schema{Type: types(openapi3.TypeString), Format: "date-time"}
	case field.TypeJSON:
		// Structured data (lines, media, a receipt): an object or an array;
		// typed so that a nullable one can say so (an untyped {} cannot).
		s = &openapi3.Schema{Type: types(openapi3.TypeObject, openapi3.TypeArray)}
	case field.TypeEnum:
		s = &openapi3.Schema{Type: types(openapi3.TypeString)}
		for _, v := range c.Enums {
			s.Enum = append(s.Enum, v)
		}
	default:
		s = &openapi3.Schema{Type: types(openapi3.TypeString)}
	}
	if c.Nullable {
		nullable(s)
	}
	return s
}

// Name is a resource's schema name: "credit note" → "CreditNote".
func Name(r *resource.Resource) string { return pascal(r.Singular) }

func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// record declares (once) and references the schema of r's records: every
// shown column, computed field and embed. Commerce columns and embeds are
// optional: they appear only on products of a commerce workspace.
func (b *builder) record(r *resource.Resource) *openapi3.SchemaRef {
	name := Name(r)
	if _, ok := b.schemas[name]; ok || r == resource.Me {
		return ref(name)
	}
	props := map[string]*openapi3.Schema{}
	var req []string
	if r.Singleton {
		// A singleton shows the fields of its update, each null until set,
		// and when it was last saved.
		op, _ := r.Op(resource.Update)
		for _, f := range op.Body {
			props[f.Name] = fieldSchema(f)
			req = append(req, f.Name)
		}
		props["updated_at"] = nullable(&openapi3.Schema{Type: types(openapi3.TypeString), Format: "date-time",
			Description: "When it was last saved; null until then."})
		req = append(req, "updated_at")
	}
	for _, c := range records.Columns(r) {
		props[c.Name] = columnSchema(c)
		if !c.Commerce {
			req = append(req, c.Name)
		}
	}
	for _, c := range r.Computed {
		s := fieldSchema(c.Shape)
		s.Description = c.Doc
		props[c.Name] = s
		req = append(req, c.Name)
	}
	for _, e := range r.Embeds {
		eprops := map[string]*openapi3.Schema{}
		var ereq []string
		for _, c := range records.EmbedColumns(e) {
			eprops[c.Name] = columnSchema(c)
			ereq = append(ereq, c.Name)
		}
		props[e.Name] = &openapi3.Schema{Type: types(openapi3.TypeArray), Items: openapi3.NewSchemaRef("", object(eprops, ereq...))}
		if !e.Commerce {
			req = append(req, e.Name)
		}
	}
	s := object(props, req...)
	s.Description = r.Doc
	b.schemas[name] = openapi3.NewSchemaRef("", s)
	return ref(name)
}

// list declares the list envelope of r.
func (b *builder) list(r *resource.Resource) *openapi3.SchemaRef {
	name := Name(r) + "List"
	if _, ok := b.schemas[name]; !ok {
		s := object(nil, "data", "meta")
		s.Properties["data"] = openapi3.NewSchemaRef("", &openapi3.Schema{Type: types(openapi3.TypeArray), Items: b.record(r)})
		s.Properties["meta"] = ref("ListMeta")
		b.schemas[name] = openapi3.NewSchemaRef("", s)
	}
	return ref(name)
}

// me declares the record of GET /v1/me from the Go type the handler encodes.
func (b *builder) me() error {
	s, err := openapi3gen.NewSchemaRefForValue(api.MeRecord{}, nil)
	if err != nil {
		return fmt.Errorf("openapi: me: %w", err)
	}
	strict(s.Value)
	s.Value.Description = resource.Me.Doc
	b.schemas[Name(resource.Me)] = s
	return nil
}

// strict closes a schema generated from a Go type: every property is
// always present (the encoder writes them all), no others, and a Go
// pointer's null is a 3.1 type list.
func strict(s *openapi3.Schema) {
	if s.Nullable {
		s.Nullable = false
		nullable(s)
	}
	if len(s.Properties) == 0 {
		return
	}
	s.AdditionalProperties = closed
	s.Required = nil
	for n, p := range s.Properties {
		s.Required = append(s.Required, n)
		strict(p.Value)
	}
	sort.Strings(s.Required)
}

// body declares the request body of a write.
func (b *builder) body(rt api.Route) *openapi3.SchemaRef {
	r, op := rt.Resource, rt.Op
	name := Name(r) + "Body"
	if op.Emails {
		name = "EmailDocumentBody" // resource.EmailBody, one for every document that emails
	} else if prev, ok := b.bodies[name]; ok && !reflect.DeepEqual(prev, op.Body) {
		name = Name(r) + pascal(string(op.Kind)) + "Body" // another operation of r takes other fields
	}
	if _, ok := b.schemas[name]; !ok {
		b.schemas[name] = openapi3.NewSchemaRef("", fieldsSchema(op.Body))
		b.bodies[name] = op.Body
	}
	if op.BulkKey == "" {
		return ref(name)
	}
	many := &openapi3.Schema{Type: types(openapi3.TypeArray), Items: ref(name), MinItems: 1, MaxItems: uptr(op.BulkMax)}
	wrapper := object(map[string]*openapi3.Schema{op.BulkKey: many}, op.BulkKey)
	if op.Kind == resource.Bulk {
		// A bulk call answers each element on its own: one that does not
		// match the body is that element's error, not the request's.
		// So an element is either a body or, said as precisely, not one.
		many.Items = openapi3.NewSchemaRef("", &openapi3.Schema{
			Description: "A " + name + "; an element that is not one gets its own error in the answer.",
			AnyOf: openapi3.SchemaRefs{ref(name), openapi3.NewSchemaRef("", &openapi3.Schema{
				Not:         ref(name),
				Description: "Not a " + name + ": answered with this element's error (status `error`); the other elements are still written.",
			})},
		})
		return openapi3.NewSchemaRef("", wrapper)
	}
	// One element, or several under BulkKey.
	return openapi3.NewSchemaRef("", &openapi3.Schema{OneOf: openapi3.SchemaRefs{ref(name), openapi3.NewSchemaRef("", wrapper)}})
}
