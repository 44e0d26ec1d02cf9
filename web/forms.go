package web

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// The New and Edit forms are made from the write operations' declared
// bodies and sent as the JSON body a client would send to the operations
// /v1 runs (write.go); no rule of the business is checked here.

// emptyRows is how many blank lines a repeated-rows editor offers.
const emptyRows = 3

// formField is one input of a form.
type formField struct {
	F     resource.Field
	Name  string // the input's name: the body's path, "lines[0].qty_milli"
	ID    string
	Value string // as typed; a boolean is "true" or ""
	Error string
	// Tri makes a boolean a select with a "default" choice (on create,
	// an unset boolean keeps the operation's default).
	Tri bool
	// Choices make a select of records the field may name (an order's lines).
	Choices []choice
	Attrs   templ.Attributes // htmx's, on a line's description
	// Unit is shown beside a field in a person's unit ("EUR", "%"); Hint
	// replaces the declaration's doc there.
	Unit, Hint string
	// Ref is the picker of a field naming another record (pick.go).
	Ref *refPick
	// Row is a rows editor's row of the input, from 1 (0: not in a row),
	// and RowWord what a row is called ("Line"): its accessible name is
	// "Line 2 quantity".
	Row     int
	RowWord string
	// Focus gives the input the focus (autofocus): where the person works
	// next after the form was drawn again.
	Focus bool
	// Hidden keeps a row's id column (the item a pick filled) out of the
	// table, under the editor's "Every field".
	Hidden bool
}

// accName is a row input's accessible name, "Line 2 unit price"; ""
// outside a row (its label names it).
func (f formField) accName() string {
	if f.Row == 0 {
		return ""
	}
	return f.RowWord + " " + strconv.Itoa(f.Row) + " " + lowerLabel(label(f.F.Name))
}

// aria names a row's input for screen readers (see accName).
func (f formField) aria() templ.Attributes {
	a := templ.Attributes{}
	if n := f.accName(); n != "" {
		a["aria-label"] = n
	}
	if f.Error != "" {
		a["aria-invalid"] = "true"
	}
	return a
}

// raw is the field's plain id input, shown under "Every field".
func (f formField) raw() formField {
	f.Ref, f.Focus, f.Attrs = nil, false, nil
	return f
}

// hint is the help shown under the input.
func (f formField) hint() string {
	if f.Hint != "" {
		return f.Hint
	}
	return pickedWords.ReplaceAllStringFunc(f.F.Doc, func(m string) string {
		return "no " + strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(m, "no "), "_id"), "_", " ") + " picked"
	})
}

// pickedWords are a doc's words about an id a picker holds ("when there
// is no client_id"), which a person reads as no client picked.
var pickedWords = regexp.MustCompile(`\bno [a-z]+(?:_[a-z]+)*_id\b`)

// withUnit gives a field in a person's unit its unit and help.
func (f formField) withUnit(cur string) formField {
	if unitField(f.F) {
		f.Unit, f.Hint = unitSuffix(f.F, cur), unitHint(f.F, cur)
	}
	return f
}

// kind is the input a field gets.
func (f formField) kind() string {
	if f.Choices != nil {
		return "choices"
	}
	switch f.F.Type {
	case resource.Integer:
		if unitField(f.F) {
			return "decimal"
		}
		return "number"
	case resource.Date:
		return "date"
	case resource.Enum:
		return "select"
	case resource.Boolean:
		if f.Tri {
			return "tri"
		}
		return "checkbox"
	case resource.Array:
		return "textarea"
	}
	return "text"
}

func (f formField) hintID() string { return f.ID + "-hint" }

// formRows is a repeated-rows editor of an array of objects (lines).
type formRows struct {
	F     resource.Field
	Cols  []resource.Field
	Rows  [][]formField
	Error string
	// Post is where the rows' buttons post (the form's address); Base the
	// resource's pages, under which Pick searches items and Totals prices
	// the lines ("" when the rows name no item or carry no prices).
	Post, Base, Pick, Totals string
	Sums                     *lineSums
	Picks                    map[int][]pick // a search asked without script, by row
	// FocusOp is the value of the row button that takes the focus (a
	// line moved up keeps its "up" button under the finger); "_more" is
	// "Add lines".
	FocusOp string
}

// shown are the columns the table shows (not the Hidden ids).
func (rs formRows) shown() []resource.Field {
	var out []resource.Field
	for j, col := range rs.Cols {
		if len(rs.Rows) == 0 || !rs.Rows[0][j].Hidden {
			out = append(out, col)
		}
	}
	return out
}

// hidden are the Hidden inputs of the rows, for "Every field".
func (rs formRows) hidden() []formField {
	var out []formField
	for _, row := range rs.Rows {
		for _, ff := range row {
			if ff.Hidden {
				out = append(out, ff)
			}
		}
	}
	return out
}

// formItem is a field or a rows editor, in declaration order.
type formItem struct {
	Field *formField
	Rows  *formRows
}

type formData struct {
	page
	Items []formItem
	Spec  formSpec
	Idem  string // this render's Idempotency-Key
}

// formable reports whether a form can edit a field: integration-only
// shapes (external_ref, open objects, "any") are left to the API.
func formable(f resource.Field) bool {
	switch f.Type {
	case resource.String, resource.Integer, resource.Boolean, resource.Enum, resource.Date, resource.Time:
		return true
	case resource.Array:
		if stringArray(f) {
			return true
		}
		for _, it := range f.Items {
			// A row's column may be a list of strings (a variant axis's
			// values), not a list of rows.
			if it.Name == "" || !formable(it) || it.Type == resource.Array && !stringArray(it) {
				return false
			}
		}
		return len(f.Items) > 0
	}
	return false
}

func stringArray(f resource.Field) bool {
	return f.Type == resource.Array && len(f.Items) == 1 && f.Items[0].Name == "" && f.Items[0].Type == resource.String
}

