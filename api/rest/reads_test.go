package rest_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// shownKeys are the JSON keys a record of r carries, derived from the
// declaration: its table's shown columns, computed fields and embeds;
// commerce ones only when withCommerce.
func shownKeys(r *resource.Resource, withCommerce bool) []string {
	var out []string
	for _, c := range records.Columns(r) {
		if !c.Commerce || withCommerce {
			out = append(out, c.Name)
		}
	}
	for _, c := range r.Computed {
		out = append(out, c.Name)
	}
	for _, e := range r.Embeds {
		if !e.Commerce || withCommerce {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkRecord fails unless rec has r's shape: its prefixed id, RFC 3339
// UTC times, and exactly the declared keys (nothing hidden leaks).
func checkRecord(t *testing.T, r *resource.Resource, rec map[string]any) {
	t.Helper()
	id, _ := rec["id"].(string)
	if !ids.HasPrefix(id, r.Prefix) {
		t.Fatalf("%s: id %q lacks prefix %s", r.Name, id, r.Prefix)
	}
	for _, k := range []string{"created_at", "updated_at"} {
		s, _ := rec[k].(string)
		if ts, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") || ts.IsZero() {
			t.Fatalf("%s %s: %s is %q, want RFC 3339 UTC", r.Name, id, k, s)
		}
	}
	want := shownKeys(r, false)
	if r.CommerceFlag != "" {
		if _, product := rec[r.CommerceColumns[0]]; product {
			want = shownKeys(r, true)
		}
	}
	if got := keysOf(rec); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %s: keys\n got %v\nwant %v", r.Name, id, got, want)
	}
	for _, e := range r.Embeds {
		if v, ok := rec[e.Name]; ok {
			if _, isList := v.([]any); !isList {
				t.Fatalf("%s %s: %s is %T, want a list", r.Name, id, e.Name, v)
			}
		}
	}
}

// Every GET endpoint answers records of its declared shape; lists answer
// the envelope, newest first, and a single read equals the listed record.
func TestEveryGetEndpointAnswersItsRecordShape(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, rt := range getRoutes() {
		rt := rt
		t.Run(rt.Path, func(t *testing.T) {
			t.Parallel()
			r := rt.Resource
			if r == resource.Me {
				l := getList(t, env, "/v1/me", d.A.Key)
				if len(l.Data) != 1 || l.Meta.Total != 1 || l.Meta.Limit != 25 || l.Meta.Offset != 0 {
					t.Fatalf("me: %+v", l)
				}
				me := l.Data[0]
				if me["workspace_id"] != d.A.ID || me["plan"] != "business" || me["commerce_mode"] != true || me["commerce_module"] != true {
					t.Fatalf("me: %v", me)
				}
				key, _ := me["key"].(map[string]any)
				if key["role"] != "admin" || !strings.HasPrefix(d.A.Key, key["prefix"].(string)) {
					t.Fatalf("me key: %v", key)
				}
				return
			}
			if r.Singleton {
				// One record, no id: the fields of its update and updated_at.
				got := env.Get(t, rt.Path, d.A.Key).WantStatus(t, 200).JSON(t)
				op, _ := r.Op(resource.Update)
				want := []string{"updated_at"}
				for _, f := range op.Body {
					want = append(want, f.Name)
				}
				var keys []string
				for k := range got {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				sort.Strings(want)
				if !reflect.DeepEqual(keys, want) {
					t.Fatalf("%s: keys\n got %v\nwant %v", rt.Path, keys, want)
				}
				return
			}
			switch rt.Op.Kind {
			case resource.List:
				path := listPath(t, env, r, d.A.Key)
				l := getList(t, env, path, d.A.Key)
				if l.Meta.Limit != 25 || l.Meta.Offset != 0 || l.Meta.Total < len(l.Data) || len(l.Data) == 0 || len(l.Data) > 25 {
					t.Fatalf("%s: meta %+v with %d records", path, l.Meta, len(l.Data))
				}
				if l.Meta.Total > 25 && len(l.Data) != 25 {
					t.Fatalf("%s: %d records on a first page of %d", path, len(l.Data), l.Meta.Total)
				}
				prev := ""
				for _, rec := range l.Data {
					checkRecord(t, r, rec)
					at := rec["created_at"].(string) + rec["id"].(string)
					if prev != "" && at > prev {
						t.Fatalf("%s is not newest first: %s after %s", path, at, prev)
					}
					prev = at
				}
			case resource.Get:
				l := getList(t, env, "/v1/"+r.Name, d.A.Key)
				if len(l.Data) == 0 {
					t.Fatalf("no %s to read", r.Name)
				}
				for _, want := range l.Data[:min(5, len(l.Data))] {
					res := env.Get(t, fill(rt.Path, want["id"].(string)), d.A.Key).WantStatus(t, 200)
					got := res.JSON(t)
					checkRecord(t, r, got)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("GET %s differs from its list record:\n%v\n%v", want["id"], got, want)
					}
					if res.Header.Get("X-Request-Id") == "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
						t.Fatalf("headers %v", res.Header)
					}
				}
			}
		})
	}
}

// An unknown id and another workspace's id are both plain 404s, on every
// single-record read and under every sub-resource's parent.
func TestOtherWorkspacesRecordsAreNotFound(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	for _, rt := range getRoutes() {
		r := rt.Resource
		// A singleton has no id: each workspace reads its own (company_test.go).
		if r == resource.Me || r.Singleton || (rt.Op.Kind == resource.List && r.Parent == nil) {
			continue
		}
		owner := r
		if r.Parent != nil {
			owner = r.Parent.Resource
		}
		theirs := firstID(t, env, "/v1/"+owner.Name, d.B.Key)
		for _, id := range []string{theirs, owner.Prefix + "_01h0000000000000000000000", "nope"} {
			path := fill(rt.Path, id)
			r := env.Get(t, path, d.A.Key)
			e := r.WantError(t, 404, "not_found")
			if strings.Contains(fmt.Sprint(e["message"]), theirs) {
				t.Fatalf("%s: the 404 repeats the id: %v", path, e)
			}
		}
		// The owner sees it.
		env.Get(t, fill(rt.Path, theirs), d.B.Key).WantStatus(t, 200)
	}
}

