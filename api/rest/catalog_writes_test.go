package rest_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/category"
	"github.com/ledgerbase/ledgerbase/ent/event"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/variant"
)

// obj is a JSON object in a test body or answer.
type obj = map[string]any

func countItems(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	n, err := env.DB.Writer.Item.Query().Where(item.WorkspaceID(ws)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func countVariants(t *testing.T, env *apitest.Env, itemID string) int {
	t.Helper()
	n, err := env.DB.Writer.Variant.Query().Where(variant.ItemID(itemID)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tally counts the responses of concurrent requests with status want and
// fails on any status other than want and other.
func tally(t *testing.T, statuses []int, want, other int) int {
	t.Helper()
	n := 0
	for _, s := range statuses {
		switch s {
		case want:
			n++
		case other:
		default:
			t.Fatalf("statuses %v: only %d and %d are right", statuses, want, other)
		}
	}
	return n
}

func wantParam(t *testing.T, e map[string]any, param string) {
	t.Helper()
	if e["param"] != param {
		t.Fatalf("param %v, want %s (%v)", e["param"], param, e)
	}
}

func TestItemCreateAllocatesSequentialSKUs(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	a := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Widget", "unit_price_cents": 1250, "currency_code": "USD",
		"description": "A widget", "translations": obj{"fr": obj{"name": "Gadget"}}}).WantStatus(t, 201).JSON(t)
	if a["number"] != "ITM-000001" || a["name"] != "Widget" || a["unit_price_cents"] != 1250.0 || a["currency_code"] != "USD" {
		t.Fatalf("created item: %v", a)
	}
	if tr, _ := a["translations"].(obj); tr["fr"] == nil {
		t.Fatalf("translations not stored: %v", a)
	}
	// A hand-chosen number that the counter reaches later is skipped.
	env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Manual", "number": "ITM-000002"}).WantStatus(t, 201)
	b := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Gizmo"}).WantStatus(t, 201).JSON(t)
	if b["number"] != "ITM-000003" {
		t.Fatalf("second allocated SKU %v, want ITM-000003", b["number"])
	}
	got := env.Get(t, "/v1/items/"+a["id"].(string), ws.Key).WantStatus(t, 200).JSON(t)
	if got["number"] != a["number"] || got["updated_at"] != a["updated_at"] {
		t.Fatalf("GET differs from the create answer:\n%v\n%v", got, a)
	}
	// Each workspace counts on its own.
	other := env.Workspace(t, "starter", false, false)
	c := env.Do(t, "POST", "/v1/items", other.Key, obj{"name": "Elsewhere"}).WantStatus(t, 201).JSON(t)
	if c["number"] != "ITM-000001" {
		t.Fatalf("another workspace's first SKU %v", c["number"])
	}
}

func TestItemDuplicateSKUIsRefusedUnlessUpsert(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	first := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Bolt", "number": "BOLT-1", "unit_price_cents": 10}).WantStatus(t, 201).JSON(t)
	e := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Bolt again", "number": "BOLT-1"}).WantError(t, 409, "duplicate")
	wantParam(t, e, "number")
	up := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Bolt v2", "number": "BOLT-1", "upsert": true}).WantStatus(t, 200).JSON(t)
	if up["id"] != first["id"] || up["name"] != "Bolt v2" || up["unit_price_cents"] != 10.0 {
		t.Fatalf("upsert did not update the existing item in place: %v", up)
	}
	e = env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "No SKU", "upsert": true}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "number")
	if n := countItems(t, env, ws.ID); n != 1 {
		t.Fatalf("%d items, want 1", n)
	}
}

func TestItemUpsertRouteCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	e := env.Do(t, "POST", "/v1/items/upsert", ws.Key, obj{"name": "Nut"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "number")
	a := env.Do(t, "POST", "/v1/items/upsert", ws.Key, obj{"name": "Nut", "number": "NUT"}).WantStatus(t, 201).JSON(t)
	b := env.Do(t, "POST", "/v1/items/upsert", ws.Key, obj{"name": "Nut M8", "number": "NUT", "active": false}).WantStatus(t, 200).JSON(t)
	if a["id"] != b["id"] || b["name"] != "Nut M8" || b["active"] != false {
		t.Fatalf("upsert: %v then %v", a, b)
	}
}

func TestItemPatchKeepsOmittedFields(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	a := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Lamp", "description": "Desk lamp", "unit_price_cents": 3000}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Other", "number": "TAKEN"}).WantStatus(t, 201)
	path := "/v1/items/" + a["id"].(string)
	p := env.Do(t, "PATCH", path, ws.Key, obj{"name": "Lamp XL", "unit_price_cents": 3500}).WantStatus(t, 200).JSON(t)
	if p["name"] != "Lamp XL" || p["unit_price_cents"] != 3500.0 || p["description"] != "Desk lamp" || p["number"] != a["number"] {
		t.Fatalf("patched item: %v", p)
	}
	e := env.Do(t, "PATCH", path, ws.Key, obj{"description": "no name"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "name")
	e = env.Do(t, "PATCH", path, ws.Key, obj{"name": "Lamp", "number": "TAKEN"}).WantError(t, 409, "duplicate")
	wantParam(t, e, "number")
	renamed := env.Do(t, "PATCH", path, ws.Key, obj{"name": "Lamp", "number": "LAMP-1"}).WantStatus(t, 200).JSON(t)
	if renamed["number"] != "LAMP-1" {
		t.Fatalf("SKU not changed: %v", renamed)
	}
	env.Do(t, "PATCH", "/v1/items/itm_nope", ws.Key, obj{"name": "x"}).WantError(t, 404, "not_found")
	other := env.Workspace(t, "starter", false, false)
	env.Do(t, "PATCH", path, other.Key, obj{"name": "stolen"}).WantError(t, 404, "not_found")
	if got := env.Get(t, path, ws.Key).JSON(t); got["name"] != "Lamp" || got["unit_price_cents"] != 3500.0 {
		t.Fatalf("refused patches changed the item: %v", got)
	}
}

func TestItemWritesRefuseBadBodiesAndWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	cases := []struct {
		body  obj
		param string
	}{
		{obj{"number": "X"}, "name"},
		{obj{"name": "  "}, "name"},
		{obj{"name": "A", "colour": "red"}, "colour"},
		{obj{"name": "A", "unit_price_cents": -1}, "unit_price_cents"},
		{obj{"name": "A", "currency_code": "eur"}, "currency_code"},
		{obj{"name": "A", "number": ""}, "number"},
		{obj{"name": "A", "active": "yes"}, "active"},
	}
	for _, c := range cases {
		e := env.Do(t, "POST", "/v1/items", ws.Key, c.body).WantError(t, 400, "invalid_request")
		wantParam(t, e, c.param)
	}
	if n := countItems(t, env, ws.ID); n != 0 {
		t.Fatalf("refused requests wrote %d items", n)
	}
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", "/v1/items", viewer, obj{"name": "A"}).WantError(t, 403, "permission_denied")
	env.Do(t, "POST", "/v1/items/upsert", viewer, obj{"name": "A", "number": "A"}).WantError(t, 403, "permission_denied")
	ws.Role(t, "catalog-reader", "items:read")
	reader := ws.NewKey(t, access.KeySpec{Role: "catalog-reader"})
	env.Get(t, "/v1/items", reader).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/items", reader, obj{"name": "A"}).WantError(t, 403, "permission_denied")
	if n := countItems(t, env, ws.ID); n != 0 {
		t.Fatalf("read-only keys wrote %d items", n)
	}
}