// maxRows bounds a rows editor by the array's declared length.
func maxRows(f resource.Field) int {
	if f.MaxLen > 0 {
		return f.MaxLen
	}
	return 100
}

func rowsField(f resource.Field) bool { return f.Type == resource.Array && !stringArray(f) }

func inputID(name string) string {
	return "f-" + strings.NewReplacer("[", "-", "]", "", ".", "-").Replace(name)
}

// formValues are a form's values by input name.
type formValues map[string]string

// valuesOf reads the current values of a record as the form shows them,
// its amounts in cur.
func valuesOf(rec record, fields []resource.Field, cur string) formValues {
	v := formValues{}
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			rows, _ := objectRows(rec.get(f.Name))
			for i, row := range rows {
				for _, it := range f.Items {
					v[rowName(f, i, it)] = fieldText(it, row.get(it.Name), cur)
				}
			}
			continue
		}
		v[f.Name] = fieldText(f, rec.get(f.Name), cur)
	}
	return v
}

// fieldText is a value of f as its input shows it: a list of strings one
// a line, a number in its unit (amounts in cur).
func fieldText(f resource.Field, x any, cur string) string {
	if !stringArray(f) {
		return numberText(f, x, cur)
	}
	xs, _ := x.([]any)
	var lines []string
	for _, e := range xs {
		lines = append(lines, scalarText(e))
	}
	return strings.Join(lines, "\n")
}

func scalarText(x any) string {
	switch y := x.(type) {
	case string:
		return y
	case json.Number:
		return y.String()
	case bool:
		if y {
			return "true"
		}
	}
	return ""
}

func rowName(f resource.Field, i int, it resource.Field) string {
	return f.Name + "[" + strconv.Itoa(i) + "]." + it.Name
}

// rowCount is how many rows of f the values hold.
func rowCount(v formValues, f resource.Field) int {
	for i := 0; ; i++ {
		if !slices.ContainsFunc(f.Items, func(it resource.Field) bool { _, ok := v[rowName(f, i, it)]; return ok }) {
			return i
		}
	}
}

// formValuesOf reads a posted form.
func formValuesOf(c *fiber.Ctx, fields []resource.Field) formValues {
	v := formValues{}
	args := c.Request().PostArgs()
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			for i := 0; i < maxRows(f); i++ {
				seen := false
				for _, it := range f.Items {
					k := rowName(f, i, it)
					if args.Has(k) {
						v[k] = string(args.Peek(k))
						seen = true
					}
				}
				if !seen {
					break
				}
			}
			continue
		}
		if args.Has(f.Name) {
			v[f.Name] = string(args.Peek(f.Name))
		} else if f.Type == resource.Boolean {
			v[f.Name] = "" // an unchecked box sends nothing
		}
	}
	readRefInputs(c, fields, v)
	return v
}

// buildForm lays out a form's inputs with values, amounts in cur, and
// the refusals by input name (errs: the inputs the form could not read,
// the declaration's and the API's); unplaced are the refusals no input
// shows, for the page's banner.
func buildForm(fields []resource.Field, v formValues, tri bool, extraRows int, cur string, errs map[string]string) (items []formItem, unplaced []string) {
	used := map[string]bool{}
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			rs := &formRows{F: f, Cols: append([]resource.Field(nil), f.Items...)}
			n := rowCount(v, f) + extraRows
			n = min(n, maxRows(f))
			for i := 0; i < n; i++ {
				var row []formField
				for _, it := range f.Items {
					name := rowName(f, i, it)
					ff := formField{F: it, Name: name, ID: inputID(name), Value: v[name], Error: errs[name], Row: i + 1, RowWord: rowWord(f.Name)}.withUnit(cur)
					used[name] = true
					row = append(row, ff)
				}
				rs.Rows = append(rs.Rows, row)
			}
			// A refusal of the rows as a whole, or of a row past those shown.
			var msgs []string
			for k, msg := range errs {
				if (k == f.Name || strings.HasPrefix(k, f.Name+"[")) && !used[k] {
					msgs = append(msgs, msg)
					used[k] = true
				}
			}
			slices.Sort(msgs)
			rs.Error = strings.Join(msgs, " ")
			items = append(items, formItem{Rows: rs})
			continue
		}
		ff := formField{F: f, Name: f.Name, ID: inputID(f.Name), Value: v[f.Name], Tri: tri && f.Type == resource.Boolean, Error: errs[f.Name]}.withUnit(cur)
		used[f.Name] = true
		items = append(items, formItem{Field: &ff})
	}
	for k, msg := range errs {
		if !used[k] {
			unplaced = append(unplaced, msg)
		}
	}
	slices.Sort(unplaced)
	return items, unplaced
}

