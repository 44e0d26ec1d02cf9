// Package resource declares every /v1 resource once; routing, gating,
// lists, validation, the OpenAPI document and the MCP tools derive from it.
package resource

import "slices"

// Plan is a workspace plan; higher plans reach everything lower ones do.
type Plan int

const (
	Starter Plan = iota
	Growth
	Business
)

var planNames = [...]string{"starter", "growth", "business"}

func (p Plan) String() string { return planNames[p] }

// ParsePlan maps a plan name to its Plan.
func ParsePlan(s string) (Plan, bool) { return parseName[Plan](planNames[:], s) }

// parseName is the value whose name names[value] is s.
func parseName[T ~int](names []string, s string) (T, bool) {
	i := slices.Index(names, s)
	return T(max(i, 0)), i >= 0
}

// PlanNames lists the plans, lowest first.
func PlanNames() []string { return planNames[:] }

// Needs are the commerce conditions beyond the plan (spec section 1).
type Needs uint8

const (
	CommerceMode Needs = 1 << iota
	CommerceModule
)

// Access is what a role may do with a resource.
type Access int

const (
	None Access = iota
	Read
	Write
)

var accessNames = [...]string{"none", "read", "write"}

func (a Access) String() string { return accessNames[a] }

// ParseAccess maps "none", "read" or "write" to an Access.
func ParseAccess(s string) (Access, bool) { return parseName[Access](accessNames[:], s) }

// OpKind names what an operation does; api/writes binds each kind to its
// implementation.
type OpKind string

const (
	List   OpKind = "list"
	Get    OpKind = "get"
	Create OpKind = "create"
	Update OpKind = "update"
	Upsert OpKind = "upsert" // POST {path}/upsert
	Bulk   OpKind = "bulk"   // POST {path}/bulk
	Delete OpKind = "delete" // DELETE {path}/{id}
	Action OpKind = "action" // POST {path}/{id}/{Name}: moves a document along its states
	// Document is GET {path}/{id}/pdf: the record as the PDF a business
	// sends, read as Get is (same gate), in the language its lang parameter
	// names (one of Languages).
	Document OpKind = "pdf"
)

// Op is one endpoint of a resource.
type Op struct {
	Kind OpKind
	// Body is the request body's fields for writes.
	Body []Field
	// BulkKey names the array of a bulk body ("products") and BulkMax its size.
	BulkKey string
	BulkMax int
	// Summary says in one line what the endpoint does (OpenAPI, MCP).
	Summary string
	// Name is an Action's verb and path segment: "send" is POST /v1/invoices/{id}/send.
	Name string
	// From lists the states the operation is allowed from (empty: any): a
	// sub-resource create's are its parent's, or those of the record the
	// body field FromOf names (a shipment's sales_order_id).
	From   []string
	FromOf string
	// To is the state an Action moves the record to ("" when the
	// operation decides: an adjustment may deplete a gift card or not).
	To string
	// AdminOnly keeps the operation off /v1, OpenAPI and MCP: only the
	// admin UI runs it.
	AdminOnly bool
	// Makes lists the other resources whose records the operation creates
	// (a refund's online payment): each tells of it as <object>.created.
	Makes []*Resource
	// Secret names what the operation shows its caller once and keeps
	// nowhere readable (a gift card's "code").
	Secret string
	// Touches lists the other resources whose records the operation
	// changes (a shipment's order), each with its own event.
	Touches []*Resource
	// Emails makes an Action email the document's PDF to its client: its
	// body is EmailBody, its rule puts the message in the outbox, and
	// the outbox tells of each attempt (email.sent, email.failed).
	Emails bool
	// MaxBody lets the operation's body exceed the server's body limit, up
	// to this many bytes (a logo as a data URL); 0: the server's limit.
	MaxBody int
}

// Allowed reports whether the operation may run on a record in state.
func (o Op) Allowed(state string) bool { return len(o.From) == 0 || slices.Contains(o.From, state) }

// Filter is a named list filter (spec section 4).
type Filter struct {
	Param  string
	Column string
	Type   Type     // String, Boolean, Enum or Date
	Values []string // for Enum; a list takes several, comma-separated (status=sent,overdue)
	// Bound makes a Date filter one end of a range: ">=" (from) or "<="
	// (to), both inclusive; empty is equality.
	Bound string
	Doc   string
}