func TestConcurrentUpsertsOfOneSKUMakeOneItem(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	const n = 20
	statuses := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			path, body := "/v1/items/upsert", obj{"name": fmt.Sprintf("Racer %d", i), "number": "RACE-1"}
			if i%2 == 1 { // both ways of asking for an upsert race together
				path, body["upsert"] = "/v1/items", true
			}
			r := env.Do(t, "POST", path, ws.Key, body)
			statuses[i] = r.Status
			if r.Status < 300 {
				ids[i] = r.JSON(t)["id"].(string)
			}
		})
	}
	wg.Wait()
	created := tally(t, statuses, 201, 200)
	for i := range ids {
		if ids[i] != ids[0] {
			t.Fatalf("upserts answered different items: %v", ids)
		}
	}
	if created != 1 {
		t.Fatalf("%d creates, want exactly 1 (%v)", created, statuses)
	}
	if c := countItems(t, env, ws.ID); c != 1 {
		t.Fatalf("%d items with one SKU", c)
	}
}

func TestConcurrentCreatesGetDistinctSKUs(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	const n = 20
	nums := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			nums[i], _ = env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Same"}).WantStatus(t, 201).JSON(t)["number"].(string)
		})
	}
	wg.Wait()
	sort.Strings(nums)
	for i, s := range nums {
		if want := fmt.Sprintf("ITM-%06d", i+1); s != want {
			t.Fatalf("allocated %v; want ITM-000001..ITM-%06d without gaps or repeats", nums, n)
		}
	}
}

func TestCategoryTree(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, false)
	root := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Café Crème", "sort_order": 2,
		"translations": obj{"fr": obj{"name": "Café crème"}}}).WantStatus(t, 201).JSON(t)
	if root["slug"] != "cafe-creme" || root["parent_id"] != nil || root["sort_order"] != 2.0 {
		t.Fatalf("root: %v", root)
	}
	again := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Cafe creme!"}).WantStatus(t, 201).JSON(t)
	if again["slug"] != "cafe-creme-2" {
		t.Fatalf("derived slug of a taken name: %v", again["slug"])
	}
	third := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "café crème"}).WantStatus(t, 201).JSON(t)
	if third["slug"] != "cafe-creme-3" {
		t.Fatalf("third derived slug: %v", third["slug"])
	}
	rootID := root["id"].(string)
	child := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Beans", "parent_id": rootID, "slug": "beans"}).WantStatus(t, 201).JSON(t)
	childID := child["id"].(string)
	grand := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Arabica", "parent_id": childID}).WantStatus(t, 201).JSON(t)
	grandID := grand["id"].(string)

	e := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Beans 2", "slug": "beans"}).WantError(t, 409, "duplicate")
	wantParam(t, e, "slug")
	e = env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Bad", "slug": "Not A Slug"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "slug")
	e = env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Orphan", "parent_id": "cat_missing"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "parent_id")
	other := env.Workspace(t, "starter", true, false)
	foreign := env.Do(t, "POST", "/v1/categories", other.Key, obj{"name": "Foreign"}).WantStatus(t, 201).JSON(t)
	e = env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Orphan", "parent_id": foreign["id"]}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "parent_id")

	// Cycles: under itself, under its child, under its grandchild.
	for _, p := range []string{rootID, childID, grandID} {
		e = env.Do(t, "PATCH", "/v1/categories/"+rootID, ws.Key, obj{"name": "Café Crème", "parent_id": p}).WantError(t, 409, "invalid_state_transition")
		wantParam(t, e, "parent_id")
	}
	if got := env.Get(t, "/v1/categories/"+rootID, ws.Key).JSON(t); got["parent_id"] != nil {
		t.Fatalf("a refused move changed the tree: %v", got)
	}
	// A legal move, then null makes it a root again; omitted fields stay.
	moved := env.Do(t, "PATCH", "/v1/categories/"+grandID, ws.Key, obj{"name": "Arabica", "parent_id": rootID}).WantStatus(t, 200).JSON(t)
	if moved["parent_id"] != rootID || moved["slug"] != "arabica" {
		t.Fatalf("moved: %v", moved)
	}
	freed := env.Do(t, "PATCH", "/v1/categories/"+childID, ws.Key, obj{"name": "Green beans", "parent_id": nil}).WantStatus(t, 200).JSON(t)
	if freed["parent_id"] != nil || freed["slug"] != "beans" || freed["name"] != "Green beans" {
		t.Fatalf("freed: %v", freed)
	}
	e = env.Do(t, "PATCH", "/v1/categories/"+childID, ws.Key, obj{"name": "x", "slug": "cafe-creme"}).WantError(t, 409, "duplicate")
	wantParam(t, e, "slug")
	env.Do(t, "PATCH", "/v1/categories/"+foreign["id"].(string), ws.Key, obj{"name": "x"}).WantError(t, 404, "not_found")
	n, err := env.DB.Writer.Category.Query().Where(category.WorkspaceID(ws.ID)).Count(t.Context())
	if err != nil || n != 5 {
		t.Fatalf("%d categories, want 5 (%v)", n, err)
	}
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "PATCH", "/v1/categories/"+childID, viewer, obj{"name": "Viewer"}).WantError(t, 403, "permission_denied")
}

