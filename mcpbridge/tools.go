package mcpbridge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Tool is one MCP tool derived from a /v1 endpoint declaration: nothing in
// it is written per endpoint, so a new declaration is a new tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Endpoint    resource.Endpoint
	Schema      *resource.ObjectSchema
	// ReadOnly, Destructive and Idempotent are the MCP annotations.
	ReadOnly, Destructive, Idempotent bool
	// params map the path's placeholders to argument names, in path order.
	params []pathParam
	// queryNames are the query parameters of arguments named otherwise
	// (created_gte is created[gte]): tool arguments are identifiers.
	queryNames map[string]string
}

// pathParam is a path placeholder, the argument that fills it and what the
// argument is ("the invoice's id (inv_...)").
type pathParam struct{ placeholder, arg, doc string }

// argName is the argument behind an API error's param (a query
// parameter's name).
func (t Tool) argName(param string) string {
	for arg, name := range t.queryNames {
		if name == param {
			return arg
		}
	}
	return param
}

// argError is an argument the bridge refuses before calling the API.
type argError struct{ param, msg string }

func (e *argError) Error() string { return e.msg }

// Tools derives a tool for every endpoint of every declared resource, and
// of the event log.
func Tools() []Tool {
	var out []Tool
	for _, e := range append(resource.Endpoints(), resource.EventEndpoints()...) {
		out = append(out, toolFor(e))
	}
	return out
}

func snake(s string) string { return strings.NewReplacer("-", "_", " ", "_").Replace(s) }

// words is a resource's plural as a person says it: "sales orders",
// "online payments" (/v1/payments).
func words(r *resource.Resource) string {
	if r.Plural != "" {
		return r.Plural
	}
	return strings.ReplaceAll(r.Name, "-", " ")
}

func article(s string) string {
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an " + s
	}
	return "a " + s
}

// toolName names a tool by verb and noun as a model would guess it:
// list_sales_orders, add_invoice_payment, bulk_upsert_products, whoami.
func toolName(e resource.Endpoint) string {
	r := e.Resource
	if r == resource.Me {
		return "whoami"
	}
	one := snake(r.Singular)
	switch e.Op.Kind {
	case resource.List:
		return "list_" + snake(words(r))
	case resource.Create:
		if r.Parent == nil {
			return "create_" + one
		}
		if e.Op.BulkKey != "" {
			return "add_" + one + "s"
		}
		return "add_" + one
	case resource.Bulk:
		return "bulk_upsert_" + snake(words(r))
	case resource.Action:
		return e.Op.Name + "_" + one
	case resource.Document:
		return "get_" + one + "_pdf"
	}
	return string(e.Op.Kind) + "_" + one
}

// parentArg names a sub-resource's parent id argument: invoice_id.
func parentArg(r *resource.Resource) string { return snake(r.Parent.Resource.Singular) + "_id" }

func idSchema(doc string) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "description": doc}
}

