package web

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// Pickers. A field that names another record (a client, a vendor, an
// invoice, a sales order, a store) is chosen by the record's name or
// number: the person types, the matches show under the input (htmx posts
// the form and takes only the matches), and a match is picked by click or
// keyboard. Without script the "Find" button answers the form again with
// the matches to pick. The raw id input stays, under "Every field".
//
// Which fields are references is read from the declarations: a string
// field X_id names the resource whose Singular is X ("sales_order_id": a
// sales order), or the resource its declaration's Refers names.

const (
	// queryPrefix names a picker's text input: "_q.client_id".
	queryPrefix = "_q."
	// wasPrefix names the hidden input holding the id the picker's text
	// was drawn for, so that a changed text is told from a changed id.
	wasPrefix = "_was."
	// Picker ops (rowOp values): "findref:client_id", "pickref:client_id:cli_…".
	findRef = "findref"
	pickRef = "pickref"
)

// refTarget is the resource whose records f names; nil when f names none.
func refTarget(f resource.Field) *resource.Resource {
	if f.Type != resource.String || f.Format != nil {
		return nil
	}
	var r *resource.Resource
	if f.Refers != "" {
		r = browsableByName(f.Refers)
	} else if base, ok := strings.CutSuffix(f.Name, "_id"); ok {
		want := strings.ReplaceAll(base, "_", " ")
		for _, o := range browsable() {
			if o.Singular == want {
				r = o
				break
			}
		}
	}
	if r == nil || labelColumn(r) == "" {
		return nil
	}
	if _, ok := r.Op(resource.Get); !ok {
		return nil
	}
	return r
}

// refField is a form's field that gets a picker in workspace ws: a
// reference to a resource the workspace reaches.
func refField(ws *ent.Workspace, f resource.Field) *resource.Resource {
	if rowsField(f) || !formable(f) {
		return nil
	}
	r := refTarget(f)
	if r == nil || ws == nil || missing(ws, r) != "" {
		return nil
	}
	return r
}

// refPick is a reference field's picker as the form shows it.
type refPick struct {
	Target  *resource.Resource
	Query   string // the text in the picker: the record's name or number, or what was typed
	Was     string // the id the text names
	Post    string // where the picker's requests post: the form's address
	Results []refResult
	Asked   bool // the matches were asked for (Find): says when none matched
	Focus   bool // the first match takes the focus (a page answered without script)
}

// refResult is one record a picker offers.
type refResult struct{ Op, Label, Note string }

// findOp is the op of the picker's Find button (and of its type-ahead).
func (p refPick) findOp(field string) string { return findRef + ":" + field }

// pickListID is the id of the element that holds a picker's matches.
func pickListID(field string) string {
	return "picks-" + strings.NewReplacer("[", "-", "]", "", ".", "-").Replace(field)
}

// findVals is the body field the type-ahead adds to the form it posts.
func findVals(field string) string {
	b, _ := json.Marshal(map[string]string{rowOp: findRef + ":" + field})
	return string(b)
}

// parseRefOp reads a picker's op: verb, the field, and the id picked.
func parseRefOp(o string) (verb, field, id string) {
	verb, rest, ok := strings.Cut(o, ":")
	if !ok || verb != findRef && verb != pickRef {
		return "", "", ""
	}
	field, id, _ = strings.Cut(rest, ":")
	return verb, field, id
}

// readRefInputs adds a posted form's picker inputs to its values.
func readRefInputs(c *fiber.Ctx, fields []resource.Field, v formValues) {
	args := c.Request().PostArgs()
	for _, f := range fields {
		if refTarget(f) == nil || rowsField(f) {
			continue
		}
		for _, k := range []string{queryPrefix + f.Name, wasPrefix + f.Name} {
			if args.Has(k) {
				v[k] = string(args.Peek(k))
			}
		}
	}
}

