// Package records serves the read side of /v1 for every declared resource:
// one compiled plan per resource (columns, SQL text per dialect) built at
// start, rows scanned into typed buffers and written straight to JSON.
package records

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/schema/field"

	"github.com/maypok86/otter/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/jsonout"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

type kind uint8

const (
	kString kind = iota
	kInt
	kBool
	kTime
	kJSON
	kFloat
)

type column struct {
	name     string
	kind     kind
	hidden   bool // selected for computed fields or flags, never shown
	commerce bool // shown only on products of a commerce workspace
}

type plan struct {
	r       *resource.Resource
	cols    []column
	selects string // "t.a, t.b"
	getSQL  string // one record by id (and parent, for sub-resources)
	// anySQL is getSQL without the resource's Scope: the answer of a write
	// that moved a record out of it (an archived promotion).
	anySQL   string
	search   database.Search
	embeds   []*embedPlan
	flag     int // index of the commerce flag column, or -1
	colIndex map[string]int
	// cacheable plans render from their own row alone: their JSON is kept
	// in the render cache (cache.go). selects then ends with the version
	// column, and keys selects only id and version.
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
	d := newDests(p.cols, 0)
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

// Engine reads records.
type Engine struct {
	db    *database.DB
	plans map[*resource.Resource]*plan
	cache *otter.Cache[string, rendered] // nil: off
	// Counts, when set, answers list totals without counting rows.
	Counts Counter
	// Refresh, when set, runs before every Get and list of a resource: it
	// brings up to date the states that follow the clock (a promotion past
	// its ends_at is expired), so records, filters, totals and cached
	// renderings all see them.
	Refresh func(ctx context.Context, r *resource.Resource, workspaceID string) error
}

func (e *Engine) refresh(ctx context.Context, r *resource.Resource, ws Workspace) error {
	if e.Refresh == nil {
		return nil
	}
	if err := e.Refresh(ctx, r, ws.ID); err != nil {
		return apierr.Internal(err)
	}
	return nil
}

// Counter answers exact totals of unfiltered lists cheaply.
type Counter interface {
	Count(ctx context.Context, workspaceID, table, scope string) (int64, bool)
}

// Workspace is what reads need to know of the caller's workspace.
type Workspace struct {
	ID       string
	Commerce bool // commerce mode and module both on: item reads show product fields
}

// Searches are the search indexes and per-value counts the declarations
// ask for: what database.Migrate builds and what `q` and filtered lists read.
func Searches(rs []*resource.Resource) []database.Search {
	var out []database.Search
	for _, r := range rs {
		var counted []string
		for _, f := range r.Filters {
			if f.Type == resource.Boolean || f.Type == resource.Enum {
				counted = append(counted, f.Column)
			}
		}
		if r.Table != "" && (len(r.Search) > 0 || len(counted) > 0) {
			out = append(out, database.Search{Table: r.Table, Columns: r.Search, Few: r.SearchFew, Counted: counted})
		}
	}
	return out
}

// New compiles a plan for every resource that has a table.
func New(db *database.DB, rs []*resource.Resource) (*Engine, error) {
	merged := map[string]database.Search{}
	for _, s := range database.MergeSearches(Searches(rs)) {
		merged[s.Table] = s
	}
	e := &Engine{db: db, plans: map[*resource.Resource]*plan{}, Counts: db}
	for _, r := range rs {
		if r.Table == "" {
			continue
		}
		p, err := compile(db, r)
		if err != nil {
			return nil, err
		}
		p.search = merged[r.Table]
		e.plans[r] = p
	}
	e.SetCache(DefaultCacheBytes)
	return e, nil
}

func table(name string) *schema.Table {
	for _, t := range migrate.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func kindOf(t field.Type) kind {
	switch t {
	case field.TypeInt, field.TypeInt8, field.TypeInt16, field.TypeInt32, field.TypeInt64,
		field.TypeUint, field.TypeUint8, field.TypeUint16, field.TypeUint32, field.TypeUint64:
		return kInt
	case field.TypeBool:
		return kBool
	case field.TypeTime:
		return kTime
	case field.TypeJSON:
		return kJSON
	case field.TypeFloat32, field.TypeFloat64:
		return kFloat
	default:
		return kString
	}
}

// Columns lists the columns a resource's records show, with their kinds as
// JSON types, for documents derived from the declarations (OpenAPI).
func Columns(r *resource.Resource) []ColumnInfo {
	t := table(r.Table)
	if t == nil {
		return nil
	}
	var out []ColumnInfo
	for _, c := range t.Columns {
		if c.Name == "workspace_id" || slices.Contains(r.Hidden, c.Name) || c.Type == field.TypeBytes {
			continue
		}
		out = append(out, ColumnInfo{Name: c.Name, Type: c.Type, Nullable: c.Nullable, Enums: c.Enums,
			Commerce: slices.Contains(r.CommerceColumns, c.Name)})
	}
	return out
}

// EmbedColumns lists the columns each element of an embed shows.
func EmbedColumns(e resource.Embed) []ColumnInfo {
	t := table(e.Table)
	if t == nil {
		return nil
	}
	var out []ColumnInfo
	for _, c := range compileColumns(t, nil, e.Columns, nil) {
		for _, tc := range t.Columns {
			if tc.Name == c.name {
				out = append(out, ColumnInfo{Name: c.name, Type: tc.Type, Nullable: tc.Nullable, Enums: tc.Enums})
			}
		}
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

func compileColumns(t *schema.Table, r *resource.Resource, only []string, keep func(string) bool) []column {
	var cols []column
	for _, c := range t.Columns {
		if c.Type == field.TypeBytes || c.Name == "workspace_id" {
			continue
		}
		if len(only) > 0 && !slices.Contains(only, c.Name) {
			continue
		}
		col := column{name: c.Name, kind: kindOf(c.Type)}
		if r != nil {
			col.commerce = slices.Contains(r.CommerceColumns, c.Name)
			if slices.Contains(r.Hidden, c.Name) {
				if !keep(c.Name) {
					continue
				}
				col.hidden = true
			}
		}
		cols = append(cols, col)
	}
	return cols
}

func compile(db *database.DB, r *resource.Resource) (*plan, error) {
	t := table(r.Table)
	if t == nil {
		return nil, fmt.Errorf("records: resource %s: no table %q", r.Name, r.Table)
	}
	// Hidden columns are still read when a computed field or the commerce flag needs them.
	keep := func(name string) bool { return name == r.CommerceFlag || len(r.Computed) > 0 }
	p := &plan{r: r, flag: -1, colIndex: map[string]int{}}
	p.cols = compileColumns(t, r, nil, keep)
	names := make([]string, len(p.cols))
	for i, c := range p.cols {
		names[i] = "t." + c.name
		p.colIndex[c.name] = i
		if c.name == r.CommerceFlag {
			p.flag = i
		}
	}
	p.selects = strings.Join(names, ", ")
	_, hasVersion := p.colIndex["updated_at"]
	p.cacheable = len(r.Embeds) == 0 && hasVersion
	for _, c := range p.cols {
		p.commerceSensitive = p.commerceSensitive || c.commerce
	}
	w, _ := p.where("")
	if p.cacheable {
		p.selects += ", " + version
		p.keys = "t.id, " + version
		p.versionSQL = db.Rebind("SELECT " + p.keys + " FROM " + r.Table + " t WHERE " + w + " AND t.id = ?")
	}
	p.getSQL = db.Rebind("SELECT " + p.selects + " FROM " + r.Table + " t WHERE " + w + " AND t.id = ?")
	p.anySQL = p.getSQL
	if r.Scope != "" && r.Parent == nil {
		p.anySQL = db.Rebind("SELECT " + p.selects + " FROM " + r.Table + " t WHERE t.workspace_id = ? AND t.id = ?")
	}
	for _, e := range r.Embeds {
		ct := table(e.Table)
		if ct == nil {
			return nil, fmt.Errorf("records: embed %s of %s: no table %q", e.Name, r.Name, e.Table)
		}
		ep := &embedPlan{e: e, cols: compileColumns(ct, nil, e.Columns, nil)}
		sel := make([]string, len(ep.cols))
		for i, c := range ep.cols {
			sel[i] = "c." + c.name
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

func newDests(cols []column, extra int) []any {
	d := make([]any, 0, len(cols)+extra)
	for i := 0; i < extra; i++ {
		d = append(d, new(string))
	}
	for _, c := range cols {
		switch c.kind {
		case kInt:
			d = append(d, new(sql.NullInt64))
		case kBool:
			d = append(d, new(sql.NullBool))
		case kTime:
			d = append(d, new(sql.NullTime))
		case kJSON:
			d = append(d, new([]byte))
		case kFloat:
			d = append(d, new(sql.NullFloat64))
		default:
			d = append(d, new(sql.NullString))
		}
	}
	return d
}

// value returns a scanned column as a plain Go value (nil for NULL).
func value(d any) any {
	switch x := d.(type) {
	case *sql.NullString:
		if x.Valid {
			return x.String
		}
	case *sql.NullInt64:
		if x.Valid {
			return x.Int64
		}
	case *sql.NullBool:
		if x.Valid {
			return x.Bool
		}
	case *sql.NullTime:
		if x.Valid {
			return x.Time
		}
	case *sql.NullFloat64:
		if x.Valid {
			return x.Float64
		}
	case *[]byte:
		if *x != nil {
			return *x
		}
	case *string:
		return *x
	}
	return nil
}

func appendColumn(b []byte, c column, d any) []byte {
	b = jsonout.String(b, c.name)
	b = append(b, ':')
	switch x := d.(type) {
	case *sql.NullString:
		if x.Valid {
			return jsonout.String(b, x.String)
		}
	case *sql.NullInt64:
		if x.Valid {
			return strconv.AppendInt(b, x.Int64, 10)
		}
	case *sql.NullBool:
		if x.Valid {
			return strconv.AppendBool(b, x.Bool)
		}
	case *sql.NullTime:
		if x.Valid {
			return jsonout.Time(b, x.Time)
		}
	case *sql.NullFloat64:
		if x.Valid {
			return strconv.AppendFloat(b, x.Float64, 'f', -1, 64)
		}
	case *[]byte:
		if len(*x) > 0 {
			return append(b, *x...)
		}
	}
	return append(b, "null"...)
}

// encode writes one record; embedded holds each embed's JSON array by name.
func (p *plan) encode(b []byte, ws Workspace, dests []any, embedded [][]byte) []byte {
	commerce := true
	if p.flag >= 0 {
		commerce = ws.Commerce && value(dests[p.flag]) == true
	}
	b = append(b, '{')
	first := true
	for i, c := range p.cols {
		if c.hidden || (c.commerce && !commerce) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendColumn(b, c, dests[i])
	}
	for _, cf := range p.r.Computed {
		b = append(b, ',')
		b = jsonout.String(b, cf.Name)
		b = append(b, ':')
		b = jsonout.Any(b, cf.Value(func(name string) any {
			if i, ok := p.colIndex[name]; ok {
				return value(dests[i])
			}
			return nil
		}))
	}
	for i, ep := range p.embeds {
		if ep.e.Commerce && !commerce {
			continue
		}
		b = append(b, ',')
		b = jsonout.String(b, ep.e.Name)
		b = append(b, ':')
		if embedded[i] == nil {
			b = append(b, '[', ']')
		} else {
			b = append(b, embedded[i]...)
		}
	}
	return append(b, '}')
}

// scanned is a fully read page: each row's column buffers.
type scanned struct {
	rows [][]any
	ids  []string
}

// Querier runs the engine's queries: the read pool, or a write's
// transaction, which must see its own rows before they are committed.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (e *Engine) query(ctx context.Context, qr Querier, p *plan, q string, args []any) (*scanned, error) {
	rs, err := qr.QueryContext(ctx, e.db.Rebind(q), args...)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	defer rs.Close()
	out := &scanned{}
	idIdx := p.colIndex["id"]
	for rs.Next() {
		d := p.dests()
		if err := rs.Scan(d...); err != nil {
			return nil, apierr.Internal(err)
		}
		out.rows = append(out.rows, d)
		out.ids = append(out.ids, d[idIdx].(*sql.NullString).String)
	}
	if err := rs.Err(); err != nil {
		return nil, apierr.Internal(err)
	}
	return out, nil
}

// loadEmbeds fetches every embed of a page in one query each (never per row)
// and returns, per row, the JSON array of each embed.
func (e *Engine) loadEmbeds(ctx context.Context, qr Querier, p *plan, ws Workspace, s *scanned) ([][][]byte, error) {
	out := make([][][]byte, len(s.rows))
	if len(p.embeds) == 0 || len(s.ids) == 0 {
		return out, nil
	}
	for i := range out {
		out[i] = make([][]byte, len(p.embeds))
	}
	pos := make(map[string]int, len(s.ids))
	args := make([]any, len(s.ids))
	for i, id := range s.ids {
		pos[id] = i
		args[i] = id
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(s.ids)), ",")
	for ei, ep := range p.embeds {
		if ep.e.Commerce && !ws.Commerce {
			continue
		}
		rs, err := qr.QueryContext(ctx, e.db.Rebind(fmt.Sprintf(ep.sql, marks)), args...)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		d := newDests(ep.cols, 1)
		for rs.Next() {
			if err := rs.Scan(d...); err != nil {
				rs.Close()
				return nil, apierr.Internal(err)
			}
			i := pos[*d[0].(*string)]
			b := out[i][ei]
			if b == nil {
				b = append(b, '[')
			} else {
				b = append(b, ',')
			}
			b = append(b, '{')
			for ci, c := range ep.cols {
				if ci > 0 {
					b = append(b, ',')
				}
				b = appendColumn(b, c, d[ci+1])
			}
			out[i][ei] = append(b, '}')
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, apierr.Internal(err)
		}
	}
	for i := range out {
		for ei, b := range out[i] {
			if b != nil {
				out[i][ei] = append(b, ']')
			}
		}
	}
	return out, nil
}

func (p *plan) where(parentID string) (string, []any) {
	w := "t.workspace_id = ?"
	if p.r.Scope != "" {
		w += " AND t." + p.r.Scope
	}
	if p.r.Parent != nil {
		w += " AND t." + p.r.Parent.FK + " = ?"
		return w, []any{parentID}
	}
	return w, nil
}

// Get answers one record as JSON. parentID scopes sub-resources.
func (e *Engine) Get(ctx context.Context, r *resource.Resource, ws Workspace, id, parentID string) ([]byte, error) {
	if err := e.refresh(ctx, r, ws); err != nil {
		return nil, err
	}
	p := e.plans[r]
	args := p.oneArgs(ws, id, parentID)
	useCache := p.cacheable && e.cache != nil
	dv := int64(noVersion)
	if useCache {
		// Read before the row: a commit in between makes the next reading
		// differ, so an entry is never marked checked at a version newer
		// than the row it holds.
		v, ok, err := e.db.DataVersion(ctx)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		if ok && parentID == "" {
			dv = v
			if b, ok := e.unchanged(p, ws, id, dv); ok {
				return b, nil
			}
		}
		var got, ver string
		err = e.db.Read.QueryRowContext(ctx, p.versionSQL, args...).Scan(&got, &ver)
		if err == sql.ErrNoRows {
			return nil, apierr.NotFound(r.Singular)
		}
		if err != nil {
			return nil, apierr.Internal(err)
		}
		// got, not id: a key kept in the cache must not share memory with
		// the request (fiber's params point into a reused buffer).
		if b, ok := e.cached(p, ws, got, ver); ok {
			if dv != noVersion {
				e.remember(p, ws, got, ver, b, dv)
			}
			return b, nil
		}
	}
	s, b, err := e.readOne(ctx, e.db.Read, p, ws, args)
	if err != nil {
		return nil, err
	}
	if useCache {
		b = e.remember(p, ws, s.ids[0], p.versionOf(s.rows[0]), b, dv)
	}
	return b, nil
}

// Render is one record read through qr: inside a write's transaction it is
// the record exactly as the write will commit it, which is what the write
// answers and what its idempotency record keeps. It is not cached: the
// transaction may still fail.
func (e *Engine) Render(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, id, parentID string) ([]byte, error) {
	p := e.plans[r]
	_, b, err := e.readOne(ctx, qr, p, ws, p.oneArgs(ws, id, parentID))
	return b, err
}

// RenderUnscoped is Render of a record that may be outside its resource's
// Scope: a write that moves a record out of its lists (archive) still
// answers with the record it wrote.
func (e *Engine) RenderUnscoped(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, id string) ([]byte, error) {
	p := e.plans[r]
	s, err := e.query(ctx, qr, p, p.anySQL, []any{ws.ID, id})
	if err != nil {
		return nil, err
	}
	if len(s.rows) == 0 {
		return nil, apierr.NotFound(r.Singular)
	}
	emb, err := e.loadEmbeds(ctx, qr, p, ws, s)
	if err != nil {
		return nil, err
	}
	return p.encode(make([]byte, 0, 1024), ws, s.rows[0], emb[0]), nil
}

// oneArgs are the arguments of a plan's single-record queries.
func (p *plan) oneArgs(ws Workspace, id, parentID string) []any {
	_, extra := p.where(parentID)
	args := append([]any{ws.ID}, extra...)
	return append(args, id)
}

// readOne reads and encodes the record that p.getSQL selects with args.
func (e *Engine) readOne(ctx context.Context, qr Querier, p *plan, ws Workspace, args []any) (*scanned, []byte, error) {
	s, err := e.query(ctx, qr, p, p.getSQL, args)
	if err != nil {
		return nil, nil, err
	}
	if len(s.rows) == 0 {
		return nil, nil, apierr.NotFound(p.r.Singular)
	}
	emb, err := e.loadEmbeds(ctx, qr, p, ws, s)
	if err != nil {
		return nil, nil, err
	}
	return s, p.encode(make([]byte, 0, 1024), ws, s.rows[0], emb[0]), nil
}

// byID reads the full rows of ids (any order; missing ids are absent).
func (e *Engine) byID(ctx context.Context, qr Querier, p *plan, ws Workspace, parentID string, ids []string) (*scanned, error) {
	w, extra := p.where(parentID)
	args := make([]any, 0, len(ids)+1+len(extra))
	args = append(append(args, ws.ID), extra...)
	for _, id := range ids {
		args = append(args, id)
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	return e.query(ctx, qr, p, "SELECT "+p.selects+" FROM "+p.r.Table+" t WHERE "+e.byKey(w)+" AND t.id IN ("+marks+")", args)
}

// byKey turns where (which starts with the workspace condition) into one
// that SQLite answers by fetching rows by key: without statistics its
// planner takes the (workspace_id, created_at, id) index for
// "workspace_id = ? AND <key> IN (...)" and tests every row of the
// workspace (seconds at a million). A unary + hides the column from the
// index. PostgreSQL plans with statistics, and has no unary + on text.
func (e *Engine) byKey(where string) string {
	if e.db.Dialect == dialect.Postgres {
		return where
	}
	return "+" + where
}

// pageCached appends the records of q — which selects p.keys — using the
// render cache: only rows missing from it, or changed since they were
// cached, are read in full, with one query.
func (e *Engine) pageCached(ctx context.Context, p *plan, ws Workspace, parentID, q string, args []any, b []byte, dv int64) ([]byte, error) {
	rs, err := e.db.Read.QueryContext(ctx, e.db.Rebind(q), args...)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	var ids, versions []string
	for rs.Next() {
		var id, ver string
		if err := rs.Scan(&id, &ver); err != nil {
			rs.Close()
			return nil, apierr.Internal(err)
		}
		ids, versions = append(ids, id), append(versions, ver)
	}
	err = rs.Err()
	rs.Close()
	if err != nil {
		return nil, apierr.Internal(err)
	}
	parts := make([][]byte, len(ids))
	var missing []string
	for i, id := range ids {
		if j, ok := e.cached(p, ws, id, versions[i]); ok {
			parts[i] = j
			if dv != noVersion {
				e.remember(p, ws, id, versions[i], j, dv)
			}
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		s, err := e.byID(ctx, e.db.Read, p, ws, parentID, missing)
		if err != nil {
			return nil, err
		}
		fresh := make(map[string][]byte, len(s.ids))
		for i, d := range s.rows {
			fresh[s.ids[i]] = e.remember(p, ws, s.ids[i], p.versionOf(d), p.encode(make([]byte, 0, 1024), ws, d, nil), dv)
		}
		for i, id := range ids {
			if parts[i] == nil {
				parts[i] = fresh[id] // nil: deleted since the page was read; left out
			}
		}
	}
	return joinParts(b, parts), nil
}

// pageUnchanged appends the records of the page of rows matching where
// when every one of them is cached, was checked at data version dv, and
// nothing was committed since; ok is false, and b untouched, when one is
// not. The page's ids come from the index, joined into one value: one
// step and one column read instead of one per row (cached list25 27 ->
// 24 µs). group_concat takes the rows as the subquery yields them, in its
// ORDER BY; an ORDER BY inside the aggregate would sort them again and
// cost what the single step saves (the list tests check the order). Only
// SQLite has a data version; its ids never hold a comma.
func (e *Engine) pageUnchanged(ctx context.Context, p *plan, ws Workspace, where string, args []any, limit int, b []byte, dv int64) ([]byte, bool, error) {
	q := "SELECT group_concat(i) FROM (SELECT t.id AS i FROM " + p.r.Table + " t WHERE " +
		where + newestFirst + database.LimitOffset(limit) + ")"
	var joined sql.NullString
	if err := e.db.Read.QueryRowContext(ctx, e.db.Rebind(q), args...).Scan(&joined); err != nil {
		return nil, false, apierr.Internal(err)
	}
	var ids []string
	if joined.String != "" {
		ids = strings.Split(joined.String, ",")
	}
	return e.idsUnchanged(ctx, p, ws, ids, b, dv)
}

// idsUnchanged appends the records of ids when every one of them is cached,
// was checked at data version dv, and nothing was committed since; ok is
// false, and b untouched, when one is not.
func (e *Engine) idsUnchanged(ctx context.Context, p *plan, ws Workspace, ids []string, b []byte, dv int64) ([]byte, bool, error) {
	parts := make([][]byte, len(ids))
	for i, id := range ids {
		j, ok := e.unchanged(p, ws, id, dv)
		if !ok {
			return nil, false, nil
		}
		parts[i] = j
	}
	// The ids must come from the same state as the records: nothing may
	// have been committed while they were read either.
	if v, ok, err := e.db.DataVersion(ctx); err != nil || !ok || v != dv {
		return nil, false, err
	}
	return joinParts(b, parts), true, nil
}

// joinParts appends the records' JSON, comma-separated; nil parts (rows
// deleted meanwhile) are left out.
func joinParts(b []byte, parts [][]byte) []byte {
	n := len(parts)
	for _, part := range parts {
		n += len(part)
	}
	b = slices.Grow(b, n+64) // room for the meta that follows
	first := true
	for _, part := range parts {
		if part == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, part...)
	}
	return b
}

// Exists reports whether the workspace has a record of r with this id
// (parents of sub-resources must exist before their children are listed).
func (e *Engine) Exists(ctx context.Context, r *resource.Resource, ws Workspace, id string) (bool, error) {
	p := e.plans[r]
	w, _ := p.where("")
	var one int
	err := e.db.Read.QueryRowContext(ctx, e.db.Rebind("SELECT 1 FROM "+r.Table+" t WHERE "+w+" AND t.id = ?"), ws.ID, id).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, apierr.Internal(err)
	}
	return true, nil
}

// Page is a validated list request.
type Page struct {
	Limit, Offset int
	Q             string
	// Filters maps a declared filter's column to its value (string or bool).
	Filters  []FilterValue
	ParentID string
}

// FilterValue is one applied list filter.
type FilterValue struct {
	Column string
	// Value is a string or a bool; a []string matches any of its values.
	Value any
	// Bound compares instead of matching: ">=" or "<=" (a date range's ends).
	Bound string
}

// where is the filter's SQL condition on the row t, with its arguments.
func (f FilterValue) where() (string, []any) {
	if vs, ok := f.Value.([]string); ok {
		args := make([]any, len(vs))
		for i, v := range vs {
			args[i] = v
		}
		return "t." + f.Column + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(vs)), ",") + ")", args
	}
	op := "="
	if f.Bound == ">=" || f.Bound == "<=" {
		op = f.Bound
	}
	return "t." + f.Column + " " + op + " ?", []any{f.Value}
}

// values are the values an equality filter matches, one counter each;
// nil for a range.
func (f FilterValue) values() []any {
	if f.Bound != "" {
		return nil
	}
	if vs, ok := f.Value.([]string); ok {
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return out
	}
	return []any{f.Value}
}

// fewMatches reports whether fetching every match by key and sorting them
// (about 5 µs a row: scattered table pages) beats walking the newest-first
// index until the page is found (about 0.2 µs an entry, rows/matches
// entries per match): matches² · 25 ≤ (offset+limit) · rows.
func (e *Engine) fewMatches(ctx context.Context, wsID, table string, matches int64, pg Page) bool {
	rows, ok := e.Counts.Count(ctx, wsID, table, "")
	return !ok || matches*matches*25 <= int64(pg.Offset+pg.Limit)*rows
}

// maxKeys bounds the match keys carried from the count to the page query.
const maxKeys = 50_000

// subqueryOffset is where skipping index entries in a subquery starts to
// beat skipping rows (the subquery's page is sorted once more).
const subqueryOffset = 100

// keysSubqueryOffset is subqueryOffset for pages that select keys only.
const keysSubqueryOffset = 500

// deepOffset is where skipping whole days by their counts starts to pay.
const deepOffset = 5000

const newestFirst = " ORDER BY t.created_at DESC, t.id DESC"

// pageSQL selects one page of the rows matching where. Past the first page
// the offset is walked in a subquery that reads only the (workspace_id,
// created_at, id) index — or the filter's covering index — and the full
// rows of the page alone are fetched: offset 500,000 then skips index
// entries, not table rows.
func (e *Engine) pageSQL(p *plan, sel, where string, limit, offset int) string {
	from := " FROM " + p.r.Table + " t WHERE "
	// Selecting only keys, skipped rows cost an index entry each either
	// way; the subquery's extra sort pays off later (measured with the
	// sqlite3 shell at a million rows: equal at 475, subquery ahead at 4,000).
	if offset < subqueryOffset || (sel == p.keys && offset < keysSubqueryOffset) {
		return "SELECT " + sel + from + where + newestFirst + database.LimitOffset(limit)
	}
	key := "t.rowid"
	if e.db.Dialect == dialect.Postgres {
		key = "t.id"
	}
	return "SELECT " + sel + from + key + " IN (SELECT " + key + from + where + newestFirst + database.LimitOffset(limit) + ")" + newestFirst
}

// List answers a list envelope {data, meta} as JSON.
func (e *Engine) List(ctx context.Context, r *resource.Resource, ws Workspace, pg Page) ([]byte, error) {
	return e.AppendList(ctx, r, ws, pg, make([]byte, 0, 4096))
}

// AppendList appends the list envelope to b: a caller that reuses b (the
// API writes into the response's pooled buffer) spares the allocation of
// every page's JSON (15 KB a page of 25 invoices) and the collections that
// follow it.
func (e *Engine) AppendList(ctx context.Context, r *resource.Resource, ws Workspace, pg Page, b []byte) ([]byte, error) {
	if err := e.refresh(ctx, r, ws); err != nil {
		return nil, err
	}
	p := e.plans[r]
	useCache := p.cacheable && e.cache != nil
	dv := int64(noVersion)
	if useCache && pg.ParentID == "" {
		// Read first: a page answered from the cache checks at its end
		// that nothing was committed since, and that covers every query
		// of the request, the search's too.
		v, ok, err := e.db.DataVersion(ctx)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		if ok {
			dv = v
		}
	}
	w, extra := p.where(pg.ParentID)
	args := append([]any{ws.ID}, extra...)
	for _, f := range pg.Filters {
		cond, fargs := f.where()
		w += " AND " + cond
		args = append(args, fargs...)
	}
	filtered := len(pg.Filters) > 0
	var total int64
	counted := false
	// rowFirst: the matches are few, so fetch them by key and sort them,
	// instead of walking the newest-first index until enough match.
	rowFirst := false
	// keyed: the search picked the page's rows itself (their keys are in w).
	keyed := false
	// pageIDs: the ids of a keyed page, when the search read them too.
	var pageIDs []string
	if pg.Q != "" && len(p.search.Columns) > 0 {
		whole := !filtered && r.Scope == "" && r.Parent == nil
		found, err := e.db.Find(ctx, p.search, ws.ID, pg.Q, whole, pg.Offset, pg.Limit)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		switch {
		case found.Counted:
			total, counted, keyed, rowFirst = found.Total, true, true, true
			pageIDs = found.IDs
			cond, arg := e.db.KeysIn(found.Keys)
			w = e.byKey(w) + " AND " + cond
			args = append(args, arg)
		case found.Sub != "":
			sub, sargs := found.Sub, found.SubArgs
			if whole {
				// The index partition of the workspace is exactly its rows.
				// The matches' keys are read once, counted, and handed back
				// to the page query, so the index is searched only once.
				var keys sql.NullString
				if err := e.db.Read.QueryRowContext(ctx, "SELECT group_concat(docid), COUNT(*) FROM (SELECT docid FROM ("+sub+") LIMIT "+
					strconv.Itoa(maxKeys+1)+")", sargs...).Scan(&keys, &total); err != nil {
					return nil, apierr.Internal(err)
				}
				if total <= maxKeys {
					sub, sargs = "SELECT value FROM json_each(?)", []any{"[" + keys.String + "]"}
				} else if err := e.db.Read.QueryRowContext(ctx, "SELECT COUNT(*) FROM ("+sub+")", sargs...).Scan(&total); err != nil {
					return nil, apierr.Internal(err)
				}
				counted = true
			}
			rowFirst = !counted || e.fewMatches(ctx, ws.ID, r.Table, total, pg)
			if rowFirst {
				w = e.byKey(w) + " AND t.rowid IN (" + sub + ")"
			} else {
				w += " AND +t.rowid IN (" + sub + ")"
			}
			args = append(args, sargs...)
		case found.Cond != "":
			w += " AND " + found.Cond
			args = append(args, found.Args...)
		}
		filtered = true
	}
	if !counted && r.Parent == nil && e.Counts != nil {
		switch {
		case !filtered:
			total, counted = e.Counts.Count(ctx, ws.ID, r.Table, r.Scope)
		case len(pg.Filters) == 1 && pg.Q == "" && pg.Filters[0].values() != nil:
			// One enum or boolean filter: each value is counted too.
			f := pg.Filters[0]
			total, counted = 0, true
			for _, v := range f.values() {
				n, ok := e.Counts.Count(ctx, ws.ID, e.db.ValueKey(r.Table, f.Column, v), r.Scope)
				total, counted = total+n, counted && ok
			}
		}
	}
	if !counted {
		if err := e.db.Read.QueryRowContext(ctx, e.db.Rebind("SELECT COUNT(*) FROM "+r.Table+" t WHERE "+w), args...).Scan(&total); err != nil {
			return nil, apierr.Internal(err)
		}
	}
	b = append(b, `{"data":[`...)
	if int64(pg.Offset) < total {
		offset := pg.Offset
		if keyed {
			offset = 0 // w holds the page's keys alone
		}
		if offset >= deepOffset && !filtered && r.Parent == nil && r.Scope == "" {
			if cond, arg, rest, ok := e.db.Skip(ctx, ws.ID, r.Table, offset); ok {
				w += " AND " + cond
				args = append(args, arg)
				offset = rest
			}
		}
		sel := p.selects
		if useCache {
			sel = p.keys
		}
		q := e.pageSQL(p, sel, w, pg.Limit, offset)
		if rowFirst {
			q = "SELECT " + sel + " FROM " + r.Table + " t WHERE " + w + newestFirst + database.LimitOffset(pg.Limit)
		}
		args = append(args, offset)
		if useCache {
			if dv != noVersion {
				// Nothing committed since the page's records were checked:
				// their ids (from the search, or from the index alone) are
				// enough.
				var out []byte
				var ok bool
				var err error
				if pageIDs != nil {
					out, ok, err = e.idsUnchanged(ctx, p, ws, pageIDs, b, dv)
				} else {
					out, ok, err = e.pageUnchanged(ctx, p, ws, w, args, pg.Limit, b, dv)
				}
				if err != nil {
					return nil, err
				}
				if ok {
					return e.meta(out, pg, total), nil
				}
			}
			b, err := e.pageCached(ctx, p, ws, pg.ParentID, q, args, b, dv)
			if err != nil {
				return nil, err
			}
			return e.meta(b, pg, total), nil
		}
		if len(p.embeds) == 0 {
			// Nothing to fetch per page: encode each row as it is read,
			// into one set of buffers.
			var err error
			b, err = e.stream(ctx, p, ws, q, args, b)
			if err != nil {
				return nil, err
			}
			return e.meta(b, pg, total), nil
		}
		s, err := e.query(ctx, e.db.Read, p, q, args)
		if err != nil {
			return nil, err
		}
		emb, err := e.loadEmbeds(ctx, e.db.Read, p, ws, s)
		if err != nil {
			return nil, err
		}
		for i, d := range s.rows {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.encode(b, ws, d, emb[i])
		}
	}
	return e.meta(b, pg, total), nil
}

// meta closes a list envelope.
func (e *Engine) meta(b []byte, pg Page, total int64) []byte {
	b = append(b, `],"meta":{"limit":`...)
	b = strconv.AppendInt(b, int64(pg.Limit), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(pg.Offset), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, `}}`...)
}

// stream appends the records of q, comma-separated, to b.
func (e *Engine) stream(ctx context.Context, p *plan, ws Workspace, q string, args []any, b []byte) ([]byte, error) {
	rs, err := e.db.Read.QueryContext(ctx, e.db.Rebind(q), args...)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	defer rs.Close()
	d := p.dests()
	for first := true; rs.Next(); first = false {
		if err := rs.Scan(d...); err != nil {
			return nil, apierr.Internal(err)
		}
		if !first {
			b = append(b, ',')
		}
		b = p.encode(b, ws, d, nil)
	}
	if err := rs.Err(); err != nil {
		return nil, apierr.Internal(err)
	}
	return b, nil
}