func TestProductWithVariantAxes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, true)
	cat := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Shirts"}).WantStatus(t, 201).JSON(t)
	p := env.Do(t, "POST", "/v1/products", ws.Key, obj{
		"name": "Tee", "sku": "TEE", "unit_price_cents": 1900, "brand": "Acme", "product_type": "physical",
		"media":        []obj{{"url": "https://img.example/tee.jpg", "alt": "Tee"}},
		"categories":   []obj{{"id": cat["id"]}},
		"attributes":   []obj{{"id": "attr_color", "code": "color", "name": "Colour", "values": []string{"Red", "Bleu Ciel"}}},
		"variant_axes": []obj{{"code": "size", "values": []string{"S", "M", "L"}}, {"attribute_id": "attr_color"}},
		"translations": obj{"fr": obj{"name": "T-shirt"}},
	}).WantStatus(t, 201).JSON(t)
	id := p["id"].(string)
	if p["number"] != "TEE" || p["brand"] != "Acme" || p["product_type"] != "physical" {
		t.Fatalf("product: %v", p)
	}
	vs, _ := p["variants"].([]any)
	if len(vs) != 6 {
		t.Fatalf("%d variants, want 3 sizes x 2 colours: %v", len(vs), p["variants"])
	}
	skus := map[string]obj{}
	for _, v := range vs {
		skus[v.(obj)["sku"].(string)] = v.(obj)
	}
	v, ok := skus["TEE-M-BLEU-CIEL"]
	if !ok {
		t.Fatalf("variant SKUs %v lack TEE-M-BLEU-CIEL", skus)
	}
	if o, _ := v["options"].(obj); o["size"] != "M" || o["color"] != "Bleu Ciel" {
		t.Fatalf("variant options %v", v["options"])
	}
	axes, _ := p["variant_axes"].([]any)
	if len(axes) != 2 || axes[1].(obj)["code"] != "color" || axes[1].(obj)["attribute_id"] != "attr_color" {
		t.Fatalf("axes not resolved from the attribute: %v", p["variant_axes"])
	}
	if cs, _ := p["categories"].([]any); len(cs) != 1 || cs[0].(obj)["id"] != cat["id"] {
		t.Fatalf("categories %v", p["categories"])
	}
	if ms, _ := p["media"].([]any); len(ms) != 1 || ms[0].(obj)["url"] != "https://img.example/tee.jpg" {
		t.Fatalf("media %v", p["media"])
	}
	// The item view of a product carries the same commerce fields.
	if it := env.Get(t, "/v1/items/"+id, ws.Key).WantStatus(t, 200).JSON(t); it["brand"] != "Acme" {
		t.Fatalf("item view: %v", it)
	}

	// A new value generates only the missing combinations; old variants stay.
	before := skus["TEE-S-RED"]["id"]
	up := env.Do(t, "PATCH", "/v1/products/"+id, ws.Key, obj{"name": "Tee",
		"variant_axes": []obj{{"code": "size", "values": []string{"S", "M", "L", "XL"}}, {"attribute_id": "attr_color"}}}).WantStatus(t, 200).JSON(t)
	if n := countVariants(t, env, id); n != 8 {
		t.Fatalf("%d variants after adding XL, want 8", n)
	}
	kept := false
	for _, v := range up["variants"].([]any) {
		kept = kept || v.(obj)["id"] == before
	}
	if !kept || up["brand"] != "Acme" {
		t.Fatalf("patch replaced existing data: %v", up)
	}
	// Categories: the list sent replaces the product's; unknown ids are 400.
	e := env.Do(t, "PATCH", "/v1/products/"+id, ws.Key, obj{"name": "Tee", "categories": []obj{{"id": cat["id"]}, {"id": cat["id"]}, {"id": "cat_nope"}}}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "categories[2].id")
	twice := env.Do(t, "PATCH", "/v1/products/"+id, ws.Key, obj{"name": "Tee", "categories": []obj{{"id": cat["id"]}, {"id": cat["id"]}}}).WantStatus(t, 200).JSON(t)
	if cs, _ := twice["categories"].([]any); len(cs) != 1 {
		t.Fatalf("a category sent twice: %v", twice["categories"])
	}
	cleared := env.Do(t, "PATCH", "/v1/products/"+id, ws.Key, obj{"name": "Tee", "categories": []obj{}}).WantStatus(t, 200).JSON(t)
	if cs, _ := cleared["categories"].([]any); len(cs) != 0 {
		t.Fatalf("categories not cleared: %v", cleared["categories"])
	}
}

func TestProductRulesRefuseAndWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, true)
	other := env.Workspace(t, "starter", true, true)
	foreign := env.Do(t, "POST", "/v1/categories", other.Key, obj{"name": "Theirs"}).WantStatus(t, 201).JSON(t)
	cases := []struct {
		body   obj
		status int
		code   string
		param  string
	}{
		{obj{"name": "A", "sku": "A", "number": "B"}, 400, "invalid_request", "sku"},
		{obj{"name": "A", "categories": []obj{{"id": foreign["id"]}}}, 400, "invalid_request", "categories[0].id"},
		{obj{"name": "A", "variant_axes": []obj{{"attribute_id": "nope"}}}, 400, "invalid_request", "variant_axes[0].attribute_id"},
		{obj{"name": "A", "variant_axes": []obj{{"code": "size"}}}, 400, "invalid_request", "variant_axes[0].values"},
		{obj{"name": "A", "variant_axes": []obj{{"code": "size", "values": []string{"S", "S"}}}}, 400, "invalid_request", "variant_axes[0].values"},
		{obj{"name": "A", "variant_axes": []obj{{"values": []string{"S"}}}}, 400, "invalid_request", "variant_axes[0].code"},
		{obj{"name": "A", "media": []obj{{"alt": "no url"}}}, 400, "invalid_request", "media[0].url"},
		{obj{"name": "A", "attributes": []obj{{"code": "c"}, {"code": "c"}}}, 400, "invalid_request", "attributes[1].code"},
	}
	for _, c := range cases {
		e := env.Do(t, "POST", "/v1/products", ws.Key, c.body).WantError(t, c.status, c.code)
		wantParam(t, e, c.param)
	}
	if n := countItems(t, env, ws.ID); n != 0 {
		t.Fatalf("refused products wrote %d items", n)
	}
	// upsert by SKU: create, update; sku and number are one field.
	a := env.Do(t, "POST", "/v1/products/upsert", ws.Key, obj{"name": "Mug", "number": "MUG"}).WantStatus(t, 201).JSON(t)
	b := env.Do(t, "POST", "/v1/products/upsert", ws.Key, obj{"name": "Mug 2", "sku": "MUG"}).WantStatus(t, 200).JSON(t)
	if a["id"] != b["id"] || b["name"] != "Mug 2" {
		t.Fatalf("product upsert: %v then %v", a, b)
	}
	e := env.Do(t, "POST", "/v1/products/upsert", ws.Key, obj{"name": "Mug"}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "sku")
	e = env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Mug", "sku": "MUG"}).WantError(t, 409, "duplicate")
	wantParam(t, e, "sku")
	// A plain item is not a product until a product write makes it one.
	it := env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Plain", "number": "PLAIN"}).WantStatus(t, 201).JSON(t)
	env.Do(t, "PATCH", "/v1/products/"+it["id"].(string), ws.Key, obj{"name": "x"}).WantError(t, 404, "not_found")
	env.Get(t, "/v1/products/"+it["id"].(string), ws.Key).WantError(t, 404, "not_found")
	pr := env.Do(t, "POST", "/v1/products/upsert", ws.Key, obj{"name": "Plain", "sku": "PLAIN", "brand": "B"}).WantStatus(t, 200).JSON(t)
	if pr["id"] != it["id"] || pr["brand"] != "B" {
		t.Fatalf("item not promoted to a product in place: %v", pr)
	}
	// Products need commerce mode and the module.
	noCommerce := env.Workspace(t, "business", false, false)
	env.Do(t, "POST", "/v1/products", noCommerce.Key, obj{"name": "A"}).WantError(t, 403, "commerce_mode_required")
}

