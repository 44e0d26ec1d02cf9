package openapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// pathOf turns a fiber pattern into an OpenAPI path: /v1/clients/:id → /v1/clients/{id}.
func pathOf(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

func uptr(n int) *uint64 { u := uint64(n); return &u }
func i64(n int64) *int64 { return &n }

// operation documents one route.
func (b *builder) operation(rt api.Route) (*openapi3.Operation, error) {
	r, op := rt.Resource, rt.Op
	o := openapi3.NewOperation()
	tag := r.Name
	if r.Parent != nil {
		tag = r.Parent.Resource.Name
	}
	o.Tags = []string{tag}
	o.Description = r.Doc + " Needs " + r.Gate() + "; the key's role must allow " + accessWord(op.Kind) + " on " + r.PermissionName() + "."
	if r.Singleton {
		o.Description = r.Doc + " Needs " + r.Gate() + "; every key reads it, only the admin role changes it."
	}
	for _, seg := range strings.Split(rt.Path, "/") {
		if strings.HasPrefix(seg, ":") {
			p := openapi3.NewPathParameter(seg[1:]).WithSchema(openapi3.NewStringSchema())
			o.AddParameter(p)
		}
	}
	errs := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests}
	switch op.Kind {
	case resource.List:
		o.OperationID = "list" + pascal(r.Name)
		o.Summary = cmp.Or(op.Summary, "List "+r.Name+", newest first.")
		b.listParameters(o, r)
		o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("A page of "+r.Name+".").WithJSONSchemaRef(b.list(r)))
		errs = append(errs, http.StatusBadRequest)
	case resource.Get:
		o.OperationID = "get" + Name(r)
		o.Summary = cmp.Or(op.Summary, "Get one "+r.Singular+".")
		o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("The "+r.Singular+".").WithJSONSchemaRef(b.record(r)))
	case resource.Document:
		o.OperationID = "get" + Name(r) + "PDF"
		o.Summary = op.Summary
		o.AddParameter(langParameter())
		pdf := openapi3.NewResponse().WithDescription("The " + r.Singular + " as a PDF, shown inline under its number (Content-Disposition: inline; filename=\"INV-000042.pdf\").")
		pdf.Content = openapi3.NewContentWithSchema(&openapi3.Schema{Type: types(openapi3.TypeString), Format: "binary"}, []string{"application/pdf"})
		pdf.Headers = openapi3.Headers{"Content-Disposition": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: "inline, with the document's number as the file name.", Schema: openapi3.NewStringSchema().NewRef()}}}}
		o.AddResponse(http.StatusOK, pdf)
		errs = append(errs, http.StatusBadRequest)
	case resource.Delete:
		o.OperationID = "delete" + Name(r)
		o.Summary = op.Summary
		o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("Deleted: {id, object, deleted: true}.").
			WithJSONSchema(deletedSchema()))
		errs = append(errs, http.StatusConflict)
	case resource.Action:
		o.OperationID = op.Name + Name(r)
		o.Summary = op.Summary
		if len(op.Body) > 0 {
			// An action may come without a body when none of its fields is required.
			required := slices.ContainsFunc(op.Body, func(f resource.Field) bool { return f.Required })
			o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(required).WithJSONSchemaRef(b.body(rt))}
		}
		o.AddResponse(http.StatusOK, replayable(openapi3.NewResponse().
			WithDescription("The "+r.Singular+", moved to "+op.To+"; 409 invalid_state_transition from a state other than "+
				strings.Join(op.From, ", ")+".").WithJSONSchemaRef(b.record(r))))
		o.AddParameter(idempotencyParameter())
		errs = append(errs, http.StatusBadRequest, http.StatusConflict)
	default:
		o.OperationID = string(op.Kind) + Name(r)
		o.Summary = op.Summary
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(b.body(rt))}
		answer := b.answer(r, op)
		switch {
		case op.Kind == resource.Update:
			desc := "The updated " + r.Singular + "."
			if len(op.From) > 0 { // the states an edit is declared from (a void invoice changes no more)
				desc = "The updated " + r.Singular + "; 409 invalid_state_transition from a state other than " + strings.Join(op.From, ", ") + "."
			}
			o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription(desc).WithJSONSchemaRef(answer))
		case op.Kind == resource.Bulk:
			o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("One result per element, in order.").WithJSONSchemaRef(answer))
		default:
			o.AddResponse(http.StatusCreated, replayable(openapi3.NewResponse().WithDescription("Created.").WithJSONSchemaRef(answer)))
			o.AddResponse(http.StatusOK, replayable(openapi3.NewResponse().
				WithDescription("Matched an existing record (an upsert key or a repeated payment id): updated or returned as is.").WithJSONSchemaRef(answer)))
		}
		if rt.Method == http.MethodPost {
			o.AddParameter(idempotencyParameter())
		}
		errs = append(errs, http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	for _, st := range errs {
		o.Responses.Set(strconv.Itoa(st), &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	}
	o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	return o, nil
}

// answer is the schema a write responds with: the record of the resource;
// a sub-resource with no list of its own (tracking events) answers its
// parent (the shipment with its timeline); a bulk call one result per element.
func (b *builder) answer(r *resource.Resource, op resource.Op) *openapi3.SchemaRef {
	if op.Kind == resource.Bulk {
		return b.bulkResult(r)
	}
	if _, listed := r.Op(resource.List); r.Parent != nil && !listed {
		return b.record(r.Parent.Resource)
	}
	return b.record(r)
}

// bulkResult declares {data: [{index, status, <singular>|error}], meta: {created, updated, failed}}.
func (b *builder) bulkResult(r *resource.Resource) *openapi3.SchemaRef {
	name := Name(r) + "BulkResult"
	key := strings.ReplaceAll(r.Singular, " ", "_")
	item := object(map[string]*openapi3.Schema{
		"index":  integer(i64(0), nil, "Position of the element in the request."),
		"status": {Type: types(openapi3.TypeString), Enum: []any{"created", "updated", "error"}},
		"error":  errorSchema().Properties["error"].Value,
	}, "index", "status")
	item.Properties[key] = b.record(r)
	item.Properties["error"].Value.Required = []string{"code", "message"}
	delete(item.Properties["error"].Value.Properties, "request_id")
	meta := object(map[string]*openapi3.Schema{
		"created": integer(i64(0), nil, ""), "updated": integer(i64(0), nil, ""), "failed": integer(i64(0), nil, ""),
	}, "created", "updated", "failed")
	s := object(map[string]*openapi3.Schema{
		"data": {Type: types(openapi3.TypeArray), Items: openapi3.NewSchemaRef("", item)},
		"meta": meta,
	}, "data", "meta")
	b.schemas[name] = openapi3.NewSchemaRef("", s)
	return ref(name)
}

func replayable(r *openapi3.Response) *openapi3.Response {
	r.Headers = openapi3.Headers{idempotency.ReplayedHeader: &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: "true when this is the stored response of an earlier request with the same Idempotency-Key.",
		Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: types(openapi3.TypeString), Enum: []any{"true"}}),
	}}}}
	return r
}