// Stores carry primary_url: the verified, active custom domain, else the
// free store address.
func TestStoresCarryTheirPrimaryURL(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	l := getList(t, env, "/v1/stores?limit=100", d.A.Key)
	var custom, free int
	for _, s := range l.Data {
		want := "https://" + s["free_address"].(string)
		if dom, _ := s["custom_domain"].(string); dom != "" && s["custom_domain_verified"] == true && s["custom_domain_active"] == true {
			want = "https://" + dom
			custom++
		} else {
			free++
		}
		if s["primary_url"] != want {
			t.Fatalf("store %s: primary_url %v, want %s", s["name"], s["primary_url"], want)
		}
	}
	if custom == 0 || free == 0 {
		t.Fatalf("demo stores: %d on a custom domain, %d on the free address", custom, free)
	}
}

// Gift cards show code_last4 and never the code's hash.
func TestGiftCardsShowOnlyTheLastFourCharacters(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	l := env.Get(t, "/v1/gift-cards?limit=100", d.A.Key).WantStatus(t, 200)
	if strings.Contains(string(l.Body), "code_hash") {
		t.Fatalf("gift card list leaks code_hash: %s", l.Body)
	}
	var gl list
	l.Decode(t, &gl)
	for _, g := range gl.Data {
		if s, _ := g["code_last4"].(string); len(s) != 4 {
			t.Fatalf("code_last4 %v", g["code_last4"])
		}
		one := env.Get(t, "/v1/gift-cards/"+g["id"].(string), d.A.Key).WantStatus(t, 200)
		var hashed string
		if err := env.DB.ReadPool.QueryRow(env.DB.Rebind("SELECT code_hash FROM gift_cards WHERE id = ?"), g["id"]).Scan(&hashed); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(one.Body), "code_hash") || strings.Contains(string(one.Body), hashed) {
			t.Fatalf("gift card read leaks its hash: %s", one.Body)
		}
	}
}

// Archived promotions are neither listed nor readable; the others are.
func TestArchivedPromotionsAreNotListed(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	var all, archived int
	rows, err := env.DB.ReadPool.Query(env.DB.Rebind("SELECT id, status FROM promotions WHERE workspace_id = ?"), d.A.ID)
	if err != nil {
		t.Fatal(err)
	}
	var archivedID string
	for rows.Next() {
		var id, status string
		if err := rows.Scan(&id, &status); err != nil {
			t.Fatal(err)
		}
		all++
		if status == "archived" {
			archived++
			archivedID = id
		}
	}
	rows.Close()
	if archived == 0 {
		t.Fatal("the demo has no archived promotion")
	}
	l := getList(t, env, "/v1/promotions?limit=100", d.A.Key)
	if l.Meta.Total != all-archived || len(l.Data) != all-archived {
		t.Fatalf("listed %d (total %d) of %d promotions, %d archived", len(l.Data), l.Meta.Total, all, archived)
	}
	for _, p := range l.Data {
		if p["status"] == "archived" {
			t.Fatalf("archived promotion listed: %v", p)
		}
	}
	env.Get(t, "/v1/promotions/"+archivedID, d.A.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/promotions/"+archivedID+"/codes", d.A.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/promotions?status=archived", d.A.Key).WantError(t, 400, "invalid_request")
}

// Item reads carry the product fields only for products, and only when the
// workspace has commerce on; /v1/products shows the same product with them.
func TestItemReadsCarryCommerceFieldsOnlyForProductsWithCommerceOn(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	env := apitest.Start(t)
	commerce := append(append([]string{}, resource.Items.CommerceColumns...), "variants", "categories")
	check := func(ws demoWS, wantOnProducts bool) {
		t.Helper()
		rows, err := env.DB.ReadPool.Query(env.DB.Rebind("SELECT id, is_product FROM items WHERE workspace_id = ?"), ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		type it struct {
			id      string
			product bool
		}
		var items []it
		for rows.Next() {
			var x it
			if err := rows.Scan(&x.id, &x.product); err != nil {
				t.Fatal(err)
			}
			items = append(items, x)
		}
		rows.Close()
		var products, services int
		for _, x := range items {
			rec := env.Get(t, "/v1/items/"+x.id, ws.Key).WantStatus(t, 200).JSON(t)
			if _, leaked := rec["is_product"]; leaked {
				t.Fatalf("item %s shows is_product", x.id)
			}
			for _, f := range commerce {
				if _, has := rec[f]; has != (x.product && wantOnProducts) {
					t.Fatalf("item %s (product %v, commerce %v): has %s = %v", x.id, x.product, wantOnProducts, f, has)
				}
			}
			if x.product {
				products++
			} else {
				services++
			}
		}
		if products == 0 || services == 0 {
			t.Fatalf("%d products and %d other items", products, services)
		}
	}
	check(d.A, true)
	check(d.Plain, false)

	l := getList(t, env, "/v1/products?limit=1", d.A.Key)
	p := l.Data[0]
	item := env.Get(t, "/v1/items/"+p["id"].(string), d.A.Key).WantStatus(t, 200).JSON(t)
	for _, f := range commerce {
		a, _ := json.Marshal(p[f])
		b, _ := json.Marshal(item[f])
		if string(a) != string(b) {
			t.Fatalf("%s: product %s, item %s", f, a, b)
		}
	}
}
