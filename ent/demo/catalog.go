package demo

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

type store struct {
	id, url string
}

type category struct {
	id, slug string
	leaf     *leaf
}

// leaf is a category products are filed under, with how they are named and varied.
type leaf struct {
	name, fr, code string
	nouns          []string
	axes           []shape.VariantAxis
	price          [2]int64 // cents range
}

type variantRef struct {
	id, sku string
	price   int64
	label   string
}

type item struct {
	id, sku, name string
	price         int64
	product       bool
	created       time.Time
	variants      []variantRef
}

var (
	sizes      = shape.VariantAxis{Code: "size", Name: "Size", Values: []string{"S", "M", "L", "XL"}}
	shoeSizes  = shape.VariantAxis{Code: "size", Name: "Size", Values: []string{"39", "40", "41", "42", "43", "44"}}
	colors     = []string{"Black", "White", "Navy", "Olive", "Sand", "Red"}
	adjectives = []string{"Classic", "Organic", "Vintage", "Essential", "Premium", "Everyday", "Urban", "Nordic", "Compact", "Deluxe"}
	brands     = []string{"Northwind", "Fabrikam", "Contoso", "Tailspin", "Litware", "Proseware", "Adatum"}
)

// The category tree: roots with children; leaves carry products.
var tree = []struct {
	name, fr string
	leaves   []leaf
}{
	{"Apparel", "Vêtements", []leaf{
		{name: "T-shirts", fr: "T-shirts", code: "TSH", nouns: []string{"Cotton T-shirt", "Crew Tee", "Pocket Tee"}, axes: []shape.VariantAxis{sizes, {Code: "color", Name: "Color"}}, price: [2]int64{1500, 3500}},
		{name: "Hoodies", fr: "Sweats à capuche", code: "HOO", nouns: []string{"Hoodie", "Zip Hoodie"}, axes: []shape.VariantAxis{sizes, {Code: "color", Name: "Color"}}, price: [2]int64{4500, 8900}},
		{name: "Running shoes", fr: "Chaussures de course", code: "RUN", nouns: []string{"Trail Runner", "Road Runner"}, axes: []shape.VariantAxis{shoeSizes}, price: [2]int64{7900, 15900}},
	}},
	{"Home", "Maison", []leaf{
		{name: "Kitchen", fr: "Cuisine", code: "KIT", nouns: []string{"Chef Knife", "Cutting Board", "Espresso Cups"}, price: [2]int64{1200, 9900}},
		{name: "Lighting", fr: "Éclairage", code: "LGT", nouns: []string{"Desk Lamp", "Pendant Light"}, axes: []shape.VariantAxis{{Code: "color", Name: "Color"}}, price: [2]int64{2900, 14900}},
		{name: "Decor", fr: "Décoration", code: "DEC", nouns: []string{"Throw Pillow", "Wall Print", "Vase"}, price: [2]int64{900, 5900}},
	}},
	{"Electronics", "Électronique", []leaf{
		{name: "Audio", fr: "Audio", code: "AUD", nouns: []string{"Wireless Earbuds", "Bluetooth Speaker", "Headphones"}, axes: []shape.VariantAxis{{Code: "color", Name: "Color"}}, price: [2]int64{3900, 24900}},
		{name: "Accessories", fr: "Accessoires", code: "ACC", nouns: []string{"USB-C Cable", "Power Bank", "Phone Case"}, price: [2]int64{900, 4900}},
	}},
	{"Outdoor", "Plein air", []leaf{
		{name: "Camping", fr: "Camping", code: "CMP", nouns: []string{"Tent", "Sleeping Bag", "Camp Stove"}, price: [2]int64{2900, 29900}},
		{name: "Garden", fr: "Jardin", code: "GRD", nouns: []string{"Planter", "Pruning Shears", "Watering Can"}, price: [2]int64{900, 6900}},
	}},
}