// bodyOf turns form values into the JSON body a client would send. On
// create (old == nil) an empty field is left out; on edit only what changed
// and the required fields are sent. Fields in people's units are read in
// u (amounts in u.cur; the record's values in u.oldCur). paths maps the
// body's params back to the form's inputs, for errors; errs are the
// inputs that cannot be read, by input name, in words.
func bodyOf(fields []resource.Field, v, old formValues, u reading) (body []byte, paths, errs map[string]string) {
	out := map[string]any{}
	paths = map[string]string{} // body param -> input name, where they differ
	errs = map[string]string{}
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			var rows []any
			changed := old == nil
			bi := 0
			for i := 0; i < max(rowCount(v, f), rowCount(old, f)); i++ {
				row := map[string]any{}
				for _, it := range f.Items {
					k := rowName(f, i, it)
					if !u.same(it, v[k], old[k]) {
						changed = true
					}
					x, ok, problem := jsonValue(it, v[k], false, u.cur)
					if problem != "" {
						errs[k] = rowWord(f.Name) + " " + strconv.Itoa(i+1) + ": " + label(it.Name) + " " + problem + "."
					}
					if ok {
						row[it.Name] = x
					}
				}
				if _, vat := row["vat_rate_bp"]; len(row) == 0 || len(row) == 1 && vat {
					continue // a blank row is no line, nor one with only the VAT rate the form fills in
				}
				for _, it := range f.Items {
					paths[f.Name+"["+strconv.Itoa(bi)+"]."+it.Name] = rowName(f, i, it)
				}
				paths[f.Name+"["+strconv.Itoa(bi)+"]"] = rowName(f, i, f.Items[0])
				rows = append(rows, row)
				bi++
			}
			if changed && (len(rows) > 0 || old != nil) {
				if rows == nil {
					rows = []any{}
				}
				out[f.Name] = rows
			}
			continue
		}
		val := v[f.Name]
		if old != nil && u.same(f, val, old[f.Name]) && !f.Required {
			continue
		}
		x, ok, problem := jsonValue(f, val, old != nil, u.cur)
		if problem != "" {
			errs[f.Name] = label(f.Name) + " " + problem + "."
		}
		if ok {
			out[f.Name] = x
		}
	}
	b, _ := json.Marshal(out)
	return b, paths, errs
}

// reading is the currencies a form's amounts are read in: cur for what
// was typed, oldCur for the record's values an edit compares them with.
type reading struct{ cur, oldCur string }

// same reports whether a typed value is the record's: in people's units,
// the same integer (120 is 120.00; the same text in another currency is
// another amount).
func (u reading) same(f resource.Field, typed, was string) bool {
	if typed == was && (!unitField(f) || f.Unit != resource.MinorUnits || u.cur == u.oldCur) {
		return true
	}
	if !unitField(f) || strings.TrimSpace(typed) == "" || strings.TrimSpace(was) == "" {
		return typed == was
	}
	a, p1 := parseUnit(f, typed, u.cur)
	b, p2 := parseUnit(f, was, cmp.Or(u.oldCur, u.cur))
	return p1 == "" && p2 == "" && a == b
}

// jsonValue is a form value as JSON (a non-integer in an integer field is
// sent as typed, for the API to refuse; a field in people's units that
// cannot be read is problem, in words); ok is false when it is left out.
func jsonValue(f resource.Field, s string, edit bool, cur string) (x any, ok bool, problem string) {
	if f.Type == resource.Boolean {
		switch s {
		case "true":
			return true, true, ""
		case "false":
			return false, true, ""
		}
		if edit {
			return false, true, "" // an unchecked box
		}
		return nil, false, ""
	}
	if strings.TrimSpace(s) == "" {
		switch {
		case edit && f.Nullable:
			return nil, true, ""
		case edit && f.Type == resource.String:
			return "", true, ""
		}
		return nil, false, ""
	}
	switch {
	case unitField(f):
		n, problem := parseUnit(f, s, cmp.Or(cur, defaultCurrency))
		if problem != "" {
			return nil, false, problem
		}
		return n, true, ""
	case f.Type == resource.Integer:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n, true, ""
		}
		return s, true, ""
	case f.Type == resource.Array: // strings, one a line or separated by commas
		var xs []string
		for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' }) {
			if l = strings.TrimSpace(l); l != "" {
				xs = append(xs, l)
			}
		}
		return xs, true, ""
	}
	return s, true, ""
}

// writable reports whether the session may write records: admins always
// may (the UI has no read-only sessions) where the plan reaches r.
func writable(ws *ent.Workspace, r *resource.Resource) bool {
	return access.GatePlan(access.WorkspaceOf(ws), r) == nil
}

func (u *UI) principal(c *fiber.Ctx) *access.Principal {
	a, _ := c.Locals(adminKey).(*ent.AdminUser)
	var ws access.Workspace // none on the workspaces page
	if w := workspaceOf(c); w != nil {
		ws = access.WorkspaceOf(w)
	}
	return access.AdminPrincipal(ws, a.ID, a.Email)
}

// formSpec is what a form writes and where it goes: a record of a
// resource, or a sub-resource's under its parent's record.
type formSpec struct {
	R      *resource.Resource // the resource written
	RT     api.Route
	Parent *resource.Resource // a sub-resource's parent, whose page the form belongs to
	// ID is the record edited, or a sub-resource's parent's id; ChildID
	// the sub-resource's own id when one is edited.
	ID, ChildID  string
	Action, Back string // where the form posts, and Cancel
	Title        string
	Submit       string
	// CurDefault is the company's currency a New form filled in.
	CurDefault string
	// HeldZeroVAT: the form was sent with lines at 0 % VAT while the
	// company's default rate is not; it asks to confirm them.
	HeldZeroVAT bool
	// Focus is the input that takes the focus when the form is drawn
	// again (after a pick, a row's button), by name; FocusOp a rows
	// button's value (see formRows.FocusOp).
	Focus, FocusOp string
	// Asked are the pickers whose matches are shown (a name that names
	// no single record).
	Asked []string
}

func (s formSpec) create() bool { return s.RT.Op.Kind == resource.Create }

