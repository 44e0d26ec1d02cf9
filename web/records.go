package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// browsable lists the resources with their own list page (sub-resources
// appear on their parent's).
func browsable() []*resource.Resource {
	var out []*resource.Resource
	for _, r := range resource.All {
		if _, ok := r.Op(resource.List); ok && r.Table != "" && r.Parent == nil {
			out = append(out, r)
		}
	}
	return out
}

func browsableByName(name string) *resource.Resource {
	for _, r := range browsable() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// children are the sub-resources listed on a record's page (an invoice's payments).
func children(r *resource.Resource) []*resource.Resource {
	var out []*resource.Resource
	for _, c := range resource.All {
		if _, ok := c.Op(resource.List); ok && c.Parent != nil && c.Parent.Resource == r {
			out = append(out, c)
		}
	}
	return out
}

// navGroup is a heading of the sidebar's record links.
type navGroup struct {
	Title     string
	Resources []*resource.Resource
}

var toolsetTitles = map[string]string{"sales": "Sales", "commerce": "Commerce", "purchasing": "Purchasing", "catalog": "Catalog"}

func navGroups() []navGroup {
	var out []navGroup
	for _, ts := range []string{"sales", "purchasing", "catalog", "commerce"} {
		g := navGroup{Title: toolsetTitles[ts]}
		for _, r := range browsable() {
			if r.Toolset == ts {
				g.Resources = append(g.Resources, r)
			}
		}
		out = append(out, g)
	}
	return out
}

func recordsWorkspace(ws *ent.Workspace) records.Workspace {
	return records.Workspace{ID: ws.ID, Commerce: access.WorkspaceOf(ws).Commerce()}
}

// field is one field of a record, in the order the API writes it.
type field struct {
	Name  string
	Value any
}

type record []field

func (r record) get(name string) any {
	for _, f := range r {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// decodeRecord reads a JSON object keeping its key order, nested objects
// included (they become records too).
func decodeRecord(b []byte) (record, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	r, ok := v.(record)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return r, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		r := record{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			r = append(r, field{Name: k.(string), Value: v})
		}
		_, err := dec.Token()
		return r, err
	case json.Delim('['):
		xs := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			xs = append(xs, v)
		}
		_, err := dec.Token()
		return xs, err
	}
	return t, nil
}

type listEnvelope struct {
	Data []json.RawMessage `json:"data"`
	Meta struct{ Limit, Offset, Total int }
}

// list reads a page of r's records as GET /v1/{resource} answers it.
func (u *UI) list(ctx context.Context, ws *ent.Workspace, r *resource.Resource, pg records.Page) (listEnvelope, []record, error) {
	b, err := u.core.Records.List(ctx, r, recordsWorkspace(ws), pg)
	if err != nil {
		return listEnvelope{}, nil, err
	}
	return decodeList(b)
}

func decodeList(b []byte) (listEnvelope, []record, error) {
	var env listEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		return env, nil, err
	}
	recs := make([]record, 0, len(env.Data))
	for _, raw := range env.Data {
		r, err := decodeRecord(raw)
		if err != nil {
			return env, nil, err
		}
		recs = append(recs, r)
	}
	return env, recs, nil
}

// listColumns picks a list page's columns from the declaration: what
// people call the record by (labelColumn, the row's link), the id, what
// `q` searches, the enum filters, one amount and the creation time.
func listColumns(r *resource.Resource) []string {
	have := map[string]bool{}
	for _, c := range records.Columns(r) {
		have[c.Name] = true
	}
	cols := []string{"id"}
	if l := labelColumn(r); l != "" {
		cols = []string{l, "id"}
	}
	add := func(n string) bool {
		if have[n] && !slices.Contains(cols, n) {
			cols = append(cols, n)
			return true
		}
		return false
	}
	for i, n := range r.Search {
		if i < 2 {
			add(n)
		}
	}
	for _, f := range r.Filters {
		if f.Type == resource.Enum || f.Type == resource.Date {
			add(f.Column)
		}
	}
	for _, n := range []string{"amount_incl_vat_cents", "balance_cents", "unit_price_cents", "amount_cents", "total_cents"} {
		if add(n) {
			break
		}
	}
	add("remaining_cents") // what is still owed, beside the total
	add("created_at")
	return cols
}

type filterInput struct {
	Filter resource.Filter
	Value  string
}

