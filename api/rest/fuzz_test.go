package rest_test

import (
	"testing"
)

// FuzzWriteBodies sends raw bodies to the declared write endpoints of a
// real server: never a 5xx, and a 4xx writes nothing. `go test` runs the
// seeds below (the cases of issue 18 item 4 on every endpoint);
// `go test -fuzz FuzzWriteBodies ./api` explores from them.
func FuzzWriteBodies(f *testing.F) {
	routes := writeRoutes()
	seeds := []string{
		`{"name":""}`,
		`{"name":"A","currency_code":"EURO"}`,
		`{"name":"A\u0000B","sku":"\u0000","number":"\u0000"}`,
		`{"name":"A","notes":"\u0000","description":"\u0000","email":"\u0000"}`,
		`{"name":"A","translations":{"fr":{"name":"\u0000"}},"external_ref":"a:b:\u0000"}`,
		`{"name":"A","translations":{"\u0000":"x"}}`,
		`{"products":[{"name":"A","currency_code":"EURO"},{"name":"\u0000"}]}`,
		`{"events":[{"occurred_at":"2026-01-01T00:00:00Z","description":"\u0000"}]}`,
		`{"occurred_at":"2026-13-01T00:00:00Z"}`,
		`{"id":"\u0000","number":"1","status":"completed","date":"2026-02-30","amount_incl_vat_cents":-1}`,
		`{"id":"p1","number":"1","status":"pending","date":"2026-01-01","currency_code":"eur"}`,
		`{"code":"\u0000","max_uses":0}`,
		`{"sales_order_id":"\u0000","lines":[{"order_line_id":"x","qty_milli":9223372036854775807}]}`,
		`{"name":"A","sort_order":2147483648,"parent_id":"\u0000"}`,
		`{"name":1e999}`, `[]`, `null`, `{}`, `{"name":"A"`,
	}
	for i := range routes {
		for _, s := range seeds {
			f.Add(uint8(i), s)
		}
	}
	tg := newTarget(f)
	first := func(ids []string) string {
		if len(ids) == 0 {
			return "none"
		}
		return ids[0]
	}
	f.Fuzz(func(t *testing.T, route uint8, raw string) {
		rt := routes[int(route)%len(routes)]
		tg.send(t, rt.Method, tg.path(rt, first), raw)
	})
}