// formSpecOf resolves the resource and operation a form page names: the
// resource's own (/records/:res/new, /records/:res/:id/edit) or a
// sub-resource's (/records/:res/:id/add/:sub, /records/:res/:id/sub/:sub/:cid/edit).
func formSpecOf(c *fiber.Ctx, k resource.OpKind) (formSpec, bool) {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil || !writable(ws, r) {
		return formSpec{}, false
	}
	s := formSpec{R: r, ID: c.Params("id"), ChildID: c.Params("cid")}
	if sub := c.Params("sub"); sub != "" {
		child := resource.ByName(sub)
		if child == nil || child.Parent == nil || child.Parent.Resource != r || !writable(ws, child) {
			return formSpec{}, false
		}
		s.Parent, s.R = r, child
	}
	rt, ok := api.FindRoute(s.R, k, "")
	if !ok {
		return formSpec{}, false
	}
	s.RT = rt
	page := wsURL(ws, "records", r.Name)
	switch {
	case s.Parent != nil:
		page = wsURL(ws, "records", r.Name, url.PathEscape(s.ID))
		s.Back = page
		if k == resource.Create {
			s.Action = page + "/add/" + s.R.Name
			s.Title, s.Submit = humanize(addLabel(s.R)), humanize(addLabel(s.R))
		} else {
			s.Action = page + "/sub/" + s.R.Name + "/" + url.PathEscape(s.ChildID)
			s.Title, s.Submit = "Edit "+s.R.Singular+" "+s.ChildID, "Save"
		}
	case k == resource.Create:
		s.Action, s.Back = page, page
		s.Title, s.Submit = "New "+r.Singular, "Create "+r.Singular
	default:
		s.Action = page + "/" + url.PathEscape(s.ID)
		s.Back = s.Action
		s.Title, s.Submit = "Edit "+r.Singular+" "+s.ID, "Save"
	}
	return s, true
}

// addLabel names a sub-resource's create: "add address", "record
// invoice payment" (a payment is recorded, not added).
func addLabel(r *resource.Resource) string {
	if strings.HasSuffix(r.Singular, "payment") {
		return "record " + r.Singular
	}
	return "add " + r.Singular
}

func (u *UI) newForm(c *fiber.Ctx) error {
	s, ok := formSpecOf(c, resource.Create)
	if !ok {
		return u.notFound(c)
	}
	v := formValues{}
	if s.Parent == nil {
		u.prefill(c, s, v)
		s.CurDefault = documentDefaults(s.RT.Op.Body, v, u.companyDefaults(c))
		// A record named in the address (?invoice_id=) fills what it has:
		// its client, currency and lines.
		u.refill(c, &s, v)
	} else if parent, err := u.found(c, s.Parent, s.ID); parent == nil {
		return err
	}
	defaults(s, v)
	return u.showForm(c, s, v, emptyRows, nil, nil, nil)
}

func (u *UI) editForm(c *fiber.Ctx) error {
	s, rec, err := u.editing(c)
	if rec == nil {
		return err
	}
	return u.showForm(c, s, valuesOf(rec, s.RT.Op.Body, u.formCurrency(c, s, nil, rec)), 1, nil, nil, nil)
}

// editing resolves an edit form's page and reads the record it changes as
// the API answers it, a sub-resource's from its parent's list; nil (with
// the page already answered) when there is none.
func (u *UI) editing(c *fiber.Ctx) (formSpec, record, error) {
	s, ok := formSpecOf(c, resource.Update)
	if !ok {
		return s, nil, u.notFound(c)
	}
	if s.Parent == nil {
		rec, err := u.found(c, s.R, s.ID)
		if late := resource.LateFields(s.R); late != nil && rec != nil && textOf(rec.get("status")) != "draft" {
			s.RT.Op.Body = slices.DeleteFunc(slices.Clone(s.RT.Op.Body), func(f resource.Field) bool { return !slices.Contains(late, f.Name) })
		}
		return s, rec, err
	}
	_, rows, err := u.list(c.UserContext(), workspaceOf(c), s.R, records.Page{Limit: api.MaxLimit, ParentID: s.ID})
	if err != nil {
		return s, nil, u.internal(c, err)
	}
	for _, row := range rows {
		if textOf(row.get("id")) == s.ChildID {
			return s, row, nil
		}
	}
	return s, nil, u.fail(c, http.StatusNotFound, "Not found", "This "+s.Parent.Singular+" has no "+s.R.Singular+" with the id "+s.ChildID+".")
}

// showForm draws a form with v; e is the API's refusal (its param mapped
// to an input by paths), errs the refusals the form found itself, every
// one by its input (those it could not read, the declaration's).
func (u *UI) showForm(c *fiber.Ctx, s formSpec, v formValues, extra int, e *apierr.Error, paths, errs map[string]string) error {
	d := formData{page: u.pageOf(c, capitalize(s.Title), "rec:"+cmp.Or(s.Parent, s.R).Name), Spec: s, Idem: newIdemKey()}
	status := http.StatusOK
	all := map[string]string{}
	for k, msg := range errs {
		all[k] = msg
	}
	if e != nil {
		status = e.Status
		input := e.Param
		if in, ok := paths[input]; ok {
			input = in
		}
		msg := inWords(input, e.Param, e.Message)
		if e.Code == "idempotency_key_reused" {
			// This form was sent before with other values (back, changed,
			// sent again): the first answer stands; this render's key is new.
			input, msg = "", "This form was already sent with other values, and that first submission stands. Check the "+
				whereShown(s)+", then send this form again to write another."
		}
		if _, taken := all[input]; !taken {
			all[input] = msg
		}
	}
	cur := u.formCurrency(c, s, v, nil)
	items, unplaced := buildForm(s.RT.Op.Body, v, s.create(), extra, cur, all)
	if _, _, ok := linesOf(s.RT.Op.Body); ok && s.create() {
		newRowsVAT(items, v, u.companyDefaults(c))
	}
	u.decorateRows(c, s, items, v, cur)
	u.decorateRefs(c, s.RT.Op.Body, items, v, s.Action, s.Asked)
	if s.Focus == "" && s.FocusOp == "" {
		s.Focus = firstRefused(items) // a refused form: where to correct it
	}
	focus(items, s.Focus, s.FocusOp)
	d.Items = items
	if len(errs) > 0 {
		status = http.StatusBadRequest
	}
	switch {
	case len(all) == 0:
	case s.HeldZeroVAT:
		d.Error = "The " + s.R.Singular + " was not saved: some lines are at 0 % VAT while the company's default rate is not. " +
			"Change their rate, or tick \"Save the lines at 0 % VAT\" below and send again."
	case len(unplaced) > 0:
		d.Error = "The " + s.R.Singular + " was not saved: " + strings.Join(unplaced, " ")
		if len(unplaced) < len(all) {
			d.Error += " See also the fields marked below."
		}
	case len(all) == 1:
		d.Error = "The " + s.R.Singular + " was not saved; see the field marked below."
	default:
		d.Error = "The " + s.R.Singular + " was not saved; see the fields marked below."
	}
	return render(c, status, recordFormView(d))
}