func toolFor(e resource.Endpoint) Tool {
	r, op := e.Resource, e.Op
	t := Tool{Name: toolName(e), Endpoint: e}
	in := resource.NewObject("")
	// Path arguments come first: they say which record the call is about.
	for _, seg := range strings.Split(e.Path, "/") {
		if !strings.HasPrefix(seg, ":") {
			continue
		}
		ph := seg[1:]
		arg, of := ph, r
		if ph == "id" && r.Parent != nil {
			arg, of = parentArg(r), r.Parent.Resource
		}
		doc := fmt.Sprintf("the %s's id (%s_...)", of.Singular, of.Prefix)
		in.Add(arg, idSchema(strings.ToUpper(doc[:1])+doc[1:]+"."), true)
		t.params = append(t.params, pathParam{ph, arg, doc})
	}
	var what, use string
	switch op.Kind {
	case resource.List:
		t.ReadOnly, t.Idempotent = true, true
		if r == resource.Me {
			t.Title = "Who am I"
			t.Description = "Show the workspace this bridge acts on (id, name, plan, commerce mode and module) and its API key (name, role, expiry). " +
				"Call it first when unsure what the workspace can do, or to explain why a record type or a write is unavailable."
			t.Schema = in
			return t
		}
		listArgs(in, r)
		if r == resource.Events {
			t.queryNames = eventArgs(in)
		}
		t.Title = "List " + words(r)
		of := ""
		if r.Parent != nil {
			of = " of one " + r.Parent.Resource.Singular
		}
		what = fmt.Sprintf("List the %s%s, newest first, %d per page by default (at most %d). %s",
			words(r), of, resource.DefaultLimit, resource.MaxLimit, r.Doc)
		use = listUse(r)
	case resource.Get:
		t.ReadOnly, t.Idempotent = true, true
		t.Title = "Get " + article(r.Singular)
		if r.Singleton {
			t.Title = "Get the " + r.Singular
			what = op.Summary + " " + r.Doc
			break
		}
		what = fmt.Sprintf("Get one %s by its id (%s_...) with every field", r.Singular, r.Prefix)
		if len(r.Embeds) > 0 {
			var names []string
			for _, em := range r.Embeds {
				names = append(names, em.Name)
			}
			what += " and its " + strings.Join(names, " and ")
		}
		what += ". " + r.Doc
		use = fmt.Sprintf("Use it when you have an id (from list_%s or another record) and need the whole record.", snake(words(r)))
	case resource.Document:
		t.ReadOnly, t.Idempotent = true, true
		t.Title = "Get " + article(r.Singular) + " as a PDF"
		in.Add("lang", map[string]any{"type": "string", "enum": resource.Languages,
			"description": "The document's language: en, fr, ar or bilingual (English and Arabic side by side); omit it for the client's preferred language."}, false)
		what = op.Summary
		use = "Answers the PDF as an embedded resource (application/pdf) to save or attach; " +
			fmt.Sprintf("use get_%s for the record's fields.", snake(r.Singular))
	case resource.Bulk:
		t.Destructive = true
		t.Title = "Bulk upsert " + words(r)
		bulkArg(in, op, fmt.Sprintf("The %s, at most %d per call; split larger batches into several calls.", words(r), op.BulkMax))
		what = op.Summary + fmt.Sprintf(" At most %d per call.", op.BulkMax)
		use = fmt.Sprintf("One bad %s does not fail the others: read the answer for each one's outcome and fix only those that failed.", r.Singular)
	default:
		t.Destructive = op.Kind != resource.Create
		t.Idempotent = op.Kind != resource.Create || hasRequiredID(op.Body)
		t.Title = strings.ToUpper(t.Name[:1]) + strings.ReplaceAll(t.Name[1:], "_", " ")
		what = op.Summary
		if op.BulkKey != "" {
			// The API also takes one element's fields alone; the tool takes
			// the list only, which keeps its schema one plain object.
			bulkArg(in, op, fmt.Sprintf("One or more %ss (at most %d per call); one %s is a list of one.", r.Singular, op.BulkMax, r.Singular))
			what += fmt.Sprintf(" Give them in %s, a list of 1 to %d.", op.BulkKey, op.BulkMax)
		} else {
			for _, f := range offered(op) {
				if in.Has(f.Name) {
					panic(fmt.Sprintf("mcpbridge: %s: body field %q collides with a path argument", t.Name, f.Name))
				}
				in.Add(f.Name, resource.FieldSchema(f, argOptions), f.Required)
			}
		}
		use = writeUse(r, op)
	}
	t.Schema = in
	t.Description = strings.TrimSpace(what + " " + use + conventions(offered(op)))
	return t
}

// bulkArg adds op's list of elements, the required argument op.BulkKey.
func bulkArg(in *resource.ObjectSchema, op resource.Op, doc string) {
	in.Add(op.BulkKey, map[string]any{"type": "array", "minItems": 1, "maxItems": op.BulkMax, "description": doc,
		"items": resource.FieldsSchema("", offered(op), argOptions)}, true)
}

