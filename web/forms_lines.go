package web

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// The rows editor of a document's lines. Every button is a submit that
// redraws the form and saves nothing, so the editor works without script;
// htmx swaps only the editor (or the amounts) instead of the page.

// choice is an option of a select made from records (an order's lines).
type choice struct{ Value, Label string }

// pick is an item or a variant a row may take.
type pick struct {
	Op    string // the rowOp that fills the row with it
	Label string
	Note  string
}

// lineSums are the amounts of a priced rows editor.
type lineSums struct {
	Amounts  map[int]string // the form row's amount excluding VAT
	Excl     string
	VAT      string
	Incl     string
	Problem  string // why the lines cannot be priced (the API's 400)
	Currency string
}

// priced reports whether rows are a document's priced lines.
func priced(f resource.Field) bool { return hasItem(f, "qty_milli") && hasItem(f, "unit_price_cents") }

// pickable reports whether rows name an item that a search can fill.
func pickable(f resource.Field) bool { return hasItem(f, "item_id") && hasItem(f, "description") }

func hasItem(f resource.Field, name string) bool {
	return slices.ContainsFunc(f.Items, func(it resource.Field) bool { return it.Name == name })
}

// decorateRows adds to each rows editor what its declaration allows:
// addresses, amounts (in cur), a related record's lines, a search's results.
func (u *UI) decorateRows(c *fiber.Ctx, s formSpec, items []formItem, v formValues, cur string) {
	ws := workspaceOf(c)
	for _, it := range items {
		rs := it.Rows
		if rs == nil {
			continue
		}
		rs.Post = s.Action
		if s.Parent == nil { // the search and the totals are a resource's own
			rs.Base = wsURL(ws, "records", s.R.Name)
		}
		if pickable(rs.F) && rs.Base != "" {
			rs.Pick = rs.Base + "/pick"
			hideIDs(rs)
			for i := range rs.Rows {
				for j := range rs.Rows[i] {
					if ff := &rs.Rows[i][j]; ff.F.Name == "description" {
						ff.Attrs = templ.Attributes{"autocomplete": "off", "hx-get": rs.Pick + "?field=" + rs.F.Name + "&row=" + strconv.Itoa(i),
							"hx-trigger": "input changed delay:300ms", "hx-target": "#" + pickID(rs.F.Name, i), "hx-swap": "innerHTML", "hx-sync": "this:replace"}
					}
				}
			}
		}
		if priced(rs.F) && rs.Base != "" {
			rs.Totals = rs.Base + "/totals"
			sums := sumsOf(rs.F, v, cur)
			rs.Sums = &sums
		}
		if src, ok := u.rowSource(c, s, v, rs.F); ok {
			for i := range rs.Rows {
				for j := range rs.Rows[i] {
					if rs.Rows[i][j].F.Name == src.Field {
						rs.Rows[i][j].Choices = src.Choices
					}
				}
			}
		}
		if verb, field, row, _ := parseRowOp(c.FormValue(rowOp)); verb == "find" && field == rs.F.Name && row < len(rs.Rows) {
			rs.Picks = map[int][]pick{row: u.picks(c, rs.F, row, v[rowName(rs.F, row, resource.Field{Name: "description"})])}
		}
		for i := range rs.Rows {
			for j := range rs.Rows[i] {
				if ff := &rs.Rows[i][j]; ff.F.Name == "description" && rs.Pick != "" {
					// The item search's keys (forms.js): arrows to the matches.
					if ff.Attrs == nil {
						ff.Attrs = templ.Attributes{}
					}
					ff.Attrs["data-pick-query"] = pickID(rs.F.Name, i)
				}
			}
		}
	}
}

// hiddenColumn reports whether a column of f's rows is an id a pick
// fills (item_id, variant_id): kept out of the table, under the editor's
// "Every field".
func hiddenColumn(f resource.Field, it resource.Field) bool {
	return pickable(f) && it.Name != "description" && strings.HasSuffix(it.Name, "_id") && !rowsField(it)
}

// hideIDs marks the rows' Hidden columns (hiddenColumn).
func hideIDs(rs *formRows) {
	for i := range rs.Rows {
		for j := range rs.Rows[i] {
			if hiddenColumn(rs.F, rs.Rows[i][j].F) {
				rs.Rows[i][j].Hidden = true
			}
		}
	}
}