// focus marks the input named name, or the rows button whose value is
// op, to take the focus when the form is drawn.
func focus(items []formItem, name, op string) {
	for _, it := range items {
		if it.Field != nil && name != "" && it.Field.Name == name {
			it.Field.Focus = true
		}
		if rs := it.Rows; rs != nil {
			rs.FocusOp = op
			for i := range rs.Rows {
				for j := range rs.Rows[i] {
					if name != "" && rs.Rows[i][j].Name == name {
						rs.Rows[i][j].Focus = true
					}
				}
			}
		}
	}
}

// firstRefused is the first input, in the form's order, that a refusal
// names; "" when none.
func firstRefused(items []formItem) string {
	for _, it := range items {
		if it.Field != nil && it.Field.Error != "" {
			return it.Field.Name
		}
		if it.Rows != nil {
			for _, row := range it.Rows.Rows {
				for _, ff := range row {
					if ff.Error != "" && !ff.Hidden {
						return ff.Name
					}
				}
			}
		}
	}
	return ""
}

// inputsOf are the names of a form's inputs a person types in, in order
// (a row's Hidden ids left out).
func inputsOf(items []formItem) []string {
	var out []string
	for _, it := range items {
		if it.Field != nil {
			out = append(out, it.Field.Name)
			continue
		}
		for _, row := range it.Rows.Rows {
			for _, ff := range row {
				if !ff.Hidden {
					out = append(out, ff.Name)
				}
			}
		}
	}
	return out
}

// nextInput is the input after name that the person works in next: not
// one filled for them (skip), nor a picked record's name (client_name
// after client_id); "" when none.
func nextInput(inputs []string, name string, skip map[string]bool) string {
	i := slices.Index(inputs, name)
	if i < 0 {
		return ""
	}
	companion := strings.TrimSuffix(name, "_id") + "_name"
	for _, n := range inputs[i+1:] {
		if !skip[n] && n != companion {
			return n
		}
	}
	return ""
}

// moreRows ("add lines") and rowOp (remove, move, find and pick an item)
// are buttons that redraw the form, saving nothing.
const (
	moreRows = "_more"
	rowOp    = "_op"
	idemName = "_idem"
)

func (u *UI) createRecord(c *fiber.Ctx) error {
	s, ok := formSpecOf(c, resource.Create)
	if !ok {
		return u.notFound(c)
	}
	return u.submitForm(c, s, nil)
}

func (u *UI) updateRecord(c *fiber.Ctx) error {
	s, rec, err := u.editing(c)
	if rec == nil {
		return err
	}
	return u.submitForm(c, s, rec)
}

// submitForm runs a posted New or Edit form (rec is the record edited),
// or redraws it after a picker's or a rows editor's button. Every value
// the form cannot read in its unit, and every refusal of the declaration,
// answers the form again, each by its input and with all that was typed,
// writing nothing; then the write runs as /v1's does.
func (u *UI) submitForm(c *fiber.Ctx, s formSpec, rec record) error {
	op := s.RT.Op
	v := formValuesOf(c, op.Body)
	if s.create() && resource.CurrencyCode.Match(c.FormValue(curDefault)) {
		s.CurDefault = c.FormValue(curDefault)
	}
	o := c.FormValue(rowOp)
	redraw := o != "" || c.FormValue(moreRows) != ""
	refErrs, asked := u.reconcileRefs(c, op.Body, v, !redraw)
	filled := u.refill(c, &s, v)
	if verb, field, id := parseRefOp(o); verb != "" {
		if verb == pickRef {
			for k := range u.pickRecord(c, &s, v, field, id) {
				filled[k] = true
			}
			s.Focus = u.nextAfter(c, s, v, field, filled)
		}
		return u.showForm(c, s, v, 0, nil, nil, nil)
	}
	if c.FormValue(moreRows) != "" {
		for _, f := range op.Body {
			if rowsField(f) && formable(f) && len(f.Items) > 0 {
				// The first blank row, where the next line goes.
				s.Focus = rowName(f, firstBlankRow(v, f), firstShown(f))
				break
			}
		}
		return u.showForm(c, s, v, emptyRows, nil, nil, nil)
	}
	if o != "" {
		return u.rowsOp(c, s, v, o)
	}
	in := reading{cur: u.formCurrency(c, s, v, rec)}
	var old formValues
	if rec != nil {
		in.oldCur = u.formCurrency(c, s, nil, rec)
		old = valuesOf(rec, op.Body, in.oldCur)
	}
	body, paths, errs := bodyOf(op.Body, v, old, in)
	for k, msg := range refErrs {
		errs[k] = msg
	}
	for k, msg := range declErrors(op.Body, body, paths) {
		if _, ok := errs[k]; !ok {
			errs[k] = msg
		}
	}
	if len(errs) > 0 {
		s.Asked = asked
		return u.showForm(c, s, v, 0, nil, nil, errs)
	}
	if c.FormValue(confirmZero) == "" && sendsLines(op.Body, body) {
		if held := zeroVAT(op.Body, v, u.companyDefaults(c)); len(held) > 0 {
			s.HeldZeroVAT = true
			return u.showForm(c, s, v, 0, nil, nil, held)
		}
	}
	if op.BulkKey != "" {
		// One element of a bulk body (a tracking event): its fields' params
		// come back as events[0].field.
		body = append(append([]byte(`{"`+op.BulkKey+`":[`), body...), "]}"...)
		for _, f := range op.Body {
			paths[op.BulkKey+"[0]."+f.Name] = f.Name
		}
	}
	key := ""
	if s.create() {
		// A form sent twice replays the first answer. An edit needs no key:
		// it sends what differs from the record, so a repeat changes nothing.
		key = c.FormValue(idemName)
	}
	res, e := u.write(c, s.RT, s.ID, s.ChildID, body, key)
	if e != nil {
		// A client error goes back to its form, anything else to an error page.
		switch {
		case e.Status == http.StatusNotFound && e.Param == "" && (!s.create() || s.Parent != nil):
			// The record edited, or the parent added to, is gone. (A create
			// that names a missing record answers its form.)
			return u.fail(c, http.StatusNotFound, "Not found", capitalize(e.Message)+".")
		case e.Status >= 500:
			return u.internal(c, e)
		}
		return u.showForm(c, s, v, 0, e, paths, nil)
	}
	ws := workspaceOf(c)
	switch {
	case s.Parent != nil:
		done := "saved"
		if s.create() {
			done = "added:" + s.R.Name
		}
		return redirect(c, s.Back+"?done="+url.QueryEscape(done))
	case s.create():
		var made struct{ ID string }
		if err := json.Unmarshal(res.Body, &made); err != nil || made.ID == "" {
			return u.internal(c, err)
		}
		to := wsURL(ws, "records", s.R.Name, url.PathEscape(made.ID)) + "?done=created"
		if res.Secret != "" {
			// A replay has none: the secret was shown to the first.
			u.setFlash(c, to, res.Secret)
		}
		return redirect(c, to)
	}
	return redirect(c, s.Action+"?done=saved")
}

