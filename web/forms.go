package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// The New and Edit forms are made from the write operations' declared
// bodies (api/resource), and submitted to the same operations /v1 runs
// (api.Server.RunWrite): the UI turns form values into the JSON body a
// client would send, and shows the API's refusal next to the field its
// param names. No rule of the business is checked here.

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
}

// kind is the input a field gets.
func (f formField) kind() string {
	switch f.F.Type {
	case resource.Integer:
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
}

// formItem is a field or a rows editor, in declaration order.
type formItem struct {
	Field *formField
	Rows  *formRows
}

type formData struct {
	page
	R      *resource.Resource
	ID     string // the record edited; "" on New
	Action string // where the form posts
	Back   string
	Items  []formItem
	Submit string
	Doc    string
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
			if it.Name == "" || !formable(it) || it.Type == resource.Array {
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

// valuesOf reads the current values of a record as the form shows them.
func valuesOf(rec record, fields []resource.Field) formValues {
	v := formValues{}
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			rows, _ := objectRows(rec.get(f.Name))
			for i, row := range rows {
				for _, it := range f.Items {
					v[rowName(f, i, it)] = scalarText(row.get(it.Name))
				}
			}
			continue
		}
		if stringArray(f) {
			if xs, ok := rec.get(f.Name).([]any); ok {
				var lines []string
				for _, x := range xs {
					lines = append(lines, scalarText(x))
				}
				v[f.Name] = strings.Join(lines, "\n")
			}
			continue
		}
		v[f.Name] = scalarText(rec.get(f.Name))
	}
	return v
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
	n := 0
	for i := 0; ; i++ {
		found := false
		for _, it := range f.Items {
			if _, ok := v[rowName(f, i, it)]; ok {
				found = true
				break
			}
		}
		if !found {
			return n
		}
		n = i + 1
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
	return v
}

// buildForm lays out a form's inputs with values and the refusal's param.
func buildForm(fields []resource.Field, v formValues, tri bool, extraRows int, errParam, errMsg string) ([]formItem, bool) {
	var items []formItem
	placed := false
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		if rowsField(f) {
			rs := &formRows{F: f}
			for _, it := range f.Items {
				rs.Cols = append(rs.Cols, it)
			}
			n := rowCount(v, f) + extraRows
			n = min(n, maxRows(f))
			for i := 0; i < n; i++ {
				var row []formField
				for _, it := range f.Items {
					name := rowName(f, i, it)
					ff := formField{F: it, Name: name, ID: inputID(name), Value: v[name]}
					if name == errParam {
						ff.Error, placed = errMsg, true
					}
					row = append(row, ff)
				}
				rs.Rows = append(rs.Rows, row)
			}
			if !placed && (errParam == f.Name || strings.HasPrefix(errParam, f.Name+"[")) {
				rs.Error, placed = errMsg, true
			}
			items = append(items, formItem{Rows: rs})
			continue
		}
		ff := &formField{F: f, Name: f.Name, ID: inputID(f.Name), Value: v[f.Name], Tri: tri && f.Type == resource.Boolean}
		if f.Name == errParam || strings.HasPrefix(errParam, f.Name+"[") {
			ff.Error, placed = errMsg, true
		}
		items = append(items, formItem{Field: ff})
	}
	return items, placed
}

// bodyOf turns form values into the JSON body a client would send. On
// create (old == nil) an empty field is left out; on edit only what
// changed is sent (and the required fields, which a PATCH carries): an
// emptied nullable field becomes null. rowIndex maps the body's row
// numbers back to the form's, for errors.
func bodyOf(fields []resource.Field, v, old formValues) ([]byte, map[string]string) {
	out := map[string]any{}
	paths := map[string]string{} // body param -> input name, where they differ
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
					if v[k] != old[k] {
						changed = true
					}
					if x, ok := jsonValue(it, v[k], false); ok {
						row[it.Name] = x
					}
				}
				if len(row) == 0 {
					continue // a blank row is no line
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
		if old != nil && val == old[f.Name] && !f.Required {
			continue
		}
		if x, ok := jsonValue(f, val, old != nil); ok {
			out[f.Name] = x
		}
	}
	b, _ := json.Marshal(out)
	return b, paths
}

