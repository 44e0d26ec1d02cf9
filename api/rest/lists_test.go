package rest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
)

// limit and offset have their defaults and bounds on every list; a bad one
// is a 400 naming the parameter.
func TestListBoundsOnEveryList(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, rt := range getRoutes() {
		if rt.Op.Kind != resource.List {
			continue
		}
		path := rt.Path
		if rt.Resource.Parent != nil {
			path = fill(rt.Path, firstID(t, env, parentPath(rt.Resource), d.A.Key))
		}
		checkListBounds(t, env, path, d.A.Key)
	}
}

// checkListBounds holds a list to the list convention's limit and offset.
func checkListBounds(t *testing.T, env *apitest.Env, path, key string) {
	t.Helper()
	for _, bad := range []struct{ query, param string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=-1", "limit"}, {"limit=abc", "limit"}, {"limit=", "limit"},
		{"offset=-1", "offset"}, {"offset=abc", "offset"}, {"offset=1.5", "offset"},
		{"colour=red", "colour"},
	} {
		e := env.Get(t, path+"?"+bad.query, key).WantError(t, 400, "invalid_request")
		if e["param"] != bad.param {
			t.Fatalf("%s?%s: param %v, want %s", path, bad.query, e["param"], bad.param)
		}
	}
	for _, good := range []struct {
		query         string
		limit, offset int
	}{{"", 25, 0}, {"limit=1", 1, 0}, {"limit=100&offset=3", 100, 3}, {"offset=100000", 25, 100000}} {
		l := getList(t, env, path+"?"+good.query, key)
		if l.Meta.Limit != good.limit || l.Meta.Offset != good.offset || len(l.Data) > good.limit {
			t.Fatalf("%s?%s: meta %+v with %d records", path, good.query, l.Meta, len(l.Data))
		}
	}
}

// The lists served by hand hold to the same convention: the events, the
// webhook endpoints and an endpoint's deliveries.
func TestListBoundsOnEventsAndWebhookLists(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver, AllowHTTP: true, AllowPrivateNetworks: true}))
	ws := env.Workspace(t, "starter", false, false)
	// Stopped, so no delivery is queued for another test's worker.
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, obj{"url": "http://hooks.test/bounds", "enabled_events": []string{"*"},
		"disabled": true}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Bounds", "lines": []obj{line("x", 1000, 100, 0)}}).WantStatus(t, 201)
	for _, path := range []string{"/v1/events", "/v1/webhook-endpoints", "/v1/webhook-endpoints/" + ep["id"].(string) + "/deliveries"} {
		checkListBounds(t, env, path, ws.Key)
	}
}