func TestProductBulkAnswersPerProduct(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, true)
	env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Existing", "sku": "EX"}).WantStatus(t, 201)
	env.Do(t, "POST", "/v1/products", ws.Key, obj{"name": "Kept", "sku": "KEPT"}).WantStatus(t, 201)
	cat := env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": "Cat"}).WantStatus(t, 201).JSON(t)
	r := env.Do(t, "POST", "/v1/products/bulk", ws.Key, obj{"products": []any{
		obj{"name": "New", "sku": "NEW", "variant_axes": []obj{{"code": "size", "values": []string{"S", "M"}}},
			"categories": []obj{{"id": cat["id"]}}},
		obj{"sku": "NONAME"},
		obj{"name": "Existing v2", "sku": "EX", "categories": []obj{{"id": cat["id"]}}},
		obj{"name": "Refused", "sku": "EX2", "categories": []obj{{"id": "cat_nope"}}},
		obj{"name": "Allocated"},
		obj{"name": "Strict", "sku": "KEPT", "upsert": false},
		"not an object",
		obj{"name": "Twice", "sku": "NEW"},
		obj{"name": "Looks allocated", "sku": "ITM-000001"},
	}}).WantStatus(t, 200)
	var got struct {
		Data []struct {
			Index   int
			Status  string
			Product map[string]any
			Error   map[string]any
		}
		Meta map[string]int
	}
	r.Decode(t, &got)
	want := []struct{ status, param string }{
		{"created", ""}, {"error", "products[1].name"}, {"updated", ""}, {"error", "products[3].categories[0].id"},
		{"created", ""}, {"error", "products[5].sku"}, {"error", "products[6]"}, {"error", "products[7].sku"},
		{"created", ""},
	}
	if len(got.Data) != len(want) {
		t.Fatalf("%d results for %d products: %s", len(got.Data), len(want), r.Body)
	}
	for i, w := range want {
		d := got.Data[i]
		if d.Index != i || d.Status != w.status {
			t.Fatalf("result %d: %+v, want %s", i, d, w.status)
		}
		if w.param != "" && (d.Error["param"] != w.param || d.Error["code"] == nil || d.Error["message"] == nil) {
			t.Fatalf("result %d error %v, want param %s", i, d.Error, w.param)
		}
		if w.status != "error" && d.Product["id"] == nil {
			t.Fatalf("result %d has no product: %+v", i, d)
		}
	}
	if got.Data[5].Error["code"] != "duplicate" {
		t.Fatalf("upsert: false on an existing SKU: %v", got.Data[5].Error)
	}
	if vs, _ := got.Data[0].Product["variants"].([]any); len(vs) != 2 {
		t.Fatalf("bulk variants: %v", got.Data[0].Product["variants"])
	}
	for _, i := range []int{0, 2} {
		if cs, _ := got.Data[i].Product["categories"].([]any); len(cs) != 1 || cs[0].(obj)["id"] != cat["id"] {
			t.Fatalf("bulk result %d categories: %v", i, got.Data[i].Product["categories"])
		}
	}
	if got.Data[2].Product["name"] != "Existing v2" || got.Meta["created"] != 3 || got.Meta["updated"] != 1 || got.Meta["failed"] != 5 {
		t.Fatalf("bulk answer: %s", r.Body)
	}
	if got.Data[4].Product["number"] != "ITM-000002" {
		t.Fatalf("allocated %v next to a hand-typed ITM-000001 in the same batch", got.Data[4].Product["number"])
	}
	if n := countItems(t, env, ws.ID); n != 5 {
		t.Fatalf("%d items, want EX, KEPT, NEW, ITM-000001 and the allocated one", n)
	}

	// The batch itself: at most 100, an array, nothing else beside it.
	many := make([]obj, 101)
	for i := range many {
		many[i] = obj{"name": "P"}
	}
	wantParam(t, env.Do(t, "POST", "/v1/products/bulk", ws.Key, obj{"products": many}).WantError(t, 400, "invalid_request"), "products")
	wantParam(t, env.Do(t, "POST", "/v1/products/bulk", ws.Key, obj{"products": []obj{}}).WantError(t, 400, "invalid_request"), "products")
	wantParam(t, env.Do(t, "POST", "/v1/products/bulk", ws.Key, obj{"items": []obj{}}).WantError(t, 400, "invalid_request"), "items")
	wantParam(t, env.Do(t, "POST", "/v1/products/bulk", ws.Key, obj{}).WantError(t, 400, "invalid_request"), "products")
	if n := countItems(t, env, ws.ID); n != 5 {
		t.Fatalf("refused batches wrote items: %d", n)
	}
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", "/v1/products/bulk", viewer, obj{"products": []obj{{"name": "V"}}}).WantError(t, 403, "permission_denied")
}

