package writes

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/jsonout"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/ent/variant"
)

// maxVariants bounds the combinations one product's axes may generate.
const maxVariants = 1000

// readProduct reads the commerce fields of a row.
func (r *catalogRow) readProduct() {
	v, p := r.v, r.param
	if ms, ok := v.Objects("media"); ok {
		r.media = make([]shape.Media, len(ms))
		for i, m := range ms {
			u, _ := m.String("url")
			if strings.TrimSpace(u) == "" {
				r.fail(apierr.Invalid(fmt.Sprintf("%smedia[%d].url", p, i), "media[%d].url must not be blank", i))
			}
			alt, _ := m.String("alt")
			pos, ok := m.Int("position")
			if !ok {
				pos = int64(i)
			}
			r.media[i] = shape.Media{URL: u, Alt: alt, Position: int(pos)}
		}
	}
	if as, ok := v.Objects("attributes"); ok {
		r.attrs = make([]shape.Attribute, len(as))
		ids, codes := map[string]bool{}, map[string]bool{}
		for i, a := range as {
			ap := fmt.Sprintf("%sattributes[%d].", p, i)
			id, _ := a.String("id")
			code, _ := a.String("code")
			name, _ := a.String("name")
			values, _ := a.Strings("values")
			switch {
			case strings.TrimSpace(code) == "":
				r.fail(apierr.Invalid(ap+"code", "%scode must not be blank", ap))
			case codes[code]:
				r.fail(apierr.Invalid(ap+"code", "attribute code %q appears twice", code))
			case id != "" && ids[id]:
				r.fail(apierr.Invalid(ap+"id", "attribute id %q appears twice", id))
			}
			ids[id], codes[code] = id != "", true
			if values == nil {
				values = []string{}
			}
			r.attrs[i] = shape.Attribute{ID: id, Code: code, Name: name, Values: values}
		}
	}
	if cs, ok := v.Objects("categories"); ok {
		r.hasCat = true
		seen := map[string]bool{}
		for i, c := range cs {
			if id, _ := c.String("id"); !seen[id] {
				seen[id] = true
				r.cats = append(r.cats, id)
				r.catPos = append(r.catPos, i)
			}
		}
	}
}

// resolveAxes turns variant_axes into full axes: an axis given by
// attribute_id takes the code, name and values of that entry of the
// product's attributes (those sent with it, else those stored).
func (r *catalogRow) resolveAxes() {
	given, ok := r.v.Objects("variant_axes")
	if !ok {
		return
	}
	attrs := r.attrs
	if !r.v.Has("attributes") && r.existing != nil {
		attrs = r.existing.Attributes
	}
	axes := make([]shape.VariantAxis, 0, len(given))
	codes := map[string]bool{}
	combos := 1
	for i, a := range given {
		p := fmt.Sprintf("%svariant_axes[%d].", r.param, i)
		var ax shape.VariantAxis
		if id, ok := a.String("attribute_id"); ok {
			if a.Has("code") || a.Has("name") || a.Has("values") {
				r.fail(apierr.Invalid(p+"attribute_id", "give an axis either as attribute_id or as code, name and values, not both"))
				return
			}
			var found *shape.Attribute
			for j := range attrs {
				if attrs[j].ID == id {
					found = &attrs[j]
				}
			}
			if found == nil || id == "" {
				r.fail(apierr.Invalid(p+"attribute_id", "the product has no attribute with id %q", id))
				return
			}
			ax = shape.VariantAxis{AttributeID: id, Code: found.Code, Name: found.Name, Values: found.Values}
		} else {
			ax.Code, _ = a.String("code")
			ax.Name, _ = a.String("name")
			ax.Values, _ = a.Strings("values")
			if strings.TrimSpace(ax.Code) == "" {
				r.fail(apierr.Invalid(p+"code", "%scode is required (or attribute_id)", p))
				return
			}
			if ax.Name == "" {
				ax.Name = ax.Code
			}
		}
		if codes[ax.Code] {
			r.fail(apierr.Invalid(p+"code", "axis %q appears twice", ax.Code))
			return
		}
		codes[ax.Code] = true
		if len(ax.Values) == 0 {
			r.fail(apierr.Invalid(p+"values", "axis %q needs at least one value", ax.Code))
			return
		}
		seen := map[string]bool{}
		for _, x := range ax.Values {
			if strings.TrimSpace(x) == "" || seen[x] {
				r.fail(apierr.Invalid(p+"values", "axis %q has a blank or repeated value", ax.Code))
				return
			}
			seen[x] = true
		}
		combos *= len(ax.Values)
		if combos > maxVariants {
			r.fail(apierr.Invalid(r.param+"variant_axes", "the axes make more than %d variants", maxVariants))
			return
		}
		axes = append(axes, ax)
	}
	r.axes = axes
}