// jsonValue is a form value as JSON: integers as numbers (a value that
// is not one is sent as typed, for the API to refuse with its message),
// booleans as true or false, strings as they are. ok is false when the
// field is left out.
func jsonValue(f resource.Field, s string, edit bool) (any, bool) {
	if f.Type == resource.Boolean {
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		if edit {
			return false, true // an unchecked box
		}
		return nil, false
	}
	if strings.TrimSpace(s) == "" {
		switch {
		case edit && f.Nullable:
			return nil, true
		case edit && f.Type == resource.String:
			return "", true
		}
		return nil, false
	}
	switch f.Type {
	case resource.Integer:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n, true
		}
		return s, true
	case resource.Array: // strings, one a line
		var xs []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				xs = append(xs, l)
			}
		}
		return xs, true
	}
	return s, true
}

// writable reports whether the session may write records: admin users
// are the workspace's admins (the UI has no read-only sessions), and
// the workspace's plan must reach the resource.
func writable(ws *ent.Workspace, r *resource.Resource) bool {
	return access.GatePlan(access.WorkspaceOf(ws), r) == nil
}

func (u *UI) principal(c *fiber.Ctx) *access.Principal {
	a, _ := c.Locals(adminKey).(*ent.AdminUser)
	return access.AdminPrincipal(access.WorkspaceOf(workspaceOf(c)), a.ID, a.Email)
}

// formTarget resolves the resource and operation of a form page.
func formTarget(c *fiber.Ctx, k resource.OpKind) (*resource.Resource, api.Route, bool) {
	r := browsableByName(c.Params("res"))
	if r == nil {
		return nil, api.Route{}, false
	}
	rt, ok := api.FindRoute(r, k, "")
	return r, rt, ok
}

func (u *UI) newForm(c *fiber.Ctx) error {
	r, rt, ok := formTarget(c, resource.Create)
	if !ok || !writable(workspaceOf(c), r) {
		return u.notFound(c)
	}
	v, err := u.prefill(c, r, rt)
	if err != nil {
		return u.internal(c, err)
	}
	return u.showForm(c, r, rt, "", v, emptyRows, nil, nil)
}

func (u *UI) showForm(c *fiber.Ctx, r *resource.Resource, rt api.Route, id string, v formValues, extra int, e *apierr.Error, paths map[string]string) error {
	ws := workspaceOf(c)
	d := formData{R: r, ID: id, Doc: rt.Op.Summary}
	if id == "" {
		d.page = u.pageOf(c, "New "+r.Singular)
		d.Action, d.Back, d.Submit = wsURL(ws, "records", r.Name), wsURL(ws, "records", r.Name), "Create "+r.Singular
	} else {
		d.page = u.pageOf(c, "Edit "+r.Singular+" "+id)
		d.Action = wsURL(ws, "records", r.Name, url.PathEscape(id))
		d.Back, d.Submit = d.Action, "Save"
	}
	d.Current = "rec:" + r.Name
	status := http.StatusOK
	var param, msg string
	if e != nil {
		status = e.Status
		param, msg = e.Param, capitalize(e.Message)+"."
		if in, ok := paths[param]; ok {
			param = in
		}
	}
	items, placed := buildForm(rt.Op.Body, v, id == "", extra, param, msg)
	d.Items = items
	if e != nil {
		d.Error = "The " + r.Singular + " was not saved: " + msg
		if placed {
			d.Error = "The " + r.Singular + " was not saved; see the field marked below."
		}
	}
	return render(c, status, recordFormView(d))
}

// moreRows is the "add lines" submit button: it shows the form again with
// more blank rows, saving nothing.
const moreRows = "_more"

