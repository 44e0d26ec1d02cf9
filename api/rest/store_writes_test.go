package rest_test

import (
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/store"
)

func countStores(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	n, err := env.DB.Writer.Store.Query().Where(store.WorkspaceID(ws)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStoreCreateEditAndPrimaryURL(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)

	s := env.Do(t, "POST", "/v1/stores", ws.Key, obj{"name": "Boulangerie Martin", "free_address": " Martin.Ledgerbase.Shop. ",
		"currency_code": "EUR"}).WantStatus(t, 201).JSON(t)
	id, _ := s["id"].(string)
	if s["free_address"] != "martin.ledgerbase.shop" || s["primary_url"] != "https://martin.ledgerbase.shop" || s["custom_domain"] != nil ||
		s["custom_domain_verified"] != false || s["custom_domain_active"] != false || s["active"] != true || len(id) < 5 || id[:4] != "sto_" {
		t.Fatalf("created store: %v", s)
	}
	env.Do(t, "POST", "/v1/stores", ws.Key, obj{"name": "Other shop", "free_address": "other.ledgerbase.shop"}).WantStatus(t, 201)

	// primary_url is the custom domain only once it is both verified and active.
	steps := []struct {
		body             obj
		domain           any
		verified, active bool
		primary          string
	}{
		{obj{"custom_domain": "Shop.Martin.FR"}, "shop.martin.fr", false, false, "https://martin.ledgerbase.shop"},
		{obj{"custom_domain_verified": true}, "shop.martin.fr", true, false, "https://martin.ledgerbase.shop"},
		{obj{"custom_domain_active": true}, "shop.martin.fr", true, true, "https://shop.martin.fr"},
		// The same domain again changes nothing.
		{obj{"custom_domain": "shop.martin.fr"}, "shop.martin.fr", true, true, "https://shop.martin.fr"},
		// Another domain must be verified and switched on again.
		{obj{"custom_domain": "boutique.martin.fr"}, "boutique.martin.fr", false, false, "https://martin.ledgerbase.shop"},
		{obj{"custom_domain_verified": true, "custom_domain_active": true}, "boutique.martin.fr", true, true, "https://boutique.martin.fr"},
		{obj{"custom_domain_active": false}, "boutique.martin.fr", true, false, "https://martin.ledgerbase.shop"},
		{obj{"custom_domain_active": true, "free_address": "martin2.ledgerbase.shop"}, "boutique.martin.fr", true, true, "https://boutique.martin.fr"},
		// Removing the domain removes its state.
		{obj{"custom_domain": nil}, nil, false, false, "https://martin2.ledgerbase.shop"},
	}
	for i, st := range steps {
		st.body["name"] = "Boulangerie Martin"
		got := env.Do(t, "PATCH", "/v1/stores/"+id, ws.Key, st.body).WantStatus(t, 200).JSON(t)
		if got["custom_domain"] != st.domain || got["custom_domain_verified"] != st.verified || got["custom_domain_active"] != st.active ||
			got["primary_url"] != st.primary {
			t.Fatalf("step %d %v: %v", i, st.body, got)
		}
		read := env.Get(t, "/v1/stores/"+id, ws.Key).WantStatus(t, 200).JSON(t)
		if read["primary_url"] != st.primary || read["custom_domain"] != st.domain {
			t.Fatalf("step %d: GET reads %v", i, read)
		}
	}
	// PATCH carries name and leaves what it omits as it is.
	got := env.Do(t, "PATCH", "/v1/stores/"+id, ws.Key, obj{"name": "Martin & Fils", "active": false}).WantStatus(t, 200).JSON(t)
	if got["name"] != "Martin & Fils" || got["active"] != false || got["free_address"] != "martin2.ledgerbase.shop" || got["currency_code"] != "EUR" {
		t.Fatalf("patched store: %v", got)
	}

	if l := getList(t, env, "/v1/stores", ws.Key); l.Meta.Total != 2 {
		t.Fatalf("stores list: %+v", l)
	}
	l := getList(t, env, "/v1/stores?q=Fils", ws.Key)
	if l.Meta.Total != 1 || l.Data[0]["id"] != id || l.Data[0]["primary_url"] != "https://martin2.ledgerbase.shop" {
		t.Fatalf("q=Fils: %+v", l)
	}

	// A retried create with its Idempotency-Key makes one store.
	body := obj{"name": "Retry shop", "free_address": "retry.ledgerbase.shop"}
	first := env.Do(t, "POST", "/v1/stores", ws.Key, body, "Idempotency-Key", "store-create-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/stores", ws.Key, body, "Idempotency-Key", "store-create-1").WantStatus(t, 201)
	if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" || countStores(t, env, ws.ID) != 3 {
		t.Fatalf("idempotent retry: %s / %s (replayed %q)", first.Body, again.Body, again.Header.Get("Idempotent-Replayed"))
	}
}

func TestStoreWritesRefuseAndWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	id := env.Do(t, "POST", "/v1/stores", ws.Key, obj{"name": "Shop", "free_address": "shop.ledgerbase.shop"}).WantStatus(t, 201).JSON(t)["id"].(string)
	before := fingerprint(t, env, ws.ID)

	for _, c := range []struct {
		method string
		body   obj
		param  string
	}{
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "colour": "red"}, "colour"},
		{"POST", obj{"free_address": "s.ledgerbase.shop"}, "name"},
		{"POST", obj{"name": "S"}, "free_address"},
		{"POST", obj{"name": "S", "free_address": "https://s.ledgerbase.shop"}, "free_address"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop/shop"}, "free_address"},
		{"POST", obj{"name": "S", "free_address": "localhost"}, "free_address"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain": "shop example.com"}, "custom_domain"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain": "shop.example.com:8443"}, "custom_domain"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain": "-shop.example.com"}, "custom_domain"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain": "10.0.0.1"}, "custom_domain"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain_active": true}, "custom_domain_active"},
		{"POST", obj{"name": "S", "free_address": "s.ledgerbase.shop", "custom_domain_verified": "yes"}, "custom_domain_verified"},
		{"PATCH", obj{"custom_domain": "shop.example.com"}, "name"},
		{"PATCH", obj{"name": "S", "free_address": ""}, "free_address"},
		{"PATCH", obj{"name": "S", "custom_domain": "http://shop.example.com/"}, "custom_domain"},
		{"PATCH", obj{"name": "S", "custom_domain_verified": true}, "custom_domain_verified"},
		{"PATCH", obj{"name": "S", "primary_url": "https://x.example.com"}, "primary_url"},
	} {
		path := "/v1/stores"
		if c.method == "PATCH" {
			path += "/" + id
		}
		wantParam(t, env.Do(t, c.method, path, ws.Key, c.body).WantError(t, 400, "invalid_request"), c.param)
	}

	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", "/v1/stores", viewer, obj{"name": "S", "free_address": "s.ledgerbase.shop"}).WantError(t, 403, "permission_denied")
	env.Do(t, "PATCH", "/v1/stores/"+id, viewer, obj{"name": "S"}).WantError(t, 403, "permission_denied")
	env.Get(t, "/v1/stores/"+id, viewer).WantStatus(t, 200)
	for _, plan := range []string{"starter", "growth"} {
		low := env.Workspace(t, plan, true, true)
		env.Do(t, "POST", "/v1/stores", low.Key, obj{"name": "S", "free_address": "s.ledgerbase.shop"}).WantError(t, 403, "plan_required")
		env.Do(t, "PATCH", "/v1/stores/"+id, low.Key, obj{"name": "S"}).WantError(t, 403, "plan_required")
	}
	other := env.Workspace(t, "business", false, false)
	env.Do(t, "PATCH", "/v1/stores/"+id, other.Key, obj{"name": "Theirs"}).WantError(t, 404, "not_found")
	env.Do(t, "PATCH", "/v1/stores/sto_nope", ws.Key, obj{"name": "Nobody"}).WantError(t, 404, "not_found")

	if after := fingerprint(t, env, ws.ID); after != before {
		t.Fatalf("refused writes changed the workspace:\n%s\n%s", before, after)
	}
	if got := env.Get(t, "/v1/stores/"+id, ws.Key).JSON(t); got["name"] != "Shop" {
		t.Fatalf("store after refusals: %v", got)
	}
}
