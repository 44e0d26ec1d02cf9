package records

import (
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/schema/field"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/migrate"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

type column struct {
	name     string
	buf      int  // its scan buffer (bufOf)
	hidden   bool // selected for computed fields or flags, never shown
	commerce bool // shown only on products of a commerce workspace
}

type plan struct {
	r       *resource.Resource
	cols    []column
	selects string // "t.a, t.b"
	// where keeps the rows of one workspace (and parent, for
	// sub-resources) in Scope; args gives its arguments.
	where  string
	getSQL string // one record by id (and parent, for sub-resources)
	// anySQL is getSQL without the resource's Scope: the answer of a write
	// that moved a record out of it (an archived promotion).
	anySQL   string
	search   shortcut.Search
	embeds   []*embedPlan
	flag     int // index of the commerce flag column, or -1
	colIndex map[string]int
	nullable map[string]bool // the shown columns that may hold NULL (orderBy)
	// cacheable plans render from their own row alone (cache.go): selects
	// then ends with the version column, and keys selects id and version.
	cacheable         bool
	commerceSensitive bool
	keys              string
	versionSQL        string // id and version of one record
}

// version is the column a cached rendering is checked against, as text on
// both databases.
const version = "CAST(t.updated_at AS TEXT)"

// dests allocates the scan buffers of one full row.
func (p *plan) dests() []any {
	d := newDests(p.cols)
	if p.cacheable {
		d = append(d, new(string))
	}
	return d
}

// versionOf is the version a full row was read at.
func (p *plan) versionOf(d []any) string { return *d[len(d)-1].(*string) }

type embedPlan struct {
	e    resource.Embed
	cols []column
	sql  string // takes the parent ids as IN (...) arguments, appended per call
}

func table(name string) *schema.Table {
	for _, t := range migrate.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Columns lists the columns a resource's records show, with their kinds as
// JSON types, for documents derived from the declarations (OpenAPI).
func Columns(r *resource.Resource) []ColumnInfo {
	var out []ColumnInfo
	for _, c := range shown(table(r.Table), nil) {
		if !slices.Contains(r.Hidden, c.Name) {
			out = append(out, ColumnInfo{Name: c.Name, Type: c.Type, Nullable: c.Nullable, Enums: c.Enums,
				Commerce: slices.Contains(r.CommerceColumns, c.Name)})
		}
	}
	return out
}

// EmbedColumns lists the columns each element of an embed shows.
func EmbedColumns(e resource.Embed) []ColumnInfo {
	var out []ColumnInfo
	for _, c := range shown(table(e.Table), e.Columns) {
		out = append(out, ColumnInfo{Name: c.Name, Type: c.Type, Nullable: c.Nullable, Enums: c.Enums})
	}
	return out
}

// ColumnInfo describes one shown column.
type ColumnInfo struct {
	Name     string
	Type     field.Type
	Nullable bool
	Enums    []string
	Commerce bool
}

// shown are the columns of t that records may show: those named in only
// (all when it is empty), never the workspace or binary columns.
func shown(t *schema.Table, only []string) []*schema.Column {
	if t == nil {
		return nil
	}
	var out []*schema.Column
	for _, c := range t.Columns {
		if c.Type != field.TypeBytes && c.Name != "workspace_id" && (len(only) == 0 || slices.Contains(only, c.Name)) {
			out = append(out, c)
		}
	}
	return out
}

func compile(db *database.DB, r *resource.Resource) (*plan, error) {
	t := table(r.Table)
	if t == nil {
		return nil, fmt.Errorf("records: resource %s: no table %q", r.Name, r.Table)
	}
	p := &plan{r: r, flag: -1, colIndex: map[string]int{}, nullable: map[string]bool{}, where: "t.workspace_id = ?"}
	if r.Scope != "" {
		p.where += " AND t." + r.Scope
	}
	if r.Parent != nil {
		p.where += " AND t." + r.Parent.FK + " = ?"
	}
	var names []string
	for _, c := range shown(t, nil) {
		p.nullable[c.Name] = c.Nullable
		col := column{name: c.Name, buf: bufOf(c.Type), hidden: slices.Contains(r.Hidden, c.Name),
			commerce: slices.Contains(r.CommerceColumns, c.Name)}
		// Hidden columns are still read when a computed field or the commerce flag needs them.
		if col.hidden && c.Name != r.CommerceFlag && len(r.Computed) == 0 {
			continue
		}
		if c.Name == r.CommerceFlag {
			p.flag = len(p.cols)
		}
		p.colIndex[c.Name] = len(p.cols)
		p.cols = append(p.cols, col)
		names = append(names, "t."+c.Name)
		p.commerceSensitive = p.commerceSensitive || col.commerce
	}
	p.selects = strings.Join(names, ", ")
	_, hasVersion := p.colIndex["updated_at"]
	p.cacheable = len(r.Embeds) == 0 && hasVersion
	if p.cacheable {
		p.selects += ", " + version
		p.keys = "t.id, " + version
		p.versionSQL = db.Rebind("SELECT " + p.keys + " FROM " + r.Table + " t WHERE " + p.where + " AND t.id = ?")
	}
	p.getSQL = db.Rebind("SELECT " + p.selects + " FROM " + r.Table + " t WHERE " + p.where + " AND t.id = ?")
	p.anySQL = p.getSQL
	if r.Scope != "" && r.Parent == nil {
		p.anySQL = db.Rebind("SELECT " + p.selects + " FROM " + r.Table + " t WHERE t.workspace_id = ? AND t.id = ?")
	}
	for _, e := range r.Embeds {
		ct := table(e.Table)
		if ct == nil {
			return nil, fmt.Errorf("records: embed %s of %s: no table %q", e.Name, r.Name, e.Table)
		}
		ep := &embedPlan{e: e}
		var sel []string
		for _, c := range shown(ct, e.Columns) {
			ep.cols = append(ep.cols, column{name: c.Name, buf: bufOf(c.Type)})
			sel = append(sel, "c."+c.Name)
		}
		if e.Via != nil {
			ep.sql = fmt.Sprintf("SELECT v.%s, %s FROM %s v JOIN %s c ON c.id = v.%s WHERE v.%s IN (%%s) ORDER BY v.%s, c.%s",
				e.Via.FK, strings.Join(sel, ", "), e.Via.Table, e.Table, e.Via.Ref, e.Via.FK, e.Via.FK, e.OrderBy)
		} else {
			ep.sql = fmt.Sprintf("SELECT c.%s, %s FROM %s c WHERE c.%s IN (%%s) ORDER BY c.%s, c.%s, c.id",
				e.FK, strings.Join(sel, ", "), e.Table, e.FK, e.FK, e.OrderBy)
		}
		p.embeds = append(p.embeds, ep)
	}
	return p, nil
}

// args are the arguments of where, then ids.
func (p *plan) args(ws Workspace, parentID string, ids ...string) []any {
	args := make([]any, 1, 2+len(ids))
	args[0] = ws.ID
	if p.r.Parent != nil {
		args = append(args, parentID)
	}
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}
