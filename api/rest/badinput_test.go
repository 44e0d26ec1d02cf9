package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect/sql/schema"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// writeRoutes are the declared write endpoints: the generator and the fuzz
// test cover whatever the declarations add, not a hand-kept list.
func writeRoutes() []api.Route {
	var out []api.Route
	for _, rt := range api.Routes() {
		if rt.Op.Kind != resource.List && rt.Op.Kind != resource.Get {
			out = append(out, rt)
		}
	}
	return out
}

// fingerprint sums up a workspace's records (count and latest updated_at
// of every table that has a workspace_id), in one query: a refused request
// must leave it as it was. API keys (last use), usage counters and
// idempotency records change on every request and are left out.
func fingerprint(t testing.TB, env *apitest.Env, ws string) string {
	t.Helper()
	var parts []string
	for _, tb := range migrate.Tables {
		has := slices.ContainsFunc(tb.Columns, func(c *schema.Column) bool { return c.Name == "workspace_id" })
		if !has || tb.Name == "api_keys" || tb.Name == "key_usages" || tb.Name == "idempotency_keys" {
			continue
		}
		parts = append(parts, fmt.Sprintf("SELECT '%s', count(*), max(updated_at) FROM %s WHERE workspace_id = $1", tb.Name, tb.Name))
	}
	q := strings.Join(parts, " UNION ALL ")
	rows, err := env.DB.WritePool.QueryContext(context.Background(), q, ws)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name string
		var n int64
		var at any
		if err := rows.Scan(&name, &n, &at); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		fmt.Fprintf(&b, "%s=%d@%v ", name, n, at)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return b.String()
}

// target is a workspace with a record of every kind to aim writes at.
type target struct {
	env *apitest.Env
	ws  *apitest.Workspace
	ids map[string][]string // by resource name, plus "order-lines"
}

// newTarget seeds a business workspace with commerce on (every endpoint
// reachable) and collects its record ids.
func newTarget(t testing.TB) *target {
	t.Helper()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(context.Background(), env.DB, ws.ID, demo.Options{Invoices: 20, Seed: 18}); err != nil {
		t.Fatalf("demo data: %v", err)
	}
	tg := &target{env: env, ws: ws, ids: map[string][]string{}}
	collect := func(name, path string) {
		var l list
		env.Get(t, path+"?limit=100", ws.Key).WantStatus(t, 200).Decode(t, &l)
		for _, rec := range l.Data {
			tg.ids[name] = append(tg.ids[name], rec["id"].(string))
			if lines, ok := rec["lines"].([]any); ok && name == "sales-orders" {
				for _, ln := range lines {
					if m, ok := ln.(map[string]any); ok && m["id"] != nil {
						tg.ids["order-lines"] = append(tg.ids["order-lines"], m["id"].(string))
					}
				}
			}
		}
	}
	for _, r := range resource.All {
		if r.Parent == nil && r != resource.Me {
			collect(r.Name, "/v1/"+r.Name)
		}
	}
	for i := range 3 { // addresses: the demo has none
		cli := tg.ids["clients"][0]
		a := env.Do(t, "POST", "/v1/clients/"+cli+"/addresses", ws.Key, obj{"name": fmt.Sprint("Address ", i)}).WantStatus(t, 201).JSON(t)
		tg.ids["addresses"] = append(tg.ids["addresses"], a["id"].(string))
	}
	for _, name := range []string{"clients", "invoices", "bills", "sales-orders", "order-lines", "categories", "items", "products", "promotions", "vendors", "shipments"} {
		if len(tg.ids[name]) == 0 {
			t.Fatalf("the demo data has no %s to aim writes at", name)
		}
	}
	return tg
}

// path fills a route's ids: the parent's (or the record's) at :id, the
// child's at the second parameter; pick chooses among the known ids.
func (tg *target) path(rt api.Route, pick func([]string) string) string {
	first := rt.Resource
	if rt.Resource.Parent != nil {
		first = rt.Resource.Parent.Resource
	}
	ids := []string{pick(tg.ids[first.Name]), pick(tg.ids[rt.Resource.Name])}
	return fill(rt.Path, ids...)
}