// listParameters are limit, offset, q, sort and the resource's named filters.
func (b *builder) listParameters(o *openapi3.Operation, r *resource.Resource) {
	b.pageParameters(o)
	if len(r.Search) > 0 {
		o.AddParameter(openapi3.NewQueryParameter("q").
			WithDescription("Search text: every word must start a word of " + strings.Join(r.Search, ", ") + " (case-insensitive).").
			WithSchema(&openapi3.Schema{Type: types(openapi3.TypeString), MaxLength: uptr(api.MaxQLen)}))
	}
	sort := &openapi3.Schema{Type: types(openapi3.TypeString)}
	for _, c := range records.Sortable(r) {
		sort.Enum = append(sort.Enum, c, "-"+c)
	}
	if len(sort.Enum) > 0 {
		o.AddParameter(openapi3.NewQueryParameter("sort").
			WithDescription("Orders the list by one column, ascending, or descending with a leading - (sort=-created_at); " +
				"ties go by id the same way, empty values come first ascending. Default: newest first.").WithSchema(sort))
	}
	for _, f := range r.Filters {
		s := &openapi3.Schema{Type: types(openapi3.TypeString)}
		switch f.Type {
		case resource.Boolean:
			s = &openapi3.Schema{Type: types(openapi3.TypeBoolean)}
		case resource.Enum:
			// One value, or several comma-separated (status=sent,overdue):
			// a form-style array, not exploded.
			item := &openapi3.Schema{Type: types(openapi3.TypeString)}
			for _, v := range f.Values {
				item.Enum = append(item.Enum, v)
			}
			s = &openapi3.Schema{Type: types(openapi3.TypeArray), Items: openapi3.NewSchemaRef("", item), MinItems: 1}
			p := openapi3.NewQueryParameter(f.Param).WithDescription(f.Doc + " Several values, comma-separated, match any of them.").WithSchema(s)
			p.Style, p.Explode = openapi3.SerializationForm, openapi3.Ptr(false)
			o.AddParameter(p)
			continue
		case resource.Date:
			s.Format = "date"
		default:
			s.MinLength = 1
		}
		o.AddParameter(openapi3.NewQueryParameter(f.Param).WithDescription(f.Doc).WithSchema(s))
	}
}