// nextAfter is the input after field that the person works in next, in
// the form as it will be drawn; skip are the inputs just filled for them.
func (u *UI) nextAfter(c *fiber.Ctx, s formSpec, v formValues, field string, skip map[string]bool) string {
	items, _ := buildForm(s.RT.Op.Body, v, s.create(), 0, "", nil)
	u.hideRowIDs(s, items)
	return nextInput(inputsOf(items), field, skip)
}

// firstBlankRow is the first row of f that holds nothing but a VAT rate
// (a New form fills it in), after the last that holds something.
func firstBlankRow(v formValues, f resource.Field) int {
	n := rowCount(v, f)
	for n > 0 && rowBlank(v, f, n-1) {
		n--
	}
	return n
}

// rowBlank reports whether row i of f holds nothing but a VAT rate.
func rowBlank(v formValues, f resource.Field, i int) bool {
	for _, it := range f.Items {
		if it.Name != "vat_rate_bp" && strings.TrimSpace(v[rowName(f, i, it)]) != "" {
			return false
		}
	}
	return true
}

// firstShown is the first column of f's rows that the table shows.
func firstShown(f resource.Field) resource.Field {
	for _, it := range f.Items {
		if !hiddenColumn(f, it) {
			return it
		}
	}
	return f.Items[0]
}

// current reads a record of the workspace as the API answers it; nil when
// the workspace has none with this id.
func (u *UI) current(c *fiber.Ctx, r *resource.Resource, id string) (record, error) {
	b, err := u.core.Records.Get(c.UserContext(), r, recordsWorkspace(workspaceOf(c)), id, "")
	if e, ok := apierr.As(err); ok && e.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(b)
}

// found is current for a page about the record: nil (with the page
// already answered) when it cannot be read.
func (u *UI) found(c *fiber.Ctx, r *resource.Resource, id string) (record, error) {
	rec, err := u.current(c, r, id)
	if err != nil {
		return nil, u.internal(c, err)
	}
	if rec == nil {
		return nil, u.recordMissing(c, r, id)
	}
	return rec, nil
}

func (u *UI) recordMissing(c *fiber.Ctx, r *resource.Resource, id string) error {
	return u.fail(c, http.StatusNotFound, "Not found", "This workspace has no "+r.Singular+" with the id "+id+".")
}

// whereShown names where a form's records show: "invoice's payments", "sales orders".
func whereShown(s formSpec) string {
	if s.Parent != nil {
		return s.Parent.Singular + "'s " + s.R.Parent.Segment
	}
	return humanizeLower(s.R.Name)
}

// defaults fill what a person should not have to invent on New: a
// required id (a payment's) and a required date (today).
func defaults(s formSpec, v formValues) {
	for _, f := range s.RT.Op.Body {
		switch {
		case !f.Required || v[f.Name] != "":
		case f.Name == "id" && f.Type == resource.String:
			v[f.Name] = ids.New(s.R.Prefix)
		case f.Type == resource.Date:
			v[f.Name] = time.Now().UTC().Format(time.DateOnly)
		}
	}
}

// newIdemKey is a form's Idempotency-Key, new on every render.
func newIdemKey() string { return ids.QuickAt("form", time.Now()) }

// Actions.

// irreversible actions ask first.
var irreversible = []string{"void", "delete", "cancel", "archive", "decline", "reject", "disable"}

// recordAction is a button of a record page.
type recordAction struct {
	Name    string // the action's name, "delete", or "to-<status>"
	Label   string
	Summary string
	URL     string // where the button posts, or the confirmation page or form
	Confirm bool   // the button leads to a confirmation page
	Link    bool   // the button opens a form (a sub-resource's or a related record's)
	Idem    string // a one-button form's Idempotency-Key
}

// stepPrefix names the actions that move a status forward through an
// update (a shipment's in_transit, delivered).
const stepPrefix = "to-"