// Pages are stable and add up: two pages of 7 are the first 14, and
// meta.total is exact.
func TestPagesAreStableAndTotalIsExact(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, r := range []*resource.Resource{resource.Invoices, resource.SalesOrders, resource.Items, resource.Clients} {
		all := getList(t, env, "/v1/"+r.Name+"?limit=14", d.A.Key)
		p1 := getList(t, env, "/v1/"+r.Name+"?limit=7", d.A.Key)
		p2 := getList(t, env, "/v1/"+r.Name+"?limit=7&offset=7", d.A.Key)
		got := append(p1.Data, p2.Data...)
		if len(got) != len(all.Data) {
			t.Fatalf("%s: %d + %d records, want %d", r.Name, len(p1.Data), len(p2.Data), len(all.Data))
		}
		for i := range got {
			if got[i]["id"] != all.Data[i]["id"] {
				t.Fatalf("%s: record %d is %v on pages, %v in one", r.Name, i, got[i]["id"], all.Data[i]["id"])
			}
		}
		var n int
		if err := env.DB.ReadPool.QueryRow(env.DB.Rebind("SELECT COUNT(*) FROM "+r.Table+" t WHERE workspace_id = ?"+scope(r)), d.A.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if all.Meta.Total != n {
			t.Fatalf("%s: total %d, the workspace has %d", r.Name, all.Meta.Total, n)
		}
		past := getList(t, env, fmt.Sprintf("/v1/%s?offset=%d", r.Name, n), d.A.Key)
		if len(past.Data) != 0 || past.Meta.Total != n {
			t.Fatalf("%s past the end: %d records, total %d", r.Name, len(past.Data), past.Meta.Total)
		}
	}
}

func scope(r *resource.Resource) string {
	if r.Scope == "" {
		return ""
	}
	return " AND t." + r.Scope
}

// Every declared filter keeps exactly the records with that value: each
// listed record matches, and the total is the count of matching records.
func TestEveryNamedFilter(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, r := range resource.All {
		for _, f := range r.Filters {
			// Values to try: every enum value, true/false, or ids seen in the data.
			var values []string
			switch f.Type {
			case resource.Enum:
				values = f.Values
			case resource.Boolean:
				values = []string{"true", "false"}
			default:
				seen := map[string]bool{}
				for _, rec := range getList(t, env, "/v1/"+r.Name+"?limit=100", d.A.Key).Data {
					if v, ok := rec[f.Column].(string); ok && !seen[v] && len(values) < 3 {
						seen[v] = true
						values = append(values, v)
					}
				}
				if len(values) == 0 {
					t.Fatalf("%s: no %s in the demo data", r.Name, f.Column)
				}
				values = append(values, "nope_01h0000000000000000000000")
			}
			if f.Type == resource.Date {
				values = values[:len(values)-1] // dates, not ids: "nope" is refused below
			}
			// A range's end keeps the records on its side of the date, that date included.
			op, keeps := "=", func(got string, v string) bool { return got == v }
			switch f.Bound {
			case ">=":
				op, keeps = ">=", func(got, v string) bool { return got != "<nil>" && got >= v }
			case "<=":
				op, keeps = "<=", func(got, v string) bool { return got != "<nil>" && got <= v }
			}
			matched := 0
			for _, v := range values {
				l := getList(t, env, "/v1/"+r.Name+"?limit=100&"+f.Param+"="+url.QueryEscape(v), d.A.Key)
				for _, rec := range l.Data {
					if !keeps(fmt.Sprint(rec[f.Column]), v) {
						t.Fatalf("%s?%s=%s listed a record with %s=%v", r.Name, f.Param, v, f.Column, rec[f.Column])
					}
				}
				arg := any(v)
				if f.Type == resource.Boolean {
					arg = v == "true"
				}
				var n int
				q := "SELECT COUNT(*) FROM " + r.Table + " t WHERE workspace_id = ? AND " + f.Column + " " + op + " ?" + scope(r)
				if err := env.DB.ReadPool.QueryRow(env.DB.Rebind(q), d.A.ID, arg).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if l.Meta.Total != n || len(l.Data) != min(n, 100) {
					t.Fatalf("%s?%s=%s: total %d, %d listed; %d match", r.Name, f.Param, v, l.Meta.Total, len(l.Data), n)
				}
				matched += n
			}
			if matched == 0 {
				t.Fatalf("%s: filter %s matched nothing in the demo data", r.Name, f.Param)
			}
			if f.Type == resource.Enum && len(f.Values) > 2 {
				// Several values match any of them: the total is the sum of theirs.
				want := 0
				for _, v := range f.Values[:3] {
					want += getList(t, env, "/v1/"+r.Name+"?limit=1&"+f.Param+"="+v, d.A.Key).Meta.Total
				}
				l := getList(t, env, "/v1/"+r.Name+"?limit=100&"+f.Param+"="+strings.Join(f.Values[:3], ","), d.A.Key)
				if l.Meta.Total != want || len(l.Data) != min(want, 100) {
					t.Fatalf("%s?%s=%s: total %d, %d listed; want %d", r.Name, f.Param, strings.Join(f.Values[:3], ","), l.Meta.Total, len(l.Data), want)
				}
				for _, rec := range l.Data {
					if !slices.Contains(f.Values[:3], fmt.Sprint(rec[f.Column])) {
						t.Fatalf("%s?%s=%s listed %s=%v", r.Name, f.Param, strings.Join(f.Values[:3], ","), f.Column, rec[f.Column])
					}
				}
				e := env.Get(t, "/v1/"+r.Name+"?"+f.Param+"="+f.Values[0]+",bogus", d.A.Key).WantError(t, 400, "invalid_request")
				if e["param"] != f.Param {
					t.Fatalf("%s?%s=%s,bogus: param %v", r.Name, f.Param, f.Values[0], e["param"])
				}
			}
			if f.Type == resource.Enum || f.Type == resource.Boolean || f.Type == resource.Date {
				e := env.Get(t, "/v1/"+r.Name+"?"+f.Param+"=bogus", d.A.Key).WantError(t, 400, "invalid_request")
				if e["param"] != f.Param {
					t.Fatalf("%s?%s=bogus: param %v", r.Name, f.Param, e["param"])
				}
			}
		}
	}
	// Filters combine: online orders of one store.
	store := firstID(t, env, "/v1/stores", d.A.Key)
	l := getList(t, env, "/v1/sales-orders?limit=100&online=true&channel_id="+store, d.A.Key)
	for _, o := range l.Data {
		if o["online"] != true || o["channel_id"] != store || o["payment_status"] == nil || o["shipping_status"] == nil {
			t.Fatalf("online order of %s: %v", store, o)
		}
	}
}

// q finds a record by its number and by its name, whatever the case, on
// every searchable list; something nobody typed finds nothing.
func TestQFindsRecordsByNumberAndName(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, r := range resource.All {
		if len(r.Search) == 0 || r.Parent != nil {
			continue
		}
		recs := getList(t, env, "/v1/"+r.Name+"?limit=5", d.A.Key).Data
		if len(recs) == 0 {
			t.Fatalf("no %s", r.Name)
		}
		for _, rec := range recs {
			for _, col := range r.Search {
				v, _ := rec[col].(string)
				if v == "" {
					continue
				}
				for _, q := range []string{v, strings.ToUpper(v), strings.ToLower(v)} {
					found := false
					l := getList(t, env, "/v1/"+r.Name+"?limit=100&q="+url.QueryEscape(q), d.A.Key)
					for _, x := range l.Data {
						found = found || x["id"] == rec["id"]
					}
					if !found && l.Meta.Total <= 100 {
						t.Fatalf("%s?q=%s (%s) does not find %s", r.Name, q, col, rec["id"])
					}
				}
			}
		}
		l := getList(t, env, "/v1/"+r.Name+"?q=zzqxjv", d.A.Key)
		if l.Meta.Total != 0 || len(l.Data) != 0 {
			t.Fatalf("%s?q=zzqxjv found %d", r.Name, l.Meta.Total)
		}
	}
	// By number and by name, explicitly.
	inv := getList(t, env, "/v1/invoices?q=inv-000042", d.A.Key)
	if len(inv.Data) != 1 || inv.Data[0]["number"] != "INV-000042" {
		t.Fatalf("q=inv-000042: %v", inv.Data)
	}
	c := getList(t, env, "/v1/clients?limit=1", d.A.Key).Data[0]
	word := strings.Fields(c["name"].(string))[0]
	for _, x := range getList(t, env, "/v1/clients?limit=100&q="+url.QueryEscape(strings.ToLower(word)), d.A.Key).Data {
		if !strings.Contains(strings.ToLower(fmt.Sprint(x["name"], x["email"], x["contact"])), strings.ToLower(word)) {
			t.Fatalf("q=%s found %v", word, x)
		}
	}
	// Another workspace's records are never found.
	other := getList(t, env, "/v1/invoices?limit=1", d.B.Key).Data[0]
	for _, x := range getList(t, env, "/v1/invoices?limit=100&q="+url.QueryEscape(other["number"].(string)), d.A.Key).Data {
		if x["id"] == other["id"] {
			t.Fatal("q found another workspace's invoice")
		}
	}
	env.Get(t, "/v1/invoices?q="+strings.Repeat("a", 201), d.A.Key).WantError(t, 400, "invalid_request")
	// Search syntax of either database is just text here.
	for _, q := range []string{`"`, `*`, `AND`, `OR NOT`, `NEAR(a b)`, `a:*`, `'`, `é`, `%`, `\`, `a & b | !c`, `-x`, `^`, `inv-`} {
		getList(t, env, "/v1/invoices?q="+url.QueryEscape(q), d.A.Key)
	}
}

// Pages are written into the response's reused body buffer: on one
// keep-alive connection, a short page or an error after a long page holds
// nothing of the long one.
func TestPagesOnOneConnectionAreWhole(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	one := *env
	one.Client = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	defer one.Client.CloseIdleConnections()
	long := getList(t, &one, "/v1/invoices?limit=100", d.A.Key)
	short := getList(t, &one, "/v1/invoices?limit=1", d.A.Key)
	if len(long.Data) < 2 || len(short.Data) != 1 || short.Meta.Total != long.Meta.Total {
		t.Fatalf("long page %d records, short %d (totals %d, %d)", len(long.Data), len(short.Data), long.Meta.Total, short.Meta.Total)
	}
	one.Get(t, "/v1/invoices?limit=101", d.A.Key).WantError(t, 400, "invalid_request")
	if again := getList(t, &one, "/v1/invoices?limit=1&offset=1", d.A.Key); len(again.Data) != 1 {
		t.Fatalf("page after an error: %d records", len(again.Data))
	}
}
