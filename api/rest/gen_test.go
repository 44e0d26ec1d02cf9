package rest_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// fuzzSeed is the random walk's seed: fixed, so a failure reruns the same
// way, or LEDGERBASE_FUZZ_SEED to walk elsewhere.
func fuzzSeed(t *testing.T) uint64 {
	seed := uint64(18)
	if s := os.Getenv("LEDGERBASE_FUZZ_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LEDGERBASE_FUZZ_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (set LEDGERBASE_FUZZ_SEED to change it)", seed)
	return seed
}

// gen makes request bodies from declarations: plausible values, with
// hostile ones mixed in.
type gen struct {
	r  *rand.Rand
	tg *target
	// rate is how often a value is hostile, chosen per body: some bodies
	// are clean enough to reach the database and the business rules.
	rate float64
}

func newGen(seed uint64, tg *target) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x18)), tg: tg}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return xs[g.r.IntN(len(xs))]
}

// id is a known id most of the time, else one that is no record's.
func (g *gen) id(pool []string) string {
	if len(pool) == 0 || g.chance(0.1) {
		return g.pick([]string{"nope", "cli_00000000000000000000000000", "x y", "ünï"})
	}
	return g.pick(pool)
}

var hostileStrings = []string{
	"", " ", "\t\n", "\x00", "a\x00b", "\x00\x00\x00", "EURO", "eur", "E", "€UR", "\u202e", "💥", "null",
	"0000-00-00", "2026-02-30", "2026-13-01", "9999-12-31", "0001-01-01T00:00:00Z", "2026-01-01T25:00:00Z",
	"1e400", "-1", "'; DROP TABLE clients; --", "%00", "\\u0000", "::", "a:b:", ":b:c",
}

func (g *gen) hostileString() string {
	if g.chance(0.1) {
		return strings.Repeat("x", 10_001) // past the default bound
	}
	return g.pick(hostileStrings)
}

var hostileNumbers = []string{"-1", "0", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"1e30", "1.5", "-0", "2147483648", "4294967296"}

// hostile is any JSON value, most likely of the wrong type.
func (g *gen) hostile() any {
	switch g.r.IntN(8) {
	case 0:
		return nil
	case 1:
		return json.Number(g.pick(hostileNumbers))
	case 2:
		return g.chance(0.5)
	case 3:
		return []any{g.hostileString(), nil}
	case 4:
		return map[string]any{g.hostileString(): g.hostileString()}
	default:
		return g.hostileString()
	}
}

// plausible is a value the field accepts, as far as its declaration says.
func (g *gen) plausible(f resource.Field) any {
	switch f.Type {
	case resource.String:
		if f.Name == "currency_code" {
			return g.pick([]string{"EUR", "USD", "MAD", "XXX"})
		}
		if strings.HasSuffix(f.Name, "_id") || f.Name == "id" {
			return g.id(g.pool(f.Name))
		}
		return g.pick([]string{"Acme", "Café crème", "ITM-000001", "same", "x", "Ünïcödé", "a-b-c", "SKU-" + strconv.Itoa(g.r.IntN(50))})
	case resource.Enum:
		return g.pick(f.Values)
	case resource.Date:
		return g.pick([]string{"2026-01-15", "2025-12-31", "2024-02-29"})
	case resource.Time:
		return g.pick([]string{"2026-01-15T10:00:00Z", "2026-01-15T10:00:00+01:00"})
	case resource.Integer:
		lo := int64(0)
		if f.Min != nil {
			lo = *f.Min
		}
		return json.Number(strconv.FormatInt(lo+g.r.Int64N(5000), 10))
	case resource.Boolean:
		return g.chance(0.5)
	case resource.Object:
		if f.Open {
			return map[string]any{g.pick([]string{"fr", "en", "ar"}): map[string]any{"name": g.pick([]string{"Nom", "x"})}}
		}
		return g.object(f.Items)
	case resource.Array:
		n := g.r.IntN(3)
		out := make([]any, n)
		for i := range out {
			if len(f.Items) == 1 && f.Items[0].Name == "" {
				out[i] = g.value(f.Items[0])
			} else {
				out[i] = g.object(f.Items)
			}
		}
		return out
	case resource.Ref:
		if g.chance(0.5) {
			return "crm:eu:" + strconv.Itoa(g.r.IntN(20))
		}
		return g.object(resource.ExternalRefFields)
	}
	return g.hostile()
}

// pool is where a reference field's ids come from.
func (g *gen) pool(name string) []string {
	switch name {
	case "client_id":
		return g.tg.ids["clients"]
	case "vendor_id":
		return g.tg.ids["vendors"]
	case "sales_order_id":
		return g.tg.ids["sales-orders"]
	case "order_line_id":
		return g.tg.ids["order-lines"]
	case "parent_id", "id": // categories[].id, a category's parent; payment ids are free
		return g.tg.ids["categories"]
	}
	return nil
}

func (g *gen) value(f resource.Field) any {
	if g.chance(g.rate) {
		return g.hostile()
	}
	if f.Type == resource.String && g.chance(g.rate) {
		return g.hostileString()
	}
	return g.plausible(f)
}

func (g *gen) object(fields []resource.Field) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		if f.Name == "" {
			continue
		}
		switch {
		case f.Required && g.chance(0.95), g.chance(0.4):
			m[f.Name] = g.value(f)
		}
	}
	if g.chance(0.03) {
		m[g.pick([]string{"nmae", "\x00", "workspace_id", "id"})] = "x"
	}
	return m
}

// body is a whole request body for op, bulk ones included.
func (g *gen) body(op resource.Op) any {
	g.rate = []float64{0, 0.05, 0.25}[g.r.IntN(3)]
	if op.BulkKey != "" && g.chance(0.5) {
		rows := make([]any, g.r.IntN(4))
		for i := range rows {
			rows[i] = g.object(op.Body)
		}
		return map[string]any{op.BulkKey: rows}
	}
	if g.chance(0.02) {
		return g.pick([]string{"[]", "null", `"x"`, `{"name":"\u0000"`, "{}", `{"name":1e999}`})
	}
	return g.object(op.Body)
}