func (r *catalogRow) applyProduct(m *ent.ItemMutation) {
	v := r.v
	m.SetIsProduct(true)
	if v.Has("media") {
		m.SetMedia(r.media)
	}
	if v.Has("attributes") {
		m.SetAttributes(r.attrs)
	}
	if v.Has("variant_axes") {
		m.SetVariantAxes(r.axes)
	}
	if r.hasCat {
		if r.existing != nil {
			m.ClearCategories()
		}
		m.AddCategoryIDs(r.cats...)
	}
}

// newVariant is a combination to create.
type newVariant struct {
	itemID, base, key string
	options           map[string]string
}

// generateVariants creates every combination of the rows' axes that the
// product does not have yet; existing variants are kept as they are.
func (b *catalogBatch) generateVariants() error {
	var rows []*catalogRow
	var updated []string
	for _, r := range b.ok() {
		if len(r.axes) == 0 {
			continue
		}
		rows = append(rows, r)
		if !r.created {
			updated = append(updated, r.itemID)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	have := map[string]bool{} // item id + "\x00" + options key
	if len(updated) > 0 {
		var ex []struct {
			ItemID     string `json:"item_id"`
			OptionsKey string `json:"options_key"`
		}
		err := b.tx.Variant.Query().Where(variant.ItemIDIn(updated...)).
			Select(variant.FieldItemID, variant.FieldOptionsKey).Scan(b.ctx, &ex)
		if err != nil {
			return err
		}
		for _, e := range ex {
			have[e.ItemID+"\x00"+e.OptionsKey] = true
		}
	}
	var todo []newVariant
	for _, r := range rows {
		combinations(r.axes, func(opts map[string]string, parts []string) {
			key := shape.OptionsKey(opts)
			if have[r.itemID+"\x00"+key] {
				return
			}
			todo = append(todo, newVariant{itemID: r.itemID, key: key, options: opts, base: r.number + "-" + strings.Join(parts, "-")})
		})
	}
	if len(todo) == 0 {
		return nil
	}
	skus, err := b.variantSKUs(todo)
	if err != nil {
		return err
	}
	creates := make([]*ent.VariantCreate, len(todo))
	for i, nv := range todo {
		creates[i] = b.tx.Variant.Create().SetWorkspaceID(b.ws).SetItemID(nv.itemID).
			SetSku(skus[i]).SetOptions(nv.options).SetOptionsKey(nv.key)
	}
	for len(creates) > 0 {
		n := min(len(creates), 400)
		if err := b.tx.Variant.CreateBulk(creates[:n]...).Exec(b.ctx); err != nil {
			return err
		}
		creates = creates[n:]
	}
	return nil
}

// variantSKUs derives each new variant's SKU from its product's and its
// values (TEE-M-RED), with a -2, -3 suffix where another variant holds it.
func (b *catalogBatch) variantSKUs(todo []newVariant) ([]string, error) {
	taken := map[string]bool{}
	for start := 0; start < len(todo); start += 500 {
		end := min(start+500, len(todo))
		cand := make([]string, 0, end-start)
		for _, nv := range todo[start:end] {
			cand = append(cand, nv.base)
		}
		used, err := b.tx.Variant.Query().Where(variant.WorkspaceID(b.ws), variant.SkuIn(cand...)).
			Select(variant.FieldSku).Strings(b.ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range used {
			taken[s] = true
		}
	}
	out := make([]string, len(todo))
	for i, nv := range todo {
		sku := nv.base
		for n := 2; taken[sku]; n++ {
			sku = nv.base + "-" + strconv.Itoa(n)
			// Suffixed SKUs were not in the batch query: ask for this one (rare).
			if !taken[sku] {
				exists, err := b.tx.Variant.Query().Where(variant.WorkspaceID(b.ws), variant.Sku(sku)).Exist(b.ctx)
				if err != nil {
					return nil, err
				}
				if exists {
					taken[sku] = true
				}
			}
		}
		taken[sku] = true
		out[i] = sku
	}
	return out, nil
}

// combinations calls f with every combination of the axes' values, the
// first axis varying slowest; parts are the values as SKU segments.
func combinations(axes []shape.VariantAxis, f func(opts map[string]string, parts []string)) {
	idx := make([]int, len(axes))
	for {
		opts := make(map[string]string, len(axes))
		parts := make([]string, len(axes))
		for i, a := range axes {
			x := a.Values[idx[i]]
			opts[a.Code] = x
			parts[i] = strings.ToUpper(slugify(x))
			if parts[i] == "" {
				parts[i] = strconv.Itoa(idx[i] + 1)
			}
		}
		f(opts, parts)
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// bulkProducts creates or upserts (by SKU, unless upsert: false) up to
// BulkMax products in one transaction and answers per product.
func bulkProducts(q *Request) (Result, error) {
	key, limit := q.Op.BulkKey, q.Op.BulkMax
	for k := range q.Raw {
		if k != key {
			return Result{}, apierr.Invalid(k, "unknown field %q; send {\"%s\": [...]}", k, key)
		}
	}
	raw, present := q.Raw[key]
	list, ok := raw.([]any)
	switch {
	case !present:
		return Result{}, apierr.Invalid(key, "%s is required: an array of up to %d products", key, limit)
	case !ok:
		return Result{}, apierr.Invalid(key, "%s must be an array", key)
	case len(list) == 0:
		return Result{}, apierr.Invalid(key, "%s must not be empty", key)
	case len(list) > limit:
		return Result{}, apierr.Invalid(key, "%s has %d elements; at most %d per call", key, len(list), limit)
	}
	rows := make([]*catalogRow, len(list))
	for i, el := range list {
		p := fmt.Sprintf("%s[%d]", key, i)
		m, ok := el.(map[string]any)
		if !ok {
			err := apierr.Invalid(p, "%s must be an object", p)
			rows[i] = &catalogRow{param: p + ".", product: true, invalid: err}
			continue
		}
		v, err := body.Check(m, q.Op.Body, p+".")
		if err != nil {
			rows[i] = &catalogRow{param: p + ".", product: true, invalid: err}
			continue
		}
		rows[i] = newCatalogRow(v, p+".", true, "", true)
	}
	b := &catalogBatch{ctx: q.Ctx, q: q, ws: q.Principal.Workspace.ID, fields: q.Op.Body, rows: rows}
	var answer []byte
	changes := []Change{}
	return q.inTx(func(tx *ent.Tx) error {
		b.tx = tx
		if err := b.run(); err != nil {
			return err
		}
		var ids []string
		for _, r := range rows {
			if r.err == nil {
				ids = append(ids, r.itemID)
			}
		}
		recs, err := q.Records.RenderMany(q.Ctx, tx, resource.Products, q.Workspace(), ids)
		if err != nil {
			return err
		}
		answer = bulkAnswer(rows, recs)
		// One event per product written, as its own create or upsert would.
		changes = changes[:0]
		k := 0
		for _, r := range rows {
			if r.err == nil {
				changes = append(changes, Change{Type: resource.Products.EventType(q.Op, r.created),
					Resource: resource.Products, ID: r.itemID, Object: recs[k]})
				k++
			}
		}
		return nil
	}, func() Answer { return Answer{Status: http.StatusOK, Body: answer, Changes: changes} })
}

// bulkAnswer is {"data": [{index, status, product | error}], "meta": {created, updated, failed}}.
func bulkAnswer(rows []*catalogRow, recs [][]byte) []byte {
	var created, updated, failed int
	out := make([]byte, 0, 1024*len(rows))
	out = append(out, `{"data":[`...)
	k := 0
	for i, r := range rows {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		if r.err != nil {
			failed++
			e, ok := apierr.As(r.err)
			if !ok {
				e = apierr.Internal(r.err)
			}
			out = append(out, `,"status":"error","error":{"code":`...)
			out = jsonout.String(out, e.Code)
			out = append(out, `,"message":`...)
			out = jsonout.String(out, e.Message)
			if e.Param != "" {
				out = append(out, `,"param":`...)
				out = jsonout.String(out, e.Param)
			}
			out = append(out, "}}"...)
			continue
		}
		status := "updated"
		if r.created {
			status = "created"
			created++
		} else {
			updated++
		}
		out = append(out, `,"status":"`...)
		out = append(out, status...)
		out = append(out, `","product":`...)
		out = append(out, recs[k]...)
		out = append(out, '}')
		k++
	}
	out = append(out, `],"meta":{"created":`...)
	out = strconv.AppendInt(out, int64(created), 10)
	out = append(out, `,"updated":`...)
	out = strconv.AppendInt(out, int64(updated), 10)
	out = append(out, `,"failed":`...)
	out = strconv.AppendInt(out, int64(failed), 10)
	return append(out, "}}"...)
}