type listData struct {
	page
	R       *resource.Resource
	Gate    string // why the workspace cannot reach the resource, if it cannot
	Q       string
	Filters []filterInput
	Limit   int
	Cols    []string
	Rows    []record
	Total   int
	Offset  int
	PrevURL string
	NextURL string
	// Heads are the columns' headers, each a link that sorts by it.
	Heads []sortHead
	Sort  string // the list's sort parameter as sent ("" newest first)
	// Pages are the page links: first, a few around this one, last.
	Pages             []pageLink
	PageNo, PageCount int
	FirstURL, LastURL string
	ExportURL         string // the list as CSV, as filtered, searched and sorted
	// Send offers "Send selected": the resource's records have a send.
	Send    bool
	Base    string // the list's address without a query
	Problem string // why the query was refused (the API's 400 message)
	NewURL  string // the New form, when the resource declares a create
	// Label is the column people call a record by (labelColumn): each
	// row's link, the id's only where a row has none.
	Label string
	// Names are the names of the records the shown cells' ids point to.
	Names map[string]string
}

// cell is one cell of a list: the row's number or name links to its page
// (its id in the link's title), other records' ids show their names.
func (d listData) cell(rec record, col string) shown {
	id, _ := rec.get("id").(string)
	link := d.Base + "/" + url.PathEscape(id)
	name := nameOf(d.R, rec)
	switch {
	case col == d.Label && name != "":
		return shown{Text: name, Href: link, Title: id}
	case col == "id" && name == "":
		return shown{Text: id, Href: link, Class: "mono"}
	case col == "id":
		return shown{Text: id, Class: "mono muted"}
	}
	v := show(d.WS, col, rec.get(col), rec)
	// A name the row keeps beside an id (client_name, client_id) links to that record.
	if base, ok := strings.CutSuffix(col, "_name"); ok && v.Href == "" && v.Class == "" {
		if ref, _ := rec.get(base + "_id").(string); ref != "" {
			if to := byIDPrefix(ref); to != nil {
				v.Href, v.Title = wsURL(d.WS, "records", to.Name, url.PathEscape(ref)), ref
			}
		}
	}
	return named(v, d.Names)
}

// cellIDs are the ids of other records the list's cells show, for namesOf.
func (d listData) cellIDs() []string {
	var ids []string
	for _, rec := range d.Rows {
		for _, col := range d.Cols {
			if col != "id" && col != d.Label {
				ids = idsIn(rec.get(col), ids)
			}
		}
	}
	return ids
}

func (u *UI) recordList(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil {
		return u.notFound(c)
	}
	if c.Query("format") == "csv" {
		return u.exportList(c, r)
	}
	d := listData{page: u.pageOf(c, displayName(r), "rec:"+r.Name), R: r, Limit: api.DefaultLimit, Base: wsURL(ws, "records", r.Name)}
	if err := access.GatePlan(access.WorkspaceOf(ws), r); err != nil {
		d.Gate = gateMessage(err)
		return render(c, http.StatusForbidden, recordListView(d))
	}
	if hasOp(r, resource.Create) {
		d.NewURL = d.Base + "/new"
	}
	if c.Query("done") == "deleted" {
		d.Notice = "The " + r.Singular + " is deleted."
		c.Context().QueryArgs().Del("done")
	}
	pg, err := listPage(c, r)
	d.Q = c.Query("q")
	q := url.Values{}
	for k, v := range c.Queries() {
		q.Set(k, v)
	}
	d.Cols = listColumns(r)
	d.Heads, d.Sort = sortHeads(d.Base, q, d.Cols, pg.Sort), c.Query("sort")
	for _, f := range r.Filters {
		d.Filters = append(d.Filters, filterInput{Filter: f, Value: c.Query(f.Param)})
	}
	if err != nil {
		d.Problem = gateMessage(err)
		return render(c, http.StatusBadRequest, recordListView(d))
	}
	d.Limit = pg.Limit
	env, recs, err := u.list(c.UserContext(), ws, r, pg)
	if err != nil {
		return u.internal(c, err)
	}
	d.Rows, d.Total, d.Offset = recs, env.Meta.Total, env.Meta.Offset
	d.Label = labelColumn(r)
	// One read per resource the page's ids point to, never one per row.
	if d.Names, err = u.namesOf(c.UserContext(), ws, d.cellIDs()); err != nil {
		return u.internal(c, err)
	}
	d.pages(q, pg)
	exp := url.Values{"format": {"csv"}}
	for k, v := range q {
		if k != "limit" && k != "offset" {
			exp[k] = v
		}
	}
	d.ExportURL = d.Base + "?" + exp.Encode()
	d.Send = sendRoute(ws, r)
	return render(c, http.StatusOK, recordListView(d))
}