// Embed is a child table shown inside each record (order lines, events).
type Embed struct {
	Name    string // JSON key
	Table   string
	FK      string // column of the child pointing at the parent id
	OrderBy string // column order of the embedded list
	// Via joins through a many-to-many table: Via.FK holds the parent id and
	// Via.Ref the child's id (a product's categories).
	Via *Via
	// Columns limits the child's columns shown (all but hidden ones when empty).
	Columns []string
	// Commerce embeds appear only where commerce columns do (items that are products).
	Commerce bool
}

// Via is the join table of a many-to-many embed.
type Via struct{ Table, FK, Ref string }

// Parent makes a resource a sub-resource: /v1/{parent}/{id}/{path}.
type Parent struct {
	Resource *Resource
	FK       string // column holding the parent's id
	Segment  string // URL segment under the parent: "addresses"
	IDParam  string // name of the child's id in update paths: "address_id"
}

// Resource is one /v1 resource.
type Resource struct {
	Name     string // plural, as in the URL and in role grants: "credit-notes"
	Singular string // "credit note"
	Table    string
	Prefix   string
	Plan     Plan
	Needs    Needs
	// Grant is the resource whose permission governs this one (sub-resources
	// follow their parent: addresses are governed by "clients").
	Grant string
	// Toolset groups resources for the MCP bridge: sales, commerce, purchasing, catalog (events: the event log).
	Toolset string
	Doc     string
	Parent  *Parent
	Search  []string // columns `q` searches
	// SearchFew is the column of Search whose values repeat across records
	// (a client's name on invoices): `q` matches it by value (database.Find).
	SearchFew []string
	Filters   []Filter
	Embeds    []Embed
	// Scope is a fixed SQL condition on the table (products: is_product; promotions: not archived).
	Scope string
	// Clock lists the states the clock moves records to (invoices: overdue).
	Clock []string
	// Hidden columns never leave the server.
	Hidden []string
	// CommerceColumns appear on item reads only where the CommerceFlag column
	// is true (the item is a product) and the workspace has commerce on.
	CommerceColumns []string
	CommerceFlag    string
	// Computed fields are derived from the row's columns on every read.
	Computed []Computed
	Ops      []Op

	// Plural names the records when Name does not ("online payments"); MCP
	// tools are named by it.
	Plural string
	// Singleton is one record per workspace at /v1/{Name}, with no id (the
	// company profile): every key reads it, only the admin role writes it,
	// and no role grants it.
	Singleton bool
}

// Computed is a read-only field derived from a row, e.g. a store's primary_url.
type Computed struct {
	Name string
	Doc  string
	// Shape is the JSON type of the value (for the OpenAPI document).
	Shape Field
	Value func(col func(name string) any) any
}

// Action returns the resource's action named name.
func (r *Resource) Action(name string) (Op, bool) {
	for _, o := range r.Ops {
		if o.Kind == Action && o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}

// Op returns the resource's operation of the given kind (for Action, the first).
func (r *Resource) Op(k OpKind) (Op, bool) {
	for _, o := range r.Ops {
		if o.Kind == k {
			return o, true
		}
	}
	return Op{}, false
}

// ReadOnly reports whether the resource offers no writes over /v1 (the
// admin UI may still write it through AdminOnly operations).
func (r *Resource) ReadOnly() bool {
	for _, o := range r.Ops {
		if o.Kind != List && o.Kind != Get && o.Kind != Document && !o.AdminOnly {
			return false
		}
	}
	return true
}

// PermissionName is the grant that governs the resource.
func (r *Resource) PermissionName() string {
	if r.Grant != "" {
		return r.Grant
	}
	return r.Name
}

// Gate describes what a workspace must have to reach the resource, for
// messages and docs: "the growth plan", "commerce mode".
func (r *Resource) Gate() string {
	s := "the " + r.Plan.String() + " plan"
	if r.Needs&CommerceMode != 0 {
		s += " and commerce mode"
	}
	if r.Needs&CommerceModule != 0 {
		s += " and the commerce module"
	}
	return s
}