// hideRowIDs is hideIDs for the rows a form s's editors would pick into.
func (u *UI) hideRowIDs(s formSpec, items []formItem) {
	for _, it := range items {
		if it.Rows != nil && s.Parent == nil && pickable(it.Rows.F) {
			hideIDs(it.Rows)
		}
	}
}

// parseRowOp reads a rows button's value: "remove:lines:2",
// "pick:lines:0:itm_…:var_…".
func parseRowOp(o string) (verb, field string, row int, ids []string) {
	parts := strings.Split(o, ":")
	if len(parts) < 3 {
		return "", "", 0, nil
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 0 {
		return "", "", 0, nil
	}
	return parts[0], parts[1], n, parts[3:]
}

// rowsOp runs a rows editor's button and draws the form again.
func (u *UI) rowsOp(c *fiber.Ctx, s formSpec, v formValues, o string) error {
	verb, field, row, ids := parseRowOp(o)
	var f resource.Field
	for _, b := range s.RT.Op.Body {
		if b.Name == field && rowsField(b) {
			f = b
		}
	}
	n := rowCount(v, f)
	if f.Name == "" || row >= n {
		return u.showForm(c, s, v, 0, nil, nil, nil)
	}
	// The focus stays where the person works: on the line that takes the
	// removed one's place, on the moved line's button, on the field after
	// a picked item's description.
	switch verb {
	case "remove":
		for i := row; i < n-1; i++ {
			swapRows(v, f, i, i+1)
		}
		for _, it := range f.Items {
			delete(v, rowName(f, n-1, it))
		}
		switch {
		case row < n-1:
			s.Focus = rowName(f, row, firstShown(f))
		case row > 0:
			s.Focus = rowName(f, row-1, firstShown(f))
		default:
			s.FocusOp = moreRows
		}
	case "up":
		if row > 0 {
			swapRows(v, f, row, row-1)
			row--
		}
		s.FocusOp = "up:" + f.Name + ":" + strconv.Itoa(row)
		if row == 0 {
			s.FocusOp = "down:" + f.Name + ":0" // the top line has nowhere up to go
		}
	case "down":
		if row+1 < n {
			swapRows(v, f, row, row+1)
			row++
		}
		s.FocusOp = "down:" + f.Name + ":" + strconv.Itoa(row)
		if row == n-1 {
			s.FocusOp = "up:" + f.Name + ":" + strconv.Itoa(row)
		}
	case "pick":
		if len(ids) > 0 {
			if err := u.fillRow(c, f, v, row, ids, u.formCurrency(c, s, v, nil)); err != nil {
				return u.internal(c, err)
			}
			s.Focus = u.nextAfter(c, s, v, rowName(f, row, resource.Field{Name: "description"}), nil)
		}
	case "find":
		s.Focus = "" // the matches take it (decorateRows)
	}
	return u.showForm(c, s, v, 0, nil, nil, nil)
}

func swapRows(v formValues, f resource.Field, i, j int) {
	for _, it := range f.Items {
		a, b := rowName(f, i, it), rowName(f, j, it)
		v[a], v[b] = v[b], v[a]
	}
}

// fillRow fills a row from an item, or one of its variants: what it is,
// its price (in the document's currency cur) and SKU, and the ids the row
// has columns for, and its VAT rate.
func (u *UI) fillRow(c *fiber.Ctx, f resource.Field, v formValues, row int, ids []string, cur string) error {
	item, err := u.current(c, resource.Items, ids[0])
	if err != nil || item == nil {
		return err
	}
	set := func(name, value string) {
		if hasItem(f, name) {
			v[rowName(f, row, resource.Field{Name: name})] = value
		}
	}
	desc, price, sku := textOf(item.get("name")), item.get("unit_price_cents"), textOf(item.get("number"))
	set("item_id", ids[0])
	if len(ids) > 1 {
		vars, _ := objectRows(item.get("variants"))
		for _, va := range vars {
			if textOf(va.get("id")) != ids[1] {
				continue
			}
			desc += " – " + optionsText(va.get("options"))
			sku = textOf(va.get("sku"))
			if p := va.get("unit_price_cents"); p != nil {
				price = p
			}
			set("variant_id", ids[1])
		}
	}
	set("description", desc)
	for _, it := range f.Items {
		if n, err := json.Number(scalarText(price)).Int64(); it.Name == "unit_price_cents" && err == nil {
			// The item's price as a person reads it, in the document's currency.
			set(it.Name, convertAmount(it, n, cmp.Or(textOf(item.get("currency_code")), defaultCurrency), cmp.Or(cur, defaultCurrency)))
		}
	}
	set("sku", sku)
	qty := rowName(f, row, resource.Field{Name: "qty_milli"})
	if strings.TrimSpace(v[qty]) == "" {
		set("qty_milli", "1")
	}
	// The item's VAT rate; without one, a row without a rate takes the
	// company's default, else the row above's.
	vat := rowName(f, row, resource.Field{Name: "vat_rate_bp"})
	for _, it := range f.Items {
		if it.Name != "vat_rate_bp" {
			continue
		}
		if n, err := json.Number(scalarText(item.get("vat_rate_bp"))).Int64(); err == nil {
			set(it.Name, vatText(it, int(n)))
		} else if d := u.companyDefaults(c); strings.TrimSpace(v[vat]) == "" && d.vatBp != nil {
			set(it.Name, vatText(it, *d.vatBp))
		} else if row > 0 && strings.TrimSpace(v[vat]) == "" {
			set(it.Name, v[rowName(f, row-1, it)])
		}
	}
	return nil
}

// optionsText writes a variant's options: "M, blue".
func optionsText(x any) string {
	o, _ := x.(record)
	var parts []string
	for _, f := range o {
		parts = append(parts, scalarText(f.Value))
	}
	return strings.Join(parts, ", ")
}

// picks searches the items (and their variants) as GET /v1/items?q=
// does, for a row of f.
func (u *UI) picks(c *fiber.Ctx, f resource.Field, row int, q string) []pick {
	q = strings.TrimSpace(q)
	if len([]rune(q)) < 2 {
		return nil
	}
	b, err := u.core.Records.List(c.UserContext(), resource.Items, recordsWorkspace(workspaceOf(c)), records.Page{Limit: 8, Q: q})
	if err != nil {
		u.log.Warn("item search", "err", err)
		return nil
	}
	_, items, err := decodeList(b)
	if err != nil {
		return nil
	}
	prefix := "pick:" + f.Name + ":" + strconv.Itoa(row) + ":"
	var out []pick
	for _, it := range items {
		id, name := textOf(it.get("id")), textOf(it.get("name"))
		out = append(out, pick{Op: prefix + id, Label: name, Note: textOf(it.get("number")) + " · " + priceText(it.get("unit_price_cents"), it)})
		vars, _ := objectRows(it.get("variants"))
		for _, va := range vars {
			price := va.get("unit_price_cents")
			if price == nil {
				price = it.get("unit_price_cents")
			}
			out = append(out, pick{Op: prefix + id + ":" + textOf(va.get("id")), Label: name + " – " + optionsText(va.get("options")),
				Note: textOf(va.get("sku")) + " · " + priceText(price, it)})
		}
	}
	return out
}

func priceText(x any, rec record) string { return show(nil, "unit_price_cents", x, rec).Text }

// pickList answers the item search of a row as one types (htmx).
func (u *UI) pickList(c *fiber.Ctx) error {
	s, ok := formSpecOf(c, resource.Create)
	if !ok {
		return u.notFound(c)
	}
	field := c.Query("field")
	row, err := strconv.Atoi(c.Query("row"))
	var f resource.Field
	for _, b := range s.RT.Op.Body {
		if b.Name == field && pickable(b) {
			f = b
		}
	}
	if f.Name == "" || err != nil || row < 0 || row >= maxRows(f) {
		return c.SendStatus(http.StatusBadRequest)
	}
	return render(c, http.StatusOK, pickResults(rowPicks{Field: f.Name, Row: row, Post: s.Action, Picks: u.picks(c, f, row, c.Query(rowName(f, row, resource.Field{Name: "description"})))}))
}

// rowPicks is a row's search results; Asked when the search was the
// form's own (without script), which says when nothing matched.
type rowPicks struct {
	Field string
	Row   int
	Post  string
	Picks []pick
	Asked bool
}

func pickID(field string, row int) string   { return "picks-" + field + "-" + strconv.Itoa(row) }
func amountID(field string, row int) string { return "amount-" + field + "-" + strconv.Itoa(row) }

// sumsOf prices the rows of f as the write would: the body's lines read
// in their units (amounts in cur), checked by the declaration, through the
// writes' own pricing (api/money).
func sumsOf(f resource.Field, v formValues, cur string) lineSums {
	s := lineSums{Amounts: map[int]string{}, Currency: cur}
	raw, paths, errs := bodyOf([]resource.Field{f}, v, nil, reading{cur: cur})
	if len(errs) > 0 {
		s.Problem = firstProblem(f, v, errs)
		return s
	}
	vals, err := body.Parse(raw, []resource.Field{f})
	if err != nil {
		s.Problem = problemOf(err, paths)
		return s
	}
	lines, t, err := pricing.Lines(vals)
	if err != nil {
		s.Problem = problemOf(err, paths)
		return s
	}
	for i, l := range lines {
		in := paths[f.Name+"["+strconv.Itoa(i)+"]"]
		if row, ok := rowOf(in); ok {
			s.Amounts[row] = amountText(l.AmountExclVATCents, s.Currency)
		}
	}
	s.Excl, s.VAT, s.Incl = amountText(t.ExclVATCents, s.Currency), amountText(t.VATCents, s.Currency), amountText(t.InclVATCents, s.Currency)
	return s
}

// firstProblem is the first of the rows' refusals, in the form's order.
func firstProblem(f resource.Field, v formValues, errs map[string]string) string {
	for i := 0; i < rowCount(v, f); i++ {
		for _, it := range f.Items {
			if msg, ok := errs[rowName(f, i, it)]; ok {
				return msg
			}
		}
	}
	return "These lines cannot be priced."
}

// rowOf reads the row of an input name: 3 of "lines[3].description".
func rowOf(name string) (int, bool) {
	_, rest, _ := strings.Cut(name, "[")
	n, _, ok := strings.Cut(rest, "]")
	i, err := strconv.Atoi(n)
	return i, ok && err == nil
}

// problemOf is a refusal's message, naming the form's row.
func problemOf(err error, paths map[string]string) string {
	e, ok := apierr.As(err)
	if !ok {
		return "These lines cannot be priced."
	}
	if in, ok := paths[e.Param]; ok {
		if row, ok := rowOf(in); ok {
			if msg := inWords(in, e.Param, e.Message); strings.HasPrefix(msg, "Line ") {
				return msg
			}
			return "Line " + strconv.Itoa(row+1) + ": " + capitalize(e.Message) + "."
		}
	}
	return capitalize(e.Message) + "."
}

// lineTotals answers the amounts of a form's lines as one types (htmx):
// the totals, and each row's amount swapped in place.
func (u *UI) lineTotals(c *fiber.Ctx) error {
	s, ok := formSpecOf(c, resource.Create)
	if !ok {
		return u.notFound(c)
	}
	field := c.Query("field")
	for _, f := range s.RT.Op.Body {
		if f.Name == field && rowsField(f) && priced(f) {
			v := formValuesOf(c, s.RT.Op.Body)
			sums := sumsOf(f, v, u.formCurrency(c, s, v, nil))
			return render(c, http.StatusOK, totalsSwap(f.Name, wsURL(workspaceOf(c), "records", s.R.Name, "totals"), rowCount(v, f), sums))
		}
	}
	return c.SendStatus(http.StatusBadRequest)
}

// relation is a resource whose create names a record of another: an
// invoice's client_id, a shipment's sales_order_id.
type relation struct {
	R     *resource.Resource
	Field string
}

// related lists the resources whose create body names a record of r.
func related(r *resource.Resource) []relation {
	fk := strings.ReplaceAll(r.Singular, " ", "_") + "_id"
	var out []relation
	for _, o := range browsable() {
		if o == r {
			continue
		}
		op, ok := o.Op(resource.Create)
		if !ok {
			continue
		}
		if slices.ContainsFunc(op.Body, func(f resource.Field) bool { return f.Name == fk && formable(f) && !rowsField(f) }) {
			out = append(out, relation{R: o, Field: fk})
		}
	}
	return out
}

// rowSourceOf is where a rows editor's rows come from: a related record's
// embedded rows (a shipment's lines from its order's lines).
type rowSourceOf struct {
	Field   string // the rows' column naming a source row: order_line_id
	Rows    []map[string]string
	Choices []choice
}

// sourceRows finds the embedded rows of rec (a record of r) that f's rows
// name (a column X_id names the embed whose table is Xs), each with the
// quantities its shipped_ columns have not taken, as the form shows them
// (in people's units: "3", the same as "3 left"); ok is false when f
// names no rows of r.
func sourceRows(f resource.Field, r *resource.Resource, rec record) (rowSourceOf, bool) {
	cur := cmp.Or(textOf(rec.get("currency_code")), defaultCurrency)
	for _, it := range f.Items {
		base, isID := strings.CutSuffix(it.Name, "_id")
		if !isID {
			continue
		}
		for _, e := range r.Embeds {
			if e.Table != base+"s" {
				continue
			}
			src := rowSourceOf{Field: it.Name}
			embedded, _ := objectRows(rec.get(e.Name))
			for _, row := range embedded {
				out := map[string]string{it.Name: textOf(row.get("id"))}
				left, some := "", true
				for _, col := range f.Items {
					n, err := json.Number(scalarText(row.get(col.Name))).Int64()
					if col.Name == it.Name || err != nil {
						continue
					}
					if done, err := json.Number(scalarText(row.get("shipped_" + col.Name))).Int64(); err == nil {
						n -= done
						left = show(nil, col.Name, json.Number(strconv.FormatInt(n, 10)), row).Text + " left"
					}
					out[col.Name] = unitText(col, n, cur)
					if col.Name == "qty_milli" && n <= 0 {
						some = false
					}
				}
				label := strings.TrimSpace(textOf(row.get("description")) + " " + textOf(row.get("sku")))
				if left != "" {
					label += " · " + left
				}
				src.Choices = append(src.Choices, choice{Value: out[it.Name], Label: label})
				if !some {
					continue // nothing left of this row
				}
				src.Rows = append(src.Rows, out)
			}
			return src, true
		}
	}
	return rowSourceOf{}, false
}

// prefillRows are the rows a create of op takes from rec, the record it
// is of (an order's lines left to ship); ok is false when it takes none.
func prefillRows(op resource.Op, r *resource.Resource, rec record) ([]map[string]string, bool) {
	if op.FromOf == "" {
		return nil, false
	}
	for _, f := range op.Body {
		if rowsField(f) && formable(f) {
			if src, ok := sourceRows(f, r, rec); ok {
				return src.Rows, true
			}
		}
	}
	return nil, false
}

// linked reads the record a create is of (Op.FromOf: a shipment's
// sales_order_id) and its resource; nil when there is none. Only that
// record's rows feed the form (a return's come from related.go).
func (u *UI) linked(c *fiber.Ctx, op resource.Op, v formValues) (*resource.Resource, record) {
	id := strings.TrimSpace(v[op.FromOf])
	if op.FromOf == "" || id == "" {
		return nil, nil
	}
	r := byIDPrefix(id)
	if r == nil || len(r.Embeds) == 0 || !writable(workspaceOf(c), r) {
		return nil, nil
	}
	if rec, err := u.current(c, r, id); err == nil && rec != nil {
		return r, rec
	}
	return nil, nil
}

// rowSource is the source of f's rows in a form, if it names one.
func (u *UI) rowSource(c *fiber.Ctx, s formSpec, v formValues, f resource.Field) (rowSourceOf, bool) {
	if src, ok, own := u.ownSource(c, s, v); own {
		return src, ok
	}
	r, rec := u.linked(c, s.RT.Op, v)
	if r == nil {
		return rowSourceOf{}, false
	}
	return sourceRows(f, r, rec)
}

// prefill fills a New form from its address (?client_id=cli_…, as "New …"
// links send) and the rows it takes from the record named.
func (u *UI) prefill(c *fiber.Ctx, s formSpec, v formValues) {
	for _, f := range s.RT.Op.Body {
		if formable(f) && !rowsField(f) && c.Query(f.Name) != "" {
			v[f.Name] = c.Query(f.Name)
		}
	}
	u.takeRows(c, s, v)
}

// takeRows fills blank rows editors with the rows of the record the form
// names (an order's lines left to ship or to return); it returns the
// rows editors filled.
func (u *UI) takeRows(c *fiber.Ctx, s formSpec, v formValues) map[string]bool {
	filled := map[string]bool{}
	for _, f := range s.RT.Op.Body {
		if !rowsField(f) || !formable(f) || !blankRows(v, f) {
			continue
		}
		if src, ok := u.rowSource(c, s, v, f); ok && len(src.Rows) > 0 {
			for i := 0; i < rowCount(v, f); i++ {
				for _, it := range f.Items {
					delete(v, rowName(f, i, it))
				}
			}
			for i, row := range src.Rows {
				for _, it := range f.Items {
					v[rowName(f, i, it)] = row[it.Name]
				}
			}
			filled[f.Name] = true
		}
	}
	return filled
}