// listPage reads a list page's query as /v1 reads it (api.ParseList); a
// blank form field means "any", as when an API caller leaves the
// parameter out.
func listPage(c *fiber.Ctx, r *resource.Resource) (records.Page, error) {
	args := c.Context().QueryArgs()
	var blank []string
	args.VisitAll(func(k, v []byte) {
		if len(bytes.TrimSpace(v)) == 0 {
			blank = append(blank, string(k))
		}
	})
	for _, k := range blank {
		args.Del(k)
	}
	l, err := api.ParseList(args.VisitAll, r)
	return l.Page, err
}

// gateMessage is the API's own explanation of a refusal.
func gateMessage(err error) string {
	if e, ok := apierr.As(err); ok {
		return capitalize(e.Message) + "."
	}
	return "This request cannot be served."
}

// subTable is a list inside a record's page: embedded children, JSON
// arrays (a gift card's ledger) and sub-resources (an invoice's payments).
type subTable struct {
	Title    string
	Note     string
	Cols     []string
	Rows     []record
	Timeline bool // tracking events read best as a timeline
	// Edit is where a row's edit form lives, its id appended ("" for none).
	Edit string
}

type detailData struct {
	page
	R  *resource.Resource
	ID string
	// Name is what people call the record (its number or name), "" for none.
	Name   string
	Fields []field // scalar and small values, shown as a list
	Tables []subTable
	Gate   string
	// EditURL and Actions are the writes the record's state allows.
	EditURL string
	Actions []recordAction
	// Doc lays a document (invoice, order...) out like the paper one.
	Doc *docView
	// Files are its PDF and print view, for the records that make a document.
	Files *docFiles
	// Names are the names of the records the page's ids point to.
	Names map[string]string
	// Emails are a document's messages in the outbox (nil: it sends none).
	Emails *emailsView
}

func (u *UI) recordDetail(c *fiber.Ctx) error {
	r := browsableByName(c.Params("res"))
	if r == nil {
		return u.notFound(c)
	}
	if secret := u.takeFlash(c); secret != "" {
		return u.showSecret(c, r, c.Params("id"), secret)
	}
	return u.showRecord(c, r, c.Params("id"), http.StatusOK, "")
}

// showRecord renders a record's page with a status and, after a refused
// action, its message.
func (u *UI) showRecord(c *fiber.Ctx, r *resource.Resource, id string, status int, problem string) error {
	ws := workspaceOf(c)
	if _, ok := r.Op(resource.Get); !ok {
		return u.notFound(c)
	}
	d := detailData{page: u.pageOf(c, humanize(r.Singular)+" "+id, "rec:"+r.Name), R: r, ID: id}
	d.Error = problem
	if err := access.GatePlan(access.WorkspaceOf(ws), r); err != nil {
		d.Gate = gateMessage(err)
		return render(c, http.StatusForbidden, recordDetailView(d))
	}
	ctx := c.UserContext()
	rec, err := u.found(c, r, id)
	if rec == nil {
		return err
	}
	d.Name, d.Title = nameOf(r, rec), recordTitle(r, rec, id)
	if problem == "" {
		d.Notice = doneNotice(r, c.Query("done"), rec)
	}
	if d.Actions, err = u.offered(c, r, actionsOf(ws, r, id, rec), id, rec); err != nil {
		return u.internal(c, err)
	}
	if edit, ok := r.Op(resource.Update); ok && writable(ws, r) && editable(edit, rec) {
		d.EditURL = wsURL(ws, "records", r.Name, url.PathEscape(id), "edit")
	}
	for _, f := range rec {
		if rows, ok := objectRows(f.Value); ok {
			d.Tables = append(d.Tables, subTable{Title: humanize(f.Name), Cols: columnsOf(rows, id), Rows: rows, Timeline: f.Name == "events"})
			continue
		}
		d.Fields = append(d.Fields, f)
	}
	for _, sub := range children(r) {
		if access.GatePlan(access.WorkspaceOf(ws), sub) != nil {
			continue
		}
		env, rows, err := u.list(ctx, ws, sub, records.Page{Limit: api.MaxLimit, ParentID: id})
		if err != nil {
			return u.internal(c, err)
		}
		t := subTable{Title: humanize(sub.Parent.Segment), Rows: rows, Cols: columnsOf(rows, id)}
		if hasOp(sub, resource.Update) && writable(ws, sub) {
			t.Edit = wsURL(ws, "records", r.Name, url.PathEscape(id), "sub", sub.Name) + "/"
		}
		if env.Meta.Total > len(rows) {
			t.Note = "The newest " + strconv.Itoa(len(rows)) + " of " + strconv.Itoa(env.Meta.Total) + "; GET " +
				"/v1/" + r.Name + "/" + id + "/" + sub.Parent.Segment + " pages through all of them."
		}
		d.Tables = append(d.Tables, t)
	}
	d.Files = filesOf(ws, r, id)
	if d.Doc, err = u.documentOf(ctx, ws, r, rec, d.Tables); err != nil {
		return u.internal(c, err)
	}
	if d.Emails, err = u.emailsOf(c, r, id); err != nil {
		return u.internal(c, err)
	}
	ids := idsIn(rec, nil)
	for _, t := range d.Tables {
		for _, row := range t.Rows {
			ids = idsIn(row, ids)
		}
	}
	if d.Doc != nil {
		for _, cr := range d.Doc.Credits {
			ids = idsIn(cr, ids)
		}
	}
	if d.Names, err = u.namesOf(ctx, ws, ids); err != nil {
		return u.internal(c, err)
	}
	return render(c, status, recordDetailView(d))
}