// actionsOf lists what the record's state allows, in declaration order:
// actions, delete, status steps, sub-resource creates (record a payment),
// and creates of other resources naming the record (an order's shipment).
func actionsOf(ws *ent.Workspace, r *resource.Resource, id string, rec record) []recordAction {
	if !writable(ws, r) {
		return nil
	}
	status := textOf(rec.get("status"))
	allowed := func(op resource.Op) bool {
		return status != "" && op.Allowed(status) || status == "" && len(op.From) == 0
	}
	base := wsURL(ws, "records", r.Name, url.PathEscape(id))
	var out []recordAction
	for _, op := range r.Ops {
		name := op.Name
		switch op.Kind {
		case resource.Action:
		case resource.Delete:
			name = "delete"
		case resource.Update:
			if !allowed(op) {
				continue
			}
			for _, to := range statusSteps(op, status) {
				out = append(out, recordAction{Name: stepPrefix + to, Label: "Mark " + humanizeLower(to), Idem: newIdemKey(),
					Summary: op.Summary, URL: base + "/do/" + stepPrefix + to})
			}
			continue
		default:
			continue
		}
		if !allowed(op) {
			continue
		}
		a := recordAction{Name: name, Label: humanize(name), Summary: op.Summary, URL: base + "/do/" + name, Idem: newIdemKey()}
		a.Confirm = isIrreversible(name) || slices.ContainsFunc(op.Body, formable)
		out = append(out, a)
	}
	for _, sub := range resource.All {
		if sub.Parent == nil || sub.Parent.Resource != r {
			continue
		}
		op, ok := sub.Op(resource.Create)
		if !ok || !writable(ws, sub) || !allowed(op) {
			continue
		}
		out = append(out, recordAction{Name: "add-" + sub.Name, Label: humanize(addLabel(sub)), Summary: op.Summary,
			URL: base + "/add/" + sub.Name, Link: true})
	}
	for _, rel := range related(r) {
		op, _ := rel.R.Op(resource.Create)
		if !writable(ws, rel.R) || op.FromOf == rel.Field && !(status != "" && op.Allowed(status)) {
			continue
		}
		label := "New " + rel.R.Singular
		if f, ok := resource.FollowUpOf(r, rel.R); ok {
			if !f.Allowed(status) {
				continue
			}
			label = f.Label
		}
		if rows, ok := prefillRows(op, r, rec); ok && len(rows) == 0 && ownRows[rel.R] == nil {
			continue // nothing of the record is left to take (an order shipped whole)
		}
		out = append(out, recordAction{Name: "new-" + rel.R.Name, Label: label, Summary: op.Summary,
			URL: wsURL(ws, "records", rel.R.Name, "new") + "?" + url.Values{rel.Field: {id}}.Encode(), Link: true})
	}
	return out
}

// statusSteps are the states an update may move a record to from status:
// an update-only status enum (a shipment's) moves only forward.
func statusSteps(op resource.Op, status string) []string {
	for _, f := range op.Body {
		if f.Name == "status" && f.Type == resource.Enum && f.UpdateOnly {
			if i := slices.Index(f.Values, status); i >= 0 {
				return f.Values[i+1:]
			}
		}
	}
	return nil
}

// actionRoute is the operation a record's action button names.
func actionRoute(r *resource.Resource, name string) (api.Route, bool) {
	switch {
	case name == "delete":
		return api.FindRoute(r, resource.Delete, "")
	case strings.HasPrefix(name, stepPrefix):
		rt, ok := api.FindRoute(r, resource.Update, "")
		if !ok {
			return rt, false
		}
		for _, f := range rt.Op.Body {
			if f.Name == "status" && f.UpdateOnly && slices.Contains(f.Values, strings.TrimPrefix(name, stepPrefix)) {
				return rt, true
			}
		}
		return api.Route{}, false
	}
	return api.FindRoute(r, resource.Action, name)
}

// stepBody is the update that moves rec to status, with the required
// fields a PATCH carries as the record has them.
func stepBody(op resource.Op, rec record, status string) []byte {
	out := map[string]any{"status": status}
	for _, f := range op.Body {
		if f.Required {
			out[f.Name] = rec.get(f.Name)
		}
	}
	b, _ := json.Marshal(out)
	return b
}

type actionData struct {
	page
	R      *resource.Resource
	ID     string
	Back   string // the record's page, named: "Invoice INV-000042"
	A      recordAction
	Items  []formItem
	Danger bool
}

// actionOf is the workspace, resource and operation an action's page names.
func actionOf(c *fiber.Ctx) (*ent.Workspace, *resource.Resource, api.Route, bool) {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil || !writable(ws, r) {
		return nil, nil, api.Route{}, false
	}
	rt, ok := actionRoute(r, c.Params("name"))
	return ws, r, rt, ok
}

// actionPage asks to confirm an action, with its fields when it has some.
func (u *UI) actionPage(c *fiber.Ctx) error {
	return u.showAction(c, formValues{}, nil, nil)
}

// showAction asks to confirm an action; e is the API's refusal, errs
// the refusals the form found itself, by input.
func (u *UI) showAction(c *fiber.Ctx, v formValues, e *apierr.Error, errs map[string]string) error {
	ws, r, rt, ok := actionOf(c)
	if !ok {
		return u.notFound(c)
	}
	name, id := c.Params("name"), c.Params("id")
	rec, err := u.found(c, r, id)
	if rec == nil {
		return err
	}
	label, fields := humanize(name), rt.Op.Body
	if rt.Op.Kind == resource.Update {
		label, fields = "Mark "+humanizeLower(strings.TrimPrefix(name, stepPrefix)), nil
	}
	// "Void invoice INV-000042?": the record by its number or name.
	d := actionData{page: u.pageOf(c, label+" "+r.Singular+" "+cmp.Or(nameOf(r, rec), id)+"?", "rec:"+r.Name), R: r, ID: id,
		Back: recordTitle(r, rec, id), Danger: isIrreversible(name),
		A: recordAction{Name: name, Label: label, Summary: rt.Op.Summary, URL: wsURL(ws, "records", r.Name, url.PathEscape(id), "do", name), Idem: newIdemKey()}}
	status := http.StatusOK
	all := map[string]string{}
	for k, msg := range errs {
		all[k] = msg
	}
	if e != nil {
		status = e.Status
		if _, taken := all[e.Param]; !taken {
			all[e.Param] = inWords(e.Param, e.Param, e.Message)
		}
	}
	items, unplaced := buildForm(fields, v, true, 0, u.currencyOf(c, rt.Op, v, rec), all)
	u.decorateRefs(c, fields, items, v, d.A.URL, nil)
	focus(items, firstRefused(items), "")
	d.Items = items
	if len(unplaced) > 0 {
		d.Error = strings.Join(unplaced, " ")
	} else if len(all) > 0 {
		d.Error = "Nothing was done; see the field marked below."
	}
	if len(errs) > 0 {
		status = http.StatusBadRequest
	}
	return render(c, status, actionView(d))
}