// send makes one request and holds it to the rules of issue 18: never a
// 5xx, and a 4xx has written nothing.
func (tg *target) send(t *testing.T, method, path string, body any) *apitest.Response {
	t.Helper()
	before := fingerprint(t, tg.env, tg.ws.ID)
	r := tg.env.Do(t, method, path, tg.ws.Key, body)
	if r.Status >= 500 {
		t.Fatalf("%s %s answered %d: %s\nbody sent: %.500q", method, path, r.Status, r.Body, fmt.Sprint(body))
	}
	if r.Status >= 400 {
		if after := fingerprint(t, tg.env, tg.ws.ID); after != before {
			t.Fatalf("%s %s answered %d yet wrote:\nbefore %s\nafter  %s\nbody sent: %.500q", method, path, r.Status, before, after, fmt.Sprint(body))
		}
	}
	return r
}

// Issue 18 item 4: values the data model cannot hold are a 400 naming the
// field, refused before the database sees them, and write nothing. They
// were 500s: an empty name (ent's validator), a four-letter currency
// (MaxLen(3)), and on PostgreSQL any string holding NUL (SQLSTATE 22021).
func TestValuesTheModelCannotHoldAre400(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cli, item, cat := tg.ids["clients"][0], tg.ids["items"][0], tg.ids["categories"][0]
	inv, so := tg.ids["invoices"][0], tg.ids["sales-orders"][0]
	cases := []struct {
		method, path string
		body         obj
		param        string
	}{
		{"POST", "/v1/clients", obj{"name": ""}, "name"},
		{"POST", "/v1/clients", obj{"name": "   "}, "name"},
		{"PATCH", "/v1/clients/" + cli, obj{"name": ""}, "name"},
		{"POST", "/v1/vendors", obj{"name": ""}, "name"},
		{"POST", "/v1/clients", obj{"name": "A", "currency_code": "EURO"}, "currency_code"},
		{"POST", "/v1/clients", obj{"name": "A", "currency_code": "eur"}, "currency_code"},
		{"POST", "/v1/vendors", obj{"name": "A", "currency_code": "EURO"}, "currency_code"},
		{"POST", "/v1/clients/" + cli + "/addresses", obj{"name": "A", "currency_code": "EURO"}, "currency_code"},
		{"POST", "/v1/items", obj{"name": "A", "currency_code": "E1R"}, "currency_code"},
		{"POST", "/v1/clients", obj{"name": "A\u0000B"}, "name"},
		{"POST", "/v1/clients", obj{"name": "A", "notes": "\u0000"}, "notes"},
		{"POST", "/v1/clients", obj{"name": "A", "external_ref": "crm:eu:\u0000"}, "external_ref"},
		{"POST", "/v1/vendors", obj{"name": "A", "email": "a\u0000@b"}, "email"},
		{"PATCH", "/v1/items/" + item, obj{"name": "A", "description": "x\u0000"}, "description"},
		{"POST", "/v1/items", obj{"name": "A", "translations": obj{"fr": obj{"name": "\u0000"}}}, "translations.fr.name"},
		{"POST", "/v1/products", obj{"name": "A", "media": []obj{{"url": "https://x/\u0000"}}}, "media[0].url"},
		{"POST", "/v1/categories", obj{"name": "A", "translations": obj{"f\u0000r": "x"}}, "translations"},
		{"PATCH", "/v1/categories/" + cat, obj{"name": "\u0000"}, "name"},
		{"POST", "/v1/invoices/" + inv + "/payments", obj{"id": "p\u0000", "number": "1", "status": "pending", "date": "2026-01-02"}, "id"},
		{"POST", "/v1/shipments", obj{"sales_order_id": so, "carrier": "\u0000"}, "carrier"},
	}
	for _, c := range cases {
		r := tg.send(t, c.method, c.path, c.body)
		wantParam(t, r.WantError(t, http.StatusBadRequest, "invalid_request"), c.param)
	}
}

// A seeded random walk over every declared write endpoint, in plain `go
// test`, on whichever database the harness runs: bodies derived from each
// declaration, half of their values hostile (NUL, blanks, wrong types,
// bounds, bad dates and currencies, unknown fields, unknown ids). Any 5xx
// fails, and so does a 4xx that wrote something.
func TestRandomWritesNeverAnswer5xx(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	g := newGen(fuzzSeed(t), tg)
	for i := range 25 * len(writeRoutes()) {
		rt := writeRoutes()[i%len(writeRoutes())]
		path := tg.path(rt, g.id)
		if g.chance(0.05) { // an id that is no record's: a NUL, a space
			path = fill(rt.Path, url.PathEscape(g.hostileString()), url.PathEscape(g.hostileString()))
		}
		tg.send(t, rt.Method, path, g.body(rt.Op))
	}
}