func (u *UI) createRecord(c *fiber.Ctx) error {
	r, rt, ok := formTarget(c, resource.Create)
	if !ok || !writable(workspaceOf(c), r) {
		return u.notFound(c)
	}
	v := formValuesOf(c, rt.Op.Body)
	if c.FormValue(moreRows) != "" {
		return u.showForm(c, r, rt, "", v, emptyRows, nil, nil)
	}
	body, paths := bodyOf(rt.Op.Body, v, nil)
	res, e := u.srv.RunWrite(c.UserContext(), u.principal(c), rt, "", "", body)
	if e != nil {
		return u.writeRefused(c, e, func() error { return u.showForm(c, r, rt, "", v, 0, e, paths) })
	}
	var made struct{ ID string }
	if err := json.Unmarshal(res.Body, &made); err != nil || made.ID == "" {
		return u.internal(c, err)
	}
	if res.Secret != "" {
		return u.showSecret(c, r, rt, made.ID, res.Secret)
	}
	return redirect(c, wsURL(workspaceOf(c), "records", r.Name, url.PathEscape(made.ID))+"?done=created")
}

// writeRefused shows a client error with its form, and anything else as
// an error page.
func (u *UI) writeRefused(c *fiber.Ctx, e *apierr.Error, again func() error) error {
	switch {
	case e.Status == http.StatusNotFound:
		return u.fail(c, http.StatusNotFound, "Not found", capitalize(e.Message)+".")
	case e.Status >= 500:
		return u.internal(c, e)
	}
	return again()
}

// current reads a record of the workspace as the API answers it; nil when
// the workspace has none with this id.
func (u *UI) current(c *fiber.Ctx, r *resource.Resource, id string) (record, error) {
	b, err := u.srv.Records.Get(c.UserContext(), r, recordsWorkspace(workspaceOf(c)), id, "")
	if e, ok := apierr.As(err); ok && e.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(b)
}

func (u *UI) recordMissing(c *fiber.Ctx, r *resource.Resource, id string) error {
	return u.fail(c, http.StatusNotFound, "Not found", "This workspace has no "+r.Singular+" with the id "+id+".")
}

func (u *UI) editForm(c *fiber.Ctx) error {
	r, rt, ok := formTarget(c, resource.Update)
	if !ok || !writable(workspaceOf(c), r) {
		return u.notFound(c)
	}
	id := c.Params("id")
	rec, err := u.current(c, r, id)
	if err != nil {
		return u.internal(c, err)
	}
	if rec == nil {
		return u.recordMissing(c, r, id)
	}
	return u.showForm(c, r, rt, id, valuesOf(rec, rt.Op.Body), 1, nil, nil)
}

func (u *UI) updateRecord(c *fiber.Ctx) error {
	r, rt, ok := formTarget(c, resource.Update)
	if !ok || !writable(workspaceOf(c), r) {
		return u.notFound(c)
	}
	id := c.Params("id")
	rec, err := u.current(c, r, id)
	if err != nil {
		return u.internal(c, err)
	}
	if rec == nil {
		return u.recordMissing(c, r, id)
	}
	v := formValuesOf(c, rt.Op.Body)
	if c.FormValue(moreRows) != "" {
		return u.showForm(c, r, rt, id, v, emptyRows, nil, nil)
	}
	body, paths := bodyOf(rt.Op.Body, v, valuesOf(rec, rt.Op.Body))
	if _, e := u.srv.RunWrite(c.UserContext(), u.principal(c), rt, id, "", body); e != nil {
		return u.writeRefused(c, e, func() error { return u.showForm(c, r, rt, id, v, 0, e, paths) })
	}
	return redirect(c, wsURL(workspaceOf(c), "records", r.Name, url.PathEscape(id))+"?done=saved")
}

// Actions.

// irreversible actions ask first.
var irreversible = []string{"void", "delete", "cancel", "archive", "decline", "reject", "disable"}

// recordAction is a button of a record page.
type recordAction struct {
	Name    string // the action's name, or "delete"
	Label   string
	Summary string
	URL     string // where the button posts, or the confirmation page
	Confirm bool   // the button leads to a confirmation page
}