// bulkOf builds n products with 2 x 3 variants each.
func bulkOf(n int, prefix string) obj {
	ps := make([]obj, n)
	for i := range ps {
		ps[i] = obj{"name": fmt.Sprintf("Product %d", i), "sku": fmt.Sprintf("%s-%03d", prefix, i), "unit_price_cents": 1000 + i,
			"attributes":   []obj{{"id": "a1", "code": "color", "values": []string{"Red", "Blue"}}},
			"variant_axes": []obj{{"attribute_id": "a1"}, {"code": "size", "values": []string{"S", "M", "L"}}}}
	}
	return obj{"products": ps}
}

func TestBulkUpsertOfHundredProductsWithVariants(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, true)
	body := bulkOf(100, "BLK")
	for round, want := range []string{"created", "updated"} {
		start := time.Now()
		r := env.Do(t, "POST", "/v1/products/bulk", ws.Key, body).WantStatus(t, 200)
		t.Logf("%s: round %d of 100 products took %v", apitest.Backend(), round, time.Since(start))
		var got struct {
			Data []struct {
				Status  string
				Product map[string]any
			}
		}
		r.Decode(t, &got)
		for i, d := range got.Data {
			if d.Status != want {
				t.Fatalf("round %d product %d: %s, want %s", round, i, d.Status, want)
			}
			if vs, _ := d.Product["variants"].([]any); len(vs) != 6 {
				t.Fatalf("round %d product %d: %d variants", round, i, len(vs))
			}
		}
		// More events than one statement of them holds: each product has
		// its own, numbered without repeats.
		evs, err := env.DB.Writer.Event.Query().Where(event.WorkspaceID(ws.ID), event.Type("product."+want)).All(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		objects, seqs := map[string]bool{}, map[int64]bool{}
		for _, e := range evs {
			objects[e.ObjectID], seqs[e.Seq] = true, true
		}
		if len(evs) != 100 || len(objects) != 100 || len(seqs) != 100 {
			t.Fatalf("round %d: %d product.%s events for %d products with %d numbers, want 100 each", round, len(evs), want, len(objects), len(seqs))
		}
	}
	if n := countItems(t, env, ws.ID); n != 100 {
		t.Fatalf("%d items", n)
	}
	if n, _ := env.DB.Writer.Variant.Query().Where(variant.WorkspaceID(ws.ID)).Count(t.Context()); n != 600 {
		t.Fatalf("%d variants, want 600", n)
	}
	if r := env.Get(t, "/v1/products?limit=1", ws.Key).WantStatus(t, 200).JSON(t); r["meta"].(obj)["total"] != 100.0 {
		t.Fatalf("list total %v", r["meta"])
	}
}