// offered are the body fields a tool offers: an update's all, others' all
// but those declared UpdateOnly (a shipment's status), at every depth.
func offered(op resource.Op) []resource.Field {
	if op.Kind == resource.Update {
		return op.Body
	}
	var keep func([]resource.Field) []resource.Field
	keep = func(fs []resource.Field) []resource.Field {
		out := make([]resource.Field, 0, len(fs))
		for _, f := range fs {
			if f.UpdateOnly {
				continue
			}
			if len(f.Items) > 0 {
				f.Items = keep(f.Items)
			}
			out = append(out, f)
		}
		return out
	}
	return keep(op.Body)
}

func listArgs(in *resource.ObjectSchema, r *resource.Resource) {
	in.Add("limit", map[string]any{"type": "integer", "minimum": 1, "maximum": resource.MaxLimit, "default": resource.DefaultLimit,
		"description": fmt.Sprintf("How many records to return, 1 to %d.", resource.MaxLimit)}, false)
	in.Add("offset", map[string]any{"type": "integer", "minimum": 0, "default": 0,
		"description": "How many records to skip: the next page starts at offset + limit."}, false)
	if len(r.Search) > 0 {
		in.Add("q", map[string]any{"type": "string", "maxLength": resource.MaxQLen,
			"description": "Search text, case-insensitive, matched against " + strings.Join(r.Search, ", ") + "."}, false)
	}
	// The columns are the records' (the data model's), which the bridge
	// does not carry: /v1 refuses another with a 400 that lists them.
	if r != resource.Events && r.Table != "" {
		in.Add("sort", map[string]any{"type": "string", "pattern": `^-?[a-z0-9_]+$`,
			"description": "Order by one field of the records, ascending, or descending with a leading - (-amount_incl_vat_cents); " +
				"ties go by id; default newest first."}, false)
	}
	for _, f := range r.Filters {
		s := map[string]any{"description": f.Doc}
		switch f.Type {
		case resource.Boolean:
			s["type"] = "boolean"
		case resource.Enum:
			s["type"] = "string"
			s["enum"] = f.Values
		case resource.Date:
			s["type"] = "string"
			s["format"] = "date"
			s["pattern"] = `^\d{4}-\d{2}-\d{2}$`
		default:
			s["type"] = "string"
			s["minLength"] = 1
		}
		in.Add(f.Param, s, false)
	}
}

// eventArgs adds GET /v1/events's own parameters, named as identifiers
// (created[gte] is created_gte), and answers the names that differ.
func eventArgs(in *resource.ObjectSchema) map[string]string {
	renamed := map[string]string{}
	for _, p := range resource.EventParams {
		arg := strings.NewReplacer("[", "_", "]", "").Replace(p.Name)
		if arg != p.Name {
			renamed[arg] = p.Name
		}
		s := map[string]any{"type": "string", "minLength": 1, "description": p.Doc}
		if p.Time {
			s["format"] = "date-time"
		}
		in.Add(arg, s, false)
	}
	return renamed
}

func listUse(r *resource.Resource) string {
	if r == resource.Events {
		return `Narrow it with type (invoice.paid, a comma list, or invoice.* for every invoice event) and created_gte / created_lt. ` +
			`Answers {"data": [...], "meta": {"limit", "offset", "total", "has_more"}}. To catch up without gaps or repeats while changes keep coming, ` +
			`keep the newest event id you have and call again with ending_before set to it (the events right after it) until meta.has_more is false; ` +
			`starting_after pages back to older events. Use get_event for one event by id.`
	}
	var b strings.Builder
	if len(r.Filters) > 0 {
		var ps []string
		for _, f := range r.Filters {
			ps = append(ps, f.Param)
		}
		fmt.Fprintf(&b, "Narrow it with the filters (%s), which combine with AND", strings.Join(ps, ", "))
		if len(r.Search) > 0 {
			b.WriteString(" and with q")
		}
		b.WriteString(". ")
	} else if len(r.Search) > 0 {
		fmt.Fprintf(&b, "Find records with q (searches %s). ", strings.Join(r.Search, ", "))
	}
	b.WriteString(`Answers {"data": [...], "meta": {"limit", "offset", "total"}}: total counts every match (no need to page to count); the next page starts at offset + limit.`)
	if _, ok := r.Op(resource.Get); ok {
		fmt.Fprintf(&b, " Use get_%s for one record by id.", snake(r.Singular))
	}
	return b.String()
}