// serviceList are the items that are not products.
var serviceList = []struct {
	name  string
	price int64
}{
	{"Consulting hour", 12000}, {"Installation", 8500}, {"Support plan (monthly)", 4900},
	{"Training session", 45000}, {"Design work (day)", 65000}, {"Maintenance visit", 15000},
	{"Express delivery", 1500}, {"Gift wrapping", 500}, {"Extended warranty", 2900},
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// rosterTime places the i-th of n long-lived records (stores, clients,
// items) in history, the first ones before any document.
func (g *gen) rosterTime(i, n int) time.Time {
	start := g.now.Add(-span - 30*24*time.Hour)
	return start.Add(span * time.Duration(i) / time.Duration(n)).Truncate(time.Millisecond)
}

func (g *gen) stores() {
	n := min(8, 3+g.n/250_000)
	names := []string{"Flagship Store", "Outlet", "Wholesale Shop", "Pop-up", "Kids", "Marketplace", "Europe", "Americas"}
	for i := 0; i < n; i++ {
		at := g.now.Add(-span - time.Duration(60-i)*24*time.Hour).Truncate(time.Second)
		name := names[i%len(names)]
		num := g.next("store")
		free := fmt.Sprintf("%s-%d.ledgerbase.shop", slugify(name), num)
		// Every third store has no custom domain; of the others, one in
		// three is still waiting for DNS verification or activation.
		var domain any
		verified, active := false, false
		if i%3 != 2 {
			domain = fmt.Sprintf("shop%d.%s.example.com", num, slugify(name))
			verified = i%3 == 0 || g.chance(0.5)
			active = verified && i%3 == 0
		}
		s := store{id: g.id("sto", at), url: "https://" + free}
		if active {
			s.url = "https://" + domain.(string)
		}
		g.t.stores.row(append(g.base(s.id, at, at), name, free, domain, verified, active, "EUR", i < 5)...)
		g.storeList = append(g.storeList, s)
	}
}

func (g *gen) categories() {
	at := g.now.Add(-span - 90*24*time.Hour).Truncate(time.Second)
	suffix := ""
	if g.run > 0 {
		suffix = fmt.Sprintf("-%d", g.run)
	}
	for ri, root := range tree {
		rid := g.id("cat", at)
		g.t.categories.row(append(g.base(rid, at, at), root.name, slugify(root.name)+suffix, ri, true,
			js(map[string]any{"fr": map[string]string{"name": root.fr}}), nil)...)
		g.cats = append(g.cats, category{id: rid, slug: slugify(root.name)})
		for li := range root.leaves {
			l := &root.leaves[li]
			id := g.id("cat", at)
			slug := slugify(root.name+" "+l.name) + suffix
			g.t.categories.row(append(g.base(id, at, at), l.name, slug, li, true,
				js(map[string]any{"fr": map[string]string{"name": l.fr}}), rid)...)
			g.cats = append(g.cats, category{id: id, slug: slug, leaf: l})
		}
	}
}

func (g *gen) leaves() []category {
	var out []category
	for _, c := range g.cats {
		if c.leaf != nil {
			out = append(out, c)
		}
	}
	return out
}

// catalog writes items: services, and products with media, listings in
// every store, a leaf category and, for variable ones, every variant.
// Options.Products sets the number of products; services keep their share
// of the default catalog (half), spread evenly among them over time.
func (g *gen) catalog() {
	n := scale(g.n, 50, 12)
	services := n - n/2
	if g.o.Products > 0 {
		n = services + g.o.Products
	}
	leaves := g.leaves()
	made := 0 // services so far
	for i := 0; i < n; i++ {
		at := g.rosterTime(i, n)
		id := g.id("itm", at)
		it := item{id: id, created: at}
		service := i%2 == 0
		if g.o.Products > 0 {
			// where the services' share of the first i+1 items grows
			service = ((i+1)*services+n-1)/n > made
		}
		if service {
			made++
			sv := serviceList[g.rng.IntN(len(serviceList))]
			it.name, it.price = sv.name, sv.price
			if made > len(serviceList) {
				it.name = fmt.Sprintf("%s – %s", sv.name, g.pick(adjectives))
			}
			it.sku = fmt.Sprintf("SRV-%05d", g.next("sku"))
			g.t.items.row(append(g.base(id, at, at), it.sku, it.name, "Service billed by the workspace.", "EUR", it.price,
				!g.chance(0.05), js(map[string]any{}), false, "", "", nil,
				js([]shape.Media{}), js([]shape.Attribute{}), js([]shape.VariantAxis{}), js([]shape.Link{}), js([]shape.Listing{}))...)
			g.items = append(g.items, it)
			continue
		}
		cat := leaves[g.rng.IntN(len(leaves))]
		l := cat.leaf
		it.product = true
		it.name = g.pick(adjectives) + " " + g.pick(l.nouns)
		it.sku = fmt.Sprintf("%s-%05d", l.code, g.next("sku"))
		it.price = (l.price[0] + g.rng.Int64N(l.price[1]-l.price[0])) / 100 * 100
		it.price -= 1 // 24.99, not 25.00
		brand := g.pick(brands)
		slug := slugify(it.name) + "-" + strings.ToLower(it.sku)
		media := []shape.Media{{URL: "https://cdn.example.com/products/" + strings.ToLower(it.sku) + "/1.jpg", Alt: it.name, Position: 1}}
		if g.chance(0.6) {
			media = append(media, shape.Media{URL: "https://cdn.example.com/products/" + strings.ToLower(it.sku) + "/2.jpg", Alt: it.name + " detail", Position: 2})
		}
		var listings []shape.Listing
		for si, s := range g.storeList {
			if si == 0 || g.chance(0.5) {
				listings = append(listings, shape.Listing{StoreID: s.id, Published: g.chance(0.9), URL: s.url + "/products/" + slug})
			}
		}
		links := []shape.Link{}
		if len(g.products) > 0 && g.chance(0.25) {
			links = append(links, shape.Link{Kind: "accessory", ProductID: g.items[g.products[g.rng.IntN(len(g.products))]].id})
		}
		attrs := []shape.Attribute{{Code: "brand", Name: "Brand", Values: []string{brand}}}
		axes := g.axesFor(l)
		// The item goes first: its variants refer to it.
		g.t.items.row(append(g.base(id, at, at), it.sku, it.name, "The "+strings.ToLower(it.name)+" by "+brand+".", "EUR", it.price,
			true, js(map[string]any{"fr": map[string]string{"name": it.name}}), true, "physical", brand, nil,
			js(media), js(attrs), js(axes), js(links), js(listings))...)
		for _, v := range g.combinations(axes) {
			vsku := it.sku + "-" + strings.ToUpper(strings.Join(v.values, "-"))
			var price any
			vp := it.price
			if v.opts["size"] == "XL" {
				vp = it.price + 200
				price = vp
			}
			vid := g.id("var", at)
			g.t.variants.row(append(g.base(vid, at, at), vsku, js(v.opts), shape.OptionsKey(v.opts), price, true, id)...)
			it.variants = append(it.variants, variantRef{id: vid, sku: vsku, price: vp, label: strings.Join(v.values, " / ")})
		}
		g.t.itemCats.row(id, cat.id)
		g.products = append(g.products, len(g.items))
		g.items = append(g.items, it)
	}
}

// axesFor gives a product of leaf l its axes: sizes as declared, two or
// three of the colours; a quarter of the products are simple.
func (g *gen) axesFor(l *leaf) []shape.VariantAxis {
	if len(l.axes) == 0 || g.chance(0.25) {
		return []shape.VariantAxis{}
	}
	out := make([]shape.VariantAxis, len(l.axes))
	for i, a := range l.axes {
		if a.Code == "color" {
			k := 2 + g.rng.IntN(2)
			start := g.rng.IntN(len(colors))
			a.Values = nil
			for j := 0; j < k; j++ {
				a.Values = append(a.Values, colors[(start+j)%len(colors)])
			}
		}
		out[i] = a
	}
	return out
}

type combination struct {
	values []string
	opts   map[string]string
}

// combinations lists every combination of the axes' values, in axis order.
func (g *gen) combinations(axes []shape.VariantAxis) []combination {
	if len(axes) == 0 {
		return nil
	}
	out := []combination{{opts: map[string]string{}}}
	for _, a := range axes {
		var next []combination
		for _, c := range out {
			for _, v := range a.Values {
				o := maps.Clone(c.opts)
				o[a.Code] = v
				next = append(next, combination{values: append(append([]string{}, c.values...), v), opts: o})
			}
		}
		out = next
	}
	return out
}

// before returns how many of a roster (sorted by creation) existed at t.
func before(n int, created func(int) time.Time, t time.Time) int {
	k := sort.Search(n, func(i int) bool { return created(i).After(t) })
	return max(1, k)
}
