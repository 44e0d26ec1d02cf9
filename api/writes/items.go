package writes

import (
	"context"
	"fmt"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/category"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/predicate"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// catalogRow is one item or product to write: they share the items table,
// so one engine writes both, in batches of a fixed number of queries.
type catalogRow struct {
	v       Values
	param   string // prefix of the params this row's errors name: "" or "products[3]."
	product bool   // writes the commerce fields and makes the item a product
	id      string // PATCH: the record to update
	upsert  bool   // an existing SKU is updated instead of refused
	sku     string // the SKU asked for; "" allocates one on create

	media  []shape.Media
	attrs  []shape.Attribute
	axes   []shape.VariantAxis
	cats   []string // distinct, in the order sent
	catPos []int    // each one's index in the body's categories, for errors
	hasCat bool

	invalid  error // what the body alone already refuses
	existing *ent.Item
	number   string
	itemID   string
	created  bool
	err      error
}

func (r *catalogRow) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// skuParam names the field that carried the SKU, for errors.
func (r *catalogRow) skuParam() string {
	if r.product && r.v.Has("sku") {
		return r.param + "sku"
	}
	return r.param + "number"
}

func (r *catalogRow) noun() string {
	if r.product {
		return "product"
	}
	return "item"
}

// newCatalogRow reads what a row asks for; checks that need no database.
func newCatalogRow(v Values, param string, product bool, id string, upsertDefault bool) *catalogRow {
	r := &catalogRow{v: v, param: param, product: product, id: id, upsert: upsertDefault}
	if s, ok := v.String("name"); ok && strings.TrimSpace(s) == "" {
		r.fail(apierr.Invalid(param+"name", "%sname must not be blank", param))
	}
	num, hasNum := v.String("number")
	sku, hasSKU := v.String("sku")
	switch {
	case hasNum && hasSKU && num != sku:
		r.fail(apierr.Invalid(param+"sku", "sku and number are the same field; they differ (%q, %q)", sku, num))
	case hasSKU:
		r.sku = sku
	case hasNum:
		r.sku = num
	}
	if (hasNum || hasSKU) && strings.TrimSpace(r.sku) == "" {
		r.fail(apierr.Invalid(r.skuParam(), "%s must not be blank; omit it to have one allocated", r.skuParam()))
	}
	if up, ok := v.Bool("upsert"); ok {
		r.upsert = up
		if up && r.sku == "" && id == "" {
			r.fail(apierr.Invalid(r.skuParam(), "upsert: true needs %s, the SKU to match", r.skuParam()))
		}
	}
	if id != "" {
		r.upsert = false
	}
	if product {
		r.readProduct()
	}
	r.invalid = r.err
	return r
}

// apply sets the sent fields on a create or an update (PATCH semantics).
func (r *catalogRow) apply(m *ent.ItemMutation, fields []resource.Field) error {
	m.SetNumber(r.number)
	if err := applyBody(m, fields, r.v, nil, "number", "sku", "upsert", "media", "attributes", "variant_axes", "categories"); err != nil {
		return err
	}
	if r.product {
		r.applyProduct(m)
	}
	return nil
}

// catalogBatch writes rows in one transaction.
type catalogBatch struct {
	ctx    context.Context
	q      *Request
	tx     *ent.Tx
	ws     string
	fields []resource.Field // the declared body of each row
	rows   []*catalogRow
}

// ok lists the rows still without an error.
func (b *catalogBatch) ok() []*catalogRow {
	out := make([]*catalogRow, 0, len(b.rows))
	for _, r := range b.rows {
		if r.err == nil {
			out = append(out, r)
		}
	}
	return out
}

// run writes every row that passes its checks; a row's refusal is kept in
// its err, and only a database failure fails the batch.
func (b *catalogBatch) run() error {
	for _, r := range b.rows {
		r.err, r.existing, r.number, r.itemID, r.created = r.invalid, nil, "", "", false
	}
	b.refuseRepeatedSKUs()
	if err := b.matchExisting(); err != nil {
		return err
	}
	if err := b.checkCategories(); err != nil {
		return err
	}
	for _, r := range b.ok() {
		if r.product {
			r.resolveAxes()
		}
	}
	if err := b.allocateNumbers(); err != nil {
		return err
	}
	if err := b.save(); err != nil {
		return err
	}
	return b.generateVariants()
}

// refuseRepeatedSKUs fails a row whose SKU an earlier row of the batch has.
func (b *catalogBatch) refuseRepeatedSKUs() {
	seen := map[string]int{}
	for i, r := range b.rows {
		if r.err != nil || r.sku == "" {
			continue
		}
		if j, dup := seen[r.sku]; dup {
			r.fail(apierr.Invalid(r.skuParam(), "SKU %q is already in this batch at index %d", r.sku, j))
			continue
		}
		seen[r.sku] = i
	}
}

// matchExisting finds, in one query, the records rows update: by id for
// PATCH and by SKU for the others (locked until commit on PostgreSQL).
func (b *catalogBatch) matchExisting() error {
	var ids, skus []string
	for _, r := range b.ok() {
		if r.id != "" {
			ids = append(ids, r.id)
		}
		if r.sku != "" {
			skus = append(skus, r.sku)
		}
	}
	if len(ids)+len(skus) == 0 {
		return nil
	}
	// Each lookup carries the workspace, so each uses its own index: an
	// empty IDIn's "FALSE OR ..." kept SQLite off the number index.
	var match []predicate.Item
	if len(ids) > 0 {
		match = append(match, item.And(item.WorkspaceID(b.ws), item.IDIn(ids...)))
	}
	if len(skus) > 0 {
		match = append(match, item.And(item.WorkspaceID(b.ws), item.NumberIn(skus...)))
	}
	found, err := forUpdate(b.q, b.tx.Item.Query().Where(item.Or(match...))).All(b.ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Item, len(found))
	byNumber := make(map[string]*ent.Item, len(found))
	for _, it := range found {
		byID[it.ID] = it
		byNumber[it.Number] = it
	}
	for _, r := range b.ok() {
		holder := byNumber[r.sku]
		if r.id != "" {
			ex := byID[r.id]
			if ex == nil || (r.product && !ex.IsProduct) {
				r.fail(apierr.NotFound(r.noun()))
				continue
			}
			if holder != nil && holder.ID != ex.ID {
				r.fail(duplicate(r.skuParam(), "another item already has SKU %q", r.sku))
				continue
			}
			r.existing, r.number = ex, ex.Number
			if r.sku != "" {
				r.number = r.sku
			}
			continue
		}
		if holder != nil {
			if !r.upsert {
				r.fail(duplicate(r.skuParam(), "an item with SKU %q already exists (%s); send upsert: true to update it", r.sku, holder.ID))
				continue
			}
			r.existing = holder
		}
		r.number = r.sku
	}
	return nil
}

// allocateNumbers gives every row created without a SKU the next free one.
func (b *catalogBatch) allocateNumbers() error {
	var need []*catalogRow
	for _, r := range b.ok() {
		if r.existing == nil && r.number == "" {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	inBatch := map[string]bool{} // SKUs other rows of the batch asked for
	for _, r := range b.ok() {
		inBatch[r.number] = r.number != ""
	}
	nums, err := numbering.Items.Allocate(b.ctx, b.q.DB, b.tx, b.ws, len(need), func(cand []string) (map[string]bool, error) {
		used, err := b.tx.Item.Query().Where(item.WorkspaceID(b.ws), item.NumberIn(cand...)).Select(item.FieldNumber).Strings(b.ctx)
		taken := setOf(used)
		for _, c := range cand {
			taken[c] = taken[c] || inBatch[c]
		}
		return taken, err
	})
	if err != nil {
		return err
	}
	for i, r := range need {
		r.number = nums[i]
	}
	return nil
}

// checkCategories refuses, in one query, category ids the workspace lacks.
func (b *catalogBatch) checkCategories() error {
	var all []string
	for _, r := range b.ok() {
		all = append(all, r.cats...)
	}
	if len(all) == 0 {
		return nil
	}
	have, err := b.tx.Category.Query().Where(category.WorkspaceID(b.ws), category.IDIn(all...)).IDs(b.ctx)
	if err != nil {
		return err
	}
	known := setOf(have)
	for _, r := range b.ok() {
		for i, id := range r.cats {
			if !known[id] {
				p := fmt.Sprintf("%scategories[%d].id", r.param, r.catPos[i])
				r.fail(apierr.Invalid(p, "%s: no such category %q in this workspace", p, id))
				break
			}
		}
	}
	return nil
}

// save inserts the new rows in one statement and updates the others.
func (b *catalogBatch) save() error {
	var creates []*ent.ItemCreate
	var created []*catalogRow
	for _, r := range b.ok() {
		if r.existing != nil {
			// Update, not UpdateOne: no read-back of the row, which the
			// answer renders after commit anyway.
			u := b.tx.Item.Update().Where(item.ID(r.existing.ID))
			if err := r.apply(u.Mutation(), b.fields); err != nil {
				return err
			}
			if err := u.Exec(b.ctx); err != nil {
				return err
			}
			r.itemID = r.existing.ID
			continue
		}
		c := b.tx.Item.Create().SetWorkspaceID(b.ws)
		if err := r.apply(c.Mutation(), b.fields); err != nil {
			return err
		}
		creates = append(creates, c)
		created = append(created, r)
	}
	if len(creates) == 0 {
		return nil
	}
	items, err := b.tx.Item.CreateBulk(creates...).Save(b.ctx)
	if err != nil {
		return err
	}
	for i, it := range items {
		created[i].itemID, created[i].created = it.ID, true
	}
	return nil
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// saveOne is a single item or product write: create (with upsert: true
// updating the SKU's item), POST .../upsert, or PATCH when id is set.
func saveOne(q *Request, upsertRoute bool, id string) (Result, error) {
	product := q.Resource == resource.Products
	if upsertRoute {
		if sku, _ := skuOf(q.Body); sku == "" {
			p := "number"
			if product {
				p = "sku"
			}
			return Result{}, apierr.Invalid(p, "%s is required: it is the SKU the upsert matches", p)
		}
	}
	r := newCatalogRow(q.Body, "", product, id, upsertRoute)
	if upsertRoute {
		r.upsert = true // the route says it; a stray upsert: false does not undo it
	}
	if r.err != nil {
		return Result{}, r.err
	}
	b := &catalogBatch{ctx: q.Ctx, q: q, ws: q.Principal.Workspace.ID, fields: q.Op.Body, rows: []*catalogRow{r}}
	return q.inTx(func(tx *ent.Tx) error {
		b.tx = tx
		if err := b.run(); err != nil {
			return err
		}
		return r.err
	}, func() Answer { return record(created(r.created), q.Resource, r.itemID, "") })
}

func skuOf(v Values) (string, bool) {
	if s, ok := v.String("sku"); ok {
		return s, true
	}
	return v.String("number")
}

// duplicate is a 409 for a value that must be unique, naming its field.
func duplicate(param, format string, a ...any) error {
	e := apierr.Conflict("duplicate", format, a...)
	e.Param = param
	return e
}