// refNames are the names of the records a form's reference fields hold.
func (u *UI) refNames(c *fiber.Ctx, fields []resource.Field, v formValues) map[string]string {
	ws := workspaceOf(c)
	var ids []string
	for _, f := range fields {
		if refField(ws, f) != nil {
			if id := strings.TrimSpace(v[f.Name]); id != "" {
				ids = append(ids, id)
			}
			if was := strings.TrimSpace(v[wasPrefix+f.Name]); was != "" {
				ids = append(ids, was)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	names, err := u.namesOf(c.UserContext(), ws, ids)
	if err != nil {
		u.log.Warn("picker names", "err", err)
	}
	return names
}

// reconcileRefs makes each picker's id follow its text: a text changed
// from the record's name names the one record called so exactly, else
// none; an id typed under "Every field" is taken as typed. On a save
// (strict), a text that names no single record is refused, in words, by
// input name; the matches are then offered (asked).
func (u *UI) reconcileRefs(c *fiber.Ctx, fields []resource.Field, v formValues, strict bool) (errs map[string]string, asked []string) {
	ws := workspaceOf(c)
	var names map[string]string
	for _, f := range fields {
		r := refField(ws, f)
		q, posted := v[queryPrefix+f.Name]
		if r == nil || !posted {
			continue // no picker was sent (an API-like post): the id as sent
		}
		if names == nil {
			names = u.refNames(c, fields, v)
		}
		q = strings.TrimSpace(q)
		id, was := strings.TrimSpace(v[f.Name]), strings.TrimSpace(v[wasPrefix+f.Name])
		switch {
		case id != was: // the id was typed under "Every field"
			v[queryPrefix+f.Name] = cmp.Or(names[id], id)
			continue
		case id != "" && (q == names[id] || q == id):
			continue
		case q == "":
			v[f.Name] = ""
			continue
		case byIDPrefix(q) == r:
			v[f.Name], v[queryPrefix+f.Name] = q, cmp.Or(names[q], q)
			continue
		}
		// A name typed without picking: the one record called so.
		matches := u.refResults(c, r, f.Name, q)
		var exact []refResult
		for _, m := range matches {
			if strings.EqualFold(m.Label, q) {
				exact = append(exact, m)
			}
		}
		if len(exact) == 1 {
			_, _, v[f.Name] = parseRefOp(exact[0].Op)
			v[queryPrefix+f.Name] = exact[0].Label
			continue
		}
		v[f.Name] = ""
		if strict {
			if errs == nil {
				errs = map[string]string{}
			}
			what := label(strings.TrimSuffix(f.Name, "_id"))
			switch {
			case len(matches) == 0:
				errs[f.Name] = what + ": no " + r.Singular + " is called “" + q + "”; type part of its name or number and pick it."
			default:
				errs[f.Name] = what + ": pick the " + r.Singular + " from the list below."
			}
			asked = append(asked, f.Name)
		}
	}
	return errs, asked
}

// refResults searches the records of r as GET /v1/{r}?q= does, for the
// picker of field (at most 8; the first ones when q is empty).
func (u *UI) refResults(c *fiber.Ctx, r *resource.Resource, field, q string) []refResult {
	_, recs, err := u.list(c.UserContext(), workspaceOf(c), r, records.Page{Limit: 8, Q: strings.TrimSpace(q)})
	if err != nil {
		u.log.Warn("picker search", "resource", r.Name, "err", err)
		return nil
	}
	out := make([]refResult, 0, len(recs))
	for _, rec := range recs {
		id := textOf(rec.get("id"))
		out = append(out, refResult{Op: pickRef + ":" + field + ":" + id, Label: cmp.Or(nameOf(r, rec), id), Note: refNote(r, rec)})
	}
	return out
}

// refNote tells records of the same name apart: a client's email and
// currency, an invoice's client, total and status.
func refNote(r *resource.Resource, rec record) string {
	var parts []string
	for _, k := range []string{"name", "client_name", "vendor_name", "email", "amount_incl_vat_cents", "currency_code", "status"} {
		if k == labelColumn(r) {
			continue
		}
		x := rec.get(k)
		if x == nil || k == "currency_code" && rec.get("amount_incl_vat_cents") != nil {
			continue
		}
		if t := show(nil, k, x, rec).Text; t != "" && t != "—" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " · ")
}

// decorateRefs gives each reference field of items its picker, posting
// to post; the matches of a Find (op) are shown under it.
func (u *UI) decorateRefs(c *fiber.Ctx, fields []resource.Field, items []formItem, v formValues, post string, asked []string) {
	ws := workspaceOf(c)
	names := u.refNames(c, fields, v)
	verb, field, _ := parseRefOp(c.FormValue(rowOp))
	script := c.Get("HX-Request") == "true"
	for _, it := range items {
		f := it.Field
		if f == nil {
			continue
		}
		r := refField(ws, f.F)
		if r == nil {
			continue
		}
		id := strings.TrimSpace(f.Value)
		p := &refPick{Target: r, Post: post, Was: id}
		if q, ok := v[queryPrefix+f.Name]; ok {
			p.Query = q
		} else {
			p.Query = cmp.Or(names[id], id)
		}
		if verb == findRef && field == f.Name || slices.Contains(asked, f.Name) {
			p.Results, p.Asked = u.refResults(c, r, f.Name, p.Query), true
			// Without script the page is new: the first match takes the focus.
			p.Focus = !script && len(p.Results) > 0 && verb == findRef
		}
		f.Ref = p
	}
}

// pickRecord runs a picker's pick: the field takes the record, and the
// form takes from it what it fills (refill). It returns the inputs filled.
func (u *UI) pickRecord(c *fiber.Ctx, s *formSpec, v formValues, field, id string) map[string]bool {
	var f resource.Field
	for _, b := range s.RT.Op.Body {
		if b.Name == field {
			f = b
		}
	}
	r := refField(workspaceOf(c), f)
	if r == nil || byIDPrefix(id) != r {
		return nil
	}
	rec, err := u.current(c, r, id)
	if err != nil || rec == nil {
		return nil
	}
	v[field], v[queryPrefix+field], v[wasPrefix+field] = id, cmp.Or(nameOf(r, rec), id), id
	filled := u.refillFrom(c, s, v, field, rec)
	if s.create() {
		// The rows a create takes from the record it is of (an order's
		// lines to ship or return).
		for k := range u.takeRows(c, *s, v) {
			filled[k] = true
		}
	}
	return filled
}

// refItems are the fields of items that have a picker.
func refItems(items []formItem) []formField {
	var out []formField
	for _, it := range items {
		if it.Field != nil && it.Field.Ref != nil {
			out = append(out, *it.Field)
		}
	}
	return out
}

// refWhat is what a record of r is called by: "name", "number".
func refWhat(r *resource.Resource) string {
	return strings.ReplaceAll(labelColumn(r), "_", " ")
}

// refHintTail ends a picker's help: its declaration's doc past the id's
// shape ("; its name and currency are the defaults").
func refHintTail(f formField) string {
	doc := f.F.Doc
	if _, after, ok := strings.Cut(doc, "); "); ok {
		return "; " + strings.TrimSuffix(after, ".") + "."
	}
	return "."
}