func writeUse(r *resource.Resource, op resource.Op) string {
	switch op.Kind {
	case resource.Update:
		var req []string
		for _, f := range op.Body {
			if f.Required {
				req = append(req, f.Name)
			}
		}
		s := "Send the fields to change; omitted fields keep their value and null clears a nullable one."
		if len(req) > 0 {
			s += " " + strings.Join(req, ", ") + " must be sent even when unchanged."
		}
		return s + fmt.Sprintf(" Returns the updated %s.", r.Singular)
	case resource.Upsert:
		return fmt.Sprintf("Safe to repeat: it returns the %s as stored.", r.Singular)
	}
	if hasRequiredID(op.Body) {
		return fmt.Sprintf("Choose the id yourself and reuse it when retrying: the same id is stored once. Returns the %s.", r.Singular)
	}
	if r.Parent != nil {
		return fmt.Sprintf("Returns what was added to the %s.", r.Parent.Resource.Singular)
	}
	return fmt.Sprintf("Returns the created %s, as get_%s shows it.", r.Singular, snake(r.Singular))
}

// hasRequiredID tells creates whose caller chooses the id (payments): a
// repeat with the same id is not stored again, so they are idempotent.
func hasRequiredID(fs []resource.Field) bool {
	return slices.ContainsFunc(fs, func(f resource.Field) bool { return f.Name == "id" && f.Required })
}

// conventions reminds a model of the units a body uses.
func conventions(fs []resource.Field) string {
	var cents, milli bool
	var walk func([]resource.Field)
	walk = func(fs []resource.Field) {
		for _, f := range fs {
			cents = cents || strings.HasSuffix(f.Name, "_cents")
			milli = milli || strings.HasSuffix(f.Name, "_milli")
			walk(f.Items)
		}
	}
	walk(fs)
	var s string
	if cents {
		s += " Money is an integer in minor units (1250 = 12.50)."
	}
	if milli {
		s += " Quantities are integers in thousandths (qty_milli 2000 = 2)."
	}
	return s
}

// request turns a call's arguments into the endpoint's request: path
// arguments fill the path, the rest is the query (reads) or the body.
func (t Tool) request(args map[string]any) (path string, query url.Values, body map[string]any, err error) {
	rest := make(map[string]any, len(args))
	for k, v := range args {
		rest[k] = v
	}
	path = t.Endpoint.Path
	for _, p := range t.params {
		v, given := rest[p.arg]
		id, ok := v.(string)
		switch {
		case !given || v == nil:
			return "", nil, nil, &argError{p.arg, fmt.Sprintf("%s is required: %s", p.arg, p.doc)}
		case !ok:
			return "", nil, nil, &argError{p.arg, fmt.Sprintf("%s must be a string: %s", p.arg, p.doc)}
		case strings.TrimSpace(id) == "":
			return "", nil, nil, &argError{p.arg, fmt.Sprintf("%s must not be empty: %s", p.arg, p.doc)}
		}
		delete(rest, p.arg)
		path = strings.Replace(path, ":"+p.placeholder, url.PathEscape(id), 1)
	}
	if t.Endpoint.Method != "GET" {
		return path, nil, rest, nil
	}
	query = url.Values{}
	for k, v := range rest {
		if name, ok := t.queryNames[k]; ok {
			k = name
		}
		switch x := v.(type) {
		case string:
			query.Set(k, x)
		case bool:
			query.Set(k, strconv.FormatBool(x))
		case float64:
			query.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
		case json.Number:
			query.Set(k, x.String())
		case nil:
		default:
			return "", nil, nil, &argError{k, fmt.Sprintf("%s must be a string, number or boolean", k)}
		}
	}
	return path, query, nil, nil
}

// argOptions leave out the API's default length bounds: a safety net no
// real value reaches is not worth a model's context.
var argOptions = resource.SchemaOptions{}