func TestConcurrentMovesNeverMakeACategoryCycle(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, false)
	// A ring of moves, all at once: category i goes under category i+1.
	// Whatever order they commit in, the last one would close the ring.
	const n = 12
	for round := range 3 {
		cats := make([]string, n)
		for i := range cats {
			cats[i] = env.Do(t, "POST", "/v1/categories", ws.Key, obj{"name": fmt.Sprintf("R%d-%d", round, i)}).WantStatus(t, 201).JSON(t)["id"].(string)
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range cats {
			wg.Go(func() {
				statuses[i] = env.Do(t, "PATCH", "/v1/categories/"+cats[i], ws.Key, obj{"name": "moved", "parent_id": cats[(i+1)%n]}).Status
			})
		}
		wg.Wait()
		refused := tally(t, statuses, 409, 200)
		parent := map[string]string{}
		for _, id := range cats {
			c, err := env.DB.Writer.Category.Get(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if c.ParentID != nil {
				parent[id] = *c.ParentID
			}
		}
		at := cats[0]
		for range n + 1 {
			at = parent[at]
		}
		if at != "" || refused != 1 {
			t.Fatalf("round %d: %d moves refused (want 1) and the tree has a cycle: %v", round, refused, at != "")
		}
	}
}

// Quotes numbered by the series and by their callers, with numbers the
// series reaches too, created at once: no number is stored twice. On
// PostgreSQL the series' writers take numbers apart (not queued behind
// one row) and a caller's own number waits for those in flight.
func TestConcurrentNumbersOfSeriesAndCallersNeverRepeat(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	const auto, chosen = 24, 8
	nums := make([]string, auto+chosen)
	var wg sync.WaitGroup
	for i := range auto + chosen {
		wg.Go(func() {
			body := obj{"client_name": "Q", "lines": []obj{{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}}}
			if i >= auto {
				body["number"] = fmt.Sprintf("QUO-%06d", 3*(i-auto)+2) // within the series' range
			}
			r := env.Do(t, "POST", "/v1/quotes", ws.Key, body)
			if r.Status == 409 && i >= auto {
				return // the series had stored it first: refused, as it should be
			}
			nums[i] = r.WantStatus(t, 201).JSON(t)["number"].(string)
		})
	}
	wg.Wait()
	var stored struct{ Data []struct{ Number string } }
	env.Get(t, "/v1/quotes?limit=100", ws.Key).WantStatus(t, 200).Decode(t, &stored)
	seen := map[string]bool{}
	for _, q := range stored.Data {
		if seen[q.Number] {
			t.Fatalf("number %s stored twice: %v", q.Number, stored.Data)
		}
		seen[q.Number] = true
	}
	for i, n := range nums {
		if n != "" && !seen[n] || i < auto && n == "" {
			t.Fatalf("answered numbers %v; stored %v", nums, stored.Data)
		}
	}
}
