package demo_test

import (
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// A demo product's variants are keyed as the API keys them: sending a
// product's own axes back to it makes no variant, as for a product made
// over the API (TestProductWithVariantAxes).
func TestDemoVariantsAreKeyedAsTheAPIKeysThem(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 6}); err != nil {
		t.Fatal(err)
	}
	type product = map[string]any
	var list struct{ Data []product }
	env.Get(t, "/v1/products?limit=100", ws.Key).WantStatus(t, 200).Decode(t, &list)
	checked := 0
	for _, p := range list.Data {
		vs, _ := p["variants"].([]any)
		if len(vs) < 2 || checked == 3 {
			continue
		}
		checked++
		up := env.Do(t, "PATCH", "/v1/products/"+p["id"].(string), ws.Key,
			product{"name": p["name"], "variant_axes": p["variant_axes"]}).WantStatus(t, 200).JSON(t)
		if got, _ := up["variants"].([]any); len(got) != len(vs) {
			t.Errorf("%s: %d variants after sending its own axes back, want its %d", p["number"], len(got), len(vs))
		}
	}
	if checked == 0 {
		t.Fatal("the demo made no product with variants")
	}
}