// runAction runs a record's action or delete, as the API's POST
// /v1/{resource}/{id}/{action} or DELETE would.
func (u *UI) runAction(c *fiber.Ctx) error {
	ws, r, rt, ok := actionOf(c)
	if !ok {
		return u.notFound(c)
	}
	name, id := c.Params("name"), c.Params("id")
	v := formValuesOf(c, rt.Op.Body)
	o := c.FormValue(rowOp)
	refErrs, _ := u.reconcileRefs(c, rt.Op.Body, v, o == "")
	if verb, field, picked := parseRefOp(o); verb != "" {
		// A picker's Find or pick: the form again, nothing done.
		if verb == pickRef {
			for _, f := range rt.Op.Body {
				if tr := refField(ws, f); f.Name == field && tr != nil && byIDPrefix(picked) == tr {
					v[field], v[wasPrefix+field] = picked, picked
					delete(v, queryPrefix+field)
				}
			}
		}
		return u.showAction(c, v, nil, nil)
	}
	var rec record
	if hasMoney(rt.Op.Body) {
		var err error
		if rec, err = u.found(c, r, id); rec == nil {
			return err
		}
	}
	body, paths, errs := bodyOf(rt.Op.Body, v, nil, reading{cur: u.currencyOf(c, rt.Op, v, rec)})
	for k, msg := range refErrs {
		errs[k] = msg
	}
	if rt.Op.Kind != resource.Update { // a status step sends the record's own (stepBody)
		for k, msg := range declErrors(rt.Op.Body, body, paths) {
			if _, ok := errs[k]; !ok {
				errs[k] = msg
			}
		}
	}
	if len(errs) > 0 {
		return u.showAction(c, v, nil, errs)
	}
	key := c.FormValue(idemName)
	if rt.Op.Kind == resource.Update {
		// A status step: the record's required fields and the new status.
		// It needs no key: a repeat asks for the state the record has.
		rec, err := u.found(c, r, id)
		if rec == nil {
			return err
		}
		body, key = stepBody(rt.Op, rec, strings.TrimPrefix(name, stepPrefix)), ""
	}
	_, e := u.write(c, rt, id, "", body, key)
	if e == nil {
		if name == "delete" {
			return redirect(c, wsURL(ws, "records", r.Name)+"?done=deleted")
		}
		return redirect(c, wsURL(ws, "records", r.Name, url.PathEscape(id))+"?done="+url.QueryEscape(name))
	}
	if e.Status == http.StatusNotFound && e.Param == "" {
		// The record is gone, or a record the form names is missing.
		if rec, err := u.current(c, r, id); err != nil || rec == nil {
			return u.recordMissing(c, r, id)
		}
	}
	if e.Status >= 500 {
		return u.internal(c, e)
	}
	if e.Code == "invalid_state_transition" || !slices.ContainsFunc(rt.Op.Body, formable) {
		// The state moved on meanwhile, or the action cannot run: say so
		// on the record's page, which shows what the state allows now.
		return u.showRecord(c, r, id, e.Status, capitalize(e.Message)+".")
	}
	// Refused as typed (an adjustment over the balance): the form again,
	// with everything typed and the refusal by its field.
	return u.showAction(c, v, e, nil)
}

// doneNotice is the message of a record page after a write.
func doneNotice(r *resource.Resource, done string, rec record) string {
	switch done {
	case "":
		return ""
	case "created":
		return "The " + r.Singular + " is created."
	case "saved":
		return "Saved."
	case "deleted":
		return "The " + r.Singular + " is deleted."
	}
	if sub, ok := strings.CutPrefix(done, "added:"); ok {
		if c := resource.ByName(sub); c != nil && c.Parent != nil && c.Parent.Resource == r {
			return "The " + c.Singular + " is " + map[bool]string{true: "recorded", false: "added"}[strings.HasSuffix(c.Singular, "payment")] + "." + nowState(r, rec)
		}
		return ""
	}
	if to, ok := strings.CutPrefix(done, stepPrefix); ok {
		return "Done: marked " + humanizeLower(to) + "." + nowState(r, rec)
	}
	if _, ok := r.Action(done); ok {
		return "Done: " + humanizeLower(done) + "." + nowState(r, rec)
	}
	return ""
}

// nowState says the record's status after a write: " The invoice is now paid."
func nowState(r *resource.Resource, rec record) string {
	if st := textOf(rec.get("status")); st != "" {
		return " The " + r.Singular + " is now " + strings.ReplaceAll(st, "_", " ") + "."
	}
	return ""
}

// hasOp reports whether r declares an operation of kind k.
func hasOp(r *resource.Resource, k resource.OpKind) bool {
	_, ok := api.FindRoute(r, k, "")
	return ok
}

func isIrreversible(name string) bool { return slices.Contains(irreversible, name) }

func itoa(n int) string { return strconv.Itoa(n) }

func bound(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// noChoice is the empty choice of a select.
func noChoice(f resource.Field) string {
	switch {
	case f.Nullable:
		return "None"
	case f.Required:
		return "Choose…"
	}
	return "Default"
}