// editable is whether the declared edit may run on rec in its state (its
// From, as /v1 checks it): a void invoice offers no Edit.
func editable(edit resource.Op, rec record) bool {
	st := textOf(rec.get("status"))
	return st == "" && len(edit.From) == 0 || st != "" && edit.Allowed(st)
}

// objectRows reads a JSON array of objects (an empty array counts).
func objectRows(v any) ([]record, bool) {
	xs, ok := v.([]any)
	if !ok {
		return nil, false
	}
	rows := make([]record, 0, len(xs))
	for _, x := range xs {
		r, ok := x.(record)
		if !ok {
			return nil, false
		}
		rows = append(rows, r)
	}
	return rows, true
}

// columnsOf are the rows' fields that say something: not the workspace,
// the link to the page's record, or a field empty in every row.
func columnsOf(rows []record, parentID string) []string {
	var cols []string
	for _, r := range rows {
		for _, f := range r {
			if !slices.Contains(cols, f.Name) && f.Name != "workspace_id" {
				cols = append(cols, f.Name)
			}
		}
	}
	return slices.DeleteFunc(cols, func(col string) bool {
		for _, r := range rows {
			if v := r.get(col); v != nil && v != "" && v != parentID {
				return false
			}
		}
		return true
	})
}

func displayName(r *resource.Resource) string { return humanize(r.Name) }

// gateNote says why the sidebar's link leads to a refusal, if it does.
func gateNote(p page, r *resource.Resource) string {
	if m := missing(p.WS, r); m != "" {
		return "Needs " + m
	}
	return ""
}

// missing names what the workspace lacks to reach r ("" when nothing):
// "the business plan", "commerce mode and the commerce module".
func missing(ws *ent.Workspace, r *resource.Resource) string {
	w := access.WorkspaceOf(ws)
	var parts []string
	if w.Plan < r.Plan {
		parts = append(parts, "the "+r.Plan.String()+" plan")
	}
	if r.Needs&resource.CommerceMode != 0 && !w.CommerceMode {
		parts = append(parts, "commerce mode")
	}
	if r.Needs&resource.CommerceModule != 0 && !w.CommerceModule {
		parts = append(parts, "the commerce module")
	}
	return strings.Join(parts, " and ")
}

// requirement is everything r needs, for the role matrix: "business plan, commerce mode".
func requirement(r *resource.Resource) string {
	s := r.Plan.String() + " plan"
	if r.Needs&resource.CommerceMode != 0 {
		s += ", commerce mode"
	}
	if r.Needs&resource.CommerceModule != 0 {
		s += ", commerce module"
	}
	return s
}

func searchHint(r *resource.Resource) string {
	if len(r.Search) == 0 {
		return ""
	}
	return strings.ReplaceAll(strings.Join(r.Search, ", "), "_", " ")
}

func humanizeLower(s string) string { return strings.ToLower(humanize(s)) }

func filtered(d listData) bool {
	for _, f := range d.Filters {
		if f.Value != "" {
			return true
		}
	}
	return false
}

// listDoc is what the list page says of r: its declared description, and
// whether it is read-only as its operations say (returns and gift cards
// are read-only over /v1, yet written here).
func listDoc(r *resource.Resource) string {
	doc := strings.TrimSpace(strings.TrimSuffix(r.Doc, " Read-only."))
	var api, admin bool
	for _, op := range r.Ops {
		switch op.Kind {
		case resource.List, resource.Get, resource.Document:
		default:
			admin = true
			api = api || !op.AdminOnly
		}
	}
	switch {
	case !admin:
		doc += " Read-only."
	case !api:
		doc += " Read-only over /v1; created and changed here."
	}
	return doc
}