// pageParameterDecls declares limit and offset once, under
// components/parameters: every list refers to them (pageParameters), as
// every list parses them alike (api.ParseList).
func pageParameterDecls() openapi3.ParametersMap {
	def := func(s *openapi3.Schema, v any) *openapi3.Schema { s.Default = v; return s }
	return openapi3.ParametersMap{
		"limit": {Value: openapi3.NewQueryParameter("limit").WithDescription("Page size, 1 to " + strconv.Itoa(api.MaxLimit) + ".").
			WithSchema(def(integer(i64(1), i64(api.MaxLimit), ""), api.DefaultLimit))},
		"offset": {Value: openapi3.NewQueryParameter("offset").WithDescription("How many to skip.").
			WithSchema(def(integer(i64(0), nil, ""), 0))},
	}
}

// pageParameters gives a list limit and offset, by reference.
func (b *builder) pageParameters(o *openapi3.Operation) {
	for _, name := range []string{"limit", "offset"} {
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + name, Value: b.params[name].Value})
	}
}

func idempotencyParameter() *openapi3.Parameter {
	return &openapi3.Parameter{In: openapi3.ParameterInHeader, Name: idempotency.Header,
		Description: "Makes the POST safe to retry for 24 hours: the same key and body get the first response again " +
			"(with `Idempotent-Replayed: true`); the same key with another body gets 409 idempotency_key_reused.",
		Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Type: types(openapi3.TypeString), MaxLength: uptr(idempotency.MaxKeyLen)})}
}

// deletedSchema is the answer of a DELETE.
func deletedSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("id", openapi3.NewStringSchema()).
		WithProperty("object", openapi3.NewStringSchema()).
		WithProperty("deleted", openapi3.NewBoolSchema())
	s.Required = []string{"id", "object", "deleted"}
	return s
}

// langParameter is a document's language: one of resource.Languages.
func langParameter() *openapi3.Parameter {
	s := &openapi3.Schema{Type: types(openapi3.TypeString)}
	for _, l := range resource.Languages {
		s.Enum = append(s.Enum, l)
	}
	return openapi3.NewQueryParameter("lang").WithSchema(s).
		WithDescription("The document's language: en, fr, ar (right to left) or bilingual (English and Arabic side by side); " +
			"default the client's preferred_language, then the company's default_language, then en. Another value is a 400 naming lang.")
}

func accessWord(k resource.OpKind) string {
	if k == resource.List || k == resource.Get || k == resource.Document {
		return "read"
	}
	return "write"
}