// actionsOf lists the operations the record's state allows, in
// declaration order.
func actionsOf(ws *ent.Workspace, r *resource.Resource, id string, rec record) []recordAction {
	if !writable(ws, r) {
		return nil
	}
	status := textOf(rec.get("status"))
	var out []recordAction
	for _, op := range r.Ops {
		name := op.Name
		switch op.Kind {
		case resource.Action:
		case resource.Delete:
			name = "delete"
		default:
			continue
		}
		if status != "" && !op.Allowed(status) || status == "" && len(op.From) > 0 {
			continue
		}
		a := recordAction{Name: name, Label: humanize(name), Summary: op.Summary,
			URL: wsURL(ws, "records", r.Name, url.PathEscape(id), "do", name)}
		a.Confirm = slices.Contains(irreversible, name) || anyFormable(op.Body)
		out = append(out, a)
	}
	return out
}

func anyFormable(fs []resource.Field) bool {
	return slices.ContainsFunc(fs, formable)
}

// actionRoute is the operation a record's action button names.
func actionRoute(r *resource.Resource, name string) (api.Route, bool) {
	if name == "delete" {
		return api.FindRoute(r, resource.Delete, "")
	}
	return api.FindRoute(r, resource.Action, name)
}

type actionData struct {
	page
	R      *resource.Resource
	ID     string
	A      recordAction
	Items  []formItem
	Danger bool
}

// actionPage asks to confirm an action, with its fields when it has some.
func (u *UI) actionPage(c *fiber.Ctx) error {
	return u.showAction(c, formValues{}, nil)
}

func (u *UI) showAction(c *fiber.Ctx, v formValues, e *apierr.Error) error {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil || !writable(ws, r) {
		return u.notFound(c)
	}
	name, id := c.Params("name"), c.Params("id")
	rt, ok := actionRoute(r, name)
	if !ok {
		return u.notFound(c)
	}
	rec, err := u.current(c, r, id)
	if err != nil {
		return u.internal(c, err)
	}
	if rec == nil {
		return u.recordMissing(c, r, id)
	}
	d := actionData{page: u.pageOf(c, humanize(name)+" "+r.Singular+" "+id), R: r, ID: id, Danger: slices.Contains(irreversible, name),
		A: recordAction{Name: name, Label: humanize(name), Summary: rt.Op.Summary, URL: wsURL(ws, "records", r.Name, url.PathEscape(id), "do", name)}}
	d.Current = "rec:" + r.Name
	status := http.StatusOK
	var param, msg string
	if e != nil {
		status, param, msg = e.Status, e.Param, capitalize(e.Message)+"."
	}
	var placed bool
	d.Items, placed = buildForm(rt.Op.Body, v, true, 0, param, msg)
	if e != nil && !placed {
		d.Error = msg
	}
	return render(c, status, actionView(d))
}

// runAction runs a record's action or delete, as the API's POST
// /v1/{resource}/{id}/{action} or DELETE would.
func (u *UI) runAction(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	r := browsableByName(c.Params("res"))
	if r == nil || !writable(ws, r) {
		return u.notFound(c)
	}
	name, id := c.Params("name"), c.Params("id")
	rt, ok := actionRoute(r, name)
	if !ok {
		return u.notFound(c)
	}
	v := formValuesOf(c, rt.Op.Body)
	body, _ := bodyOf(rt.Op.Body, v, nil)
	_, e := u.srv.RunWrite(c.UserContext(), u.principal(c), rt, id, "", body)
	if e == nil {
		if name == "delete" {
			return redirect(c, wsURL(ws, "records", r.Name)+"?done=deleted")
		}
		return redirect(c, wsURL(ws, "records", r.Name, url.PathEscape(id))+"?done="+url.QueryEscape(name))
	}
	if e.Status == http.StatusNotFound {
		return u.recordMissing(c, r, id)
	}
	if e.Status >= 500 {
		return u.internal(c, e)
	}
	if e.Status == http.StatusConflict || !anyFormable(rt.Op.Body) {
		// The state moved on meanwhile, or the action cannot run: say so
		// on the record's page, which shows what the state allows now.
		return u.showRecord(c, r, id, e.Status, capitalize(e.Message)+".")
	}
	return u.showAction(c, v, e)
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
	if _, ok := r.Action(done); ok {
		s := "Done: " + humanizeLower(done) + "."
		if st := textOf(rec.get("status")); st != "" {
			s += " The " + r.Singular + " is now " + strings.ReplaceAll(st, "_", " ") + "."
		}
		return s
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