func rangeText(d listData) string {
	return strconv.Itoa(d.Offset+1) + "–" + strconv.Itoa(d.Offset+len(d.Rows)) + " of " + strconv.Itoa(d.Total)
}

// anyOf names a filter's several values: "Sent, partially paid or overdue".
func anyOf(values string) string {
	vs := strings.Split(values, ",")
	for i, v := range vs {
		vs[i] = strings.ToLower(humanize(v))
	}
	s := strings.Join(vs[:len(vs)-1], ", ")
	if s != "" {
		s += " or "
	}
	return capitalize(s + vs[len(vs)-1])
}

func textOf(v any) string {
	s, _ := v.(string)
	return s
}

// withCurrency lets a child row without its own currency (a ledger entry,
// a line) show amounts in its parent's.
func withCurrency(row, parent record) record {
	if row.get("currency_code") != nil {
		return row
	}
	if cur := parent.get("currency_code"); cur != nil {
		return append(row[:len(row):len(row)], field{Name: "currency_code", Value: cur})
	}
	return row
}

// sortHead is one column's header: a link that sorts the list by it,
// ascending first, descending when it already is ascending.
type sortHead struct {
	Col, Href string
	// Sort is the column's aria-sort: "ascending", "descending" or "".
	Sort string
}

// sortHeads are the headers of cols on the list at base with query q.
func sortHeads(base string, q url.Values, cols []string, cur records.Sort) []sortHead {
	out := make([]sortHead, 0, len(cols))
	for _, col := range cols {
		h := sortHead{Col: col}
		next := col
		if cur.Column == col {
			h.Sort = "ascending"
			if cur.Desc {
				h.Sort = "descending"
			} else {
				next = "-" + col
			}
		}
		v := url.Values{}
		for k, vs := range q {
			if k != "offset" && k != "sort" {
				v[k] = vs
			}
		}
		v.Set("sort", next)
		h.Href = base + "?" + v.Encode()
		out = append(out, h)
	}
	return out
}

// sortOption is one choice of the list's "Sort by".
type sortOption struct{ Value, Label string }

// sortOptions are newest first, then each shown column ascending and
// descending, and the list's own sort when it is by another column (a
// link from elsewhere), so the choice shown is the order shown.
func sortOptions(d listData) []sortOption {
	out := []sortOption{{"", "Newest first"}}
	for _, h := range d.Heads {
		out = append(out, sortOption{h.Col, label(h.Col) + " ↑"}, sortOption{"-" + h.Col, label(h.Col) + " ↓"})
	}
	if !slices.ContainsFunc(out, func(o sortOption) bool { return o.Value == d.Sort }) {
		col, desc := strings.CutPrefix(d.Sort, "-")
		out = append(out, sortOption{d.Sort, label(col) + map[bool]string{false: " ↑", true: " ↓"}[desc]})
	}
	return out
}

// pageLink is a numbered link of the pager; N 0 is a gap (…).
type pageLink struct {
	N       int
	Href    string
	Current bool
}

// pages fills the pager: page n of m, first, previous, next and last, and
// the numbers two either side of this page.
func (d *listData) pages(q url.Values, pg records.Page) {
	limit := max(pg.Limit, 1)
	pageURL := func(offset int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("offset", strconv.Itoa(offset))
		return d.Base + "?" + v.Encode()
	}
	d.PageNo, d.PageCount = pg.Offset/limit+1, max((d.Total+limit-1)/limit, 1)
	if pg.Offset > 0 {
		d.PrevURL, d.FirstURL = pageURL(max(0, pg.Offset-limit)), pageURL(0)
	}
	if pg.Offset+limit < d.Total {
		d.NextURL, d.LastURL = pageURL(pg.Offset+limit), pageURL((d.PageCount-1)*limit)
	}
	for n := 1; n <= d.PageCount; n++ {
		near := n == 1 || n == d.PageCount || n >= d.PageNo-2 && n <= d.PageNo+2
		switch {
		case near:
			d.Pages = append(d.Pages, pageLink{N: n, Href: pageURL((n - 1) * limit), Current: n == d.PageNo})
		case len(d.Pages) > 0 && d.Pages[len(d.Pages)-1].N != 0:
			d.Pages = append(d.Pages, pageLink{})
		case n < d.PageNo:
			n = d.PageNo - 3 // past the gap
		default:
			n = d.PageCount - 1
		}
	}
}

// pickName is what a row's checkbox is called: the record's number or name, else its id.
func pickName(d listData, rec record) string {
	if n := nameOf(d.R, rec); n != "" {
		return n
	}
	return textOf(rec.get("id"))
}
