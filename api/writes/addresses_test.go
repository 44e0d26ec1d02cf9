package writes_test

import (
	"net/http"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// defaults lists the client's address ids holding each default.
func defaults(t *testing.T, env *apitest.Env, clientID, key string) (billing, shipping []string) {
	t.Helper()
	var l struct{ Data []map[string]any }
	env.Get(t, "/v1/clients/"+clientID+"/addresses", key).WantStatus(t, http.StatusOK).Decode(t, &l)
	for _, a := range l.Data {
		if a["default_billing"] == true {
			billing = append(billing, a["id"].(string))
		}
		if a["default_shipping"] == true {
			shipping = append(shipping, a["id"].(string))
		}
	}
	return billing, shipping
}

func newClient(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	return env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme"}).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
}

func TestAddressesKeepOneDefaultOfEachKind(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key)
	base := "/v1/clients/" + cli + "/addresses"

	// The first billing address becomes the default billing address.
	a1 := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "HQ", "address": "1 Main St"}).WantStatus(t, http.StatusCreated).JSON(t)
	if a1["kind"] != "billing" || a1["default_billing"] != true || a1["default_shipping"] != false || a1["client_id"] != cli || a1["address"] != "1 Main St" {
		t.Fatalf("first address %v", a1)
	}
	// A second billing address does not take the default unless asked.
	a2 := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "Branch"}).WantStatus(t, http.StatusCreated).JSON(t)
	if a2["default_billing"] != false {
		t.Fatalf("second address took the default: %v", a2)
	}
	// Asking for it moves it.
	a3 := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "New HQ", "default_billing": true}).WantStatus(t, http.StatusCreated).JSON(t)
	if b, _ := defaults(t, env, cli, ws.Key); len(b) != 1 || b[0] != a3["id"] {
		t.Fatalf("default billing %v, want [%v]", b, a3["id"])
	}
	// The first shipping address becomes the default shipping address.
	s1 := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "Depot", "kind": "shipping"}).WantStatus(t, http.StatusCreated).JSON(t)
	if s1["default_shipping"] != true || s1["default_billing"] != false {
		t.Fatalf("first shipping address %v", s1)
	}
	// PATCH makes another address the default shipping address and clears the previous.
	u := env.Do(t, "PATCH", base+"/"+a2["id"].(string), ws.Key, map[string]any{"name": "Branch", "default_shipping": true}).
		WantStatus(t, http.StatusOK).JSON(t)
	if u["default_shipping"] != true || u["default_billing"] != false || u["id"] != a2["id"] {
		t.Fatalf("patched address %v", u)
	}
	b, s := defaults(t, env, cli, ws.Key)
	if len(b) != 1 || b[0] != a3["id"] || len(s) != 1 || s[0] != a2["id"] {
		t.Fatalf("defaults billing %v shipping %v", b, s)
	}
	// An update keeps omitted fields; null clears preferred_language.
	env.Do(t, "PATCH", base+"/"+a1["id"].(string), ws.Key, map[string]any{"name": "HQ", "preferred_language": "en"}).WantStatus(t, http.StatusOK)
	got := env.Do(t, "PATCH", base+"/"+a1["id"].(string), ws.Key, map[string]any{"name": "Old HQ", "preferred_language": nil}).
		WantStatus(t, http.StatusOK).JSON(t)
	if got["name"] != "Old HQ" || got["address"] != "1 Main St" || got["preferred_language"] != nil {
		t.Fatalf("updated address %v", got)
	}
	if n := total(t, env, base, ws.Key); n != 4 {
		t.Fatalf("%d addresses, want 4", n)
	}
}

func TestAddressRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key)
	other := newClient(t, env, ws.Key)
	base := "/v1/clients/" + cli + "/addresses"
	a := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "HQ"}).WantStatus(t, http.StatusCreated).JSON(t)

	if e := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "X", "kind": "postal"}).WantError(t, 400, "invalid_request"); e["param"] != "kind" {
		t.Fatalf("param %v", e["param"])
	}
	if e := env.Do(t, "POST", base, ws.Key, map[string]any{"name": "X", "external_ref": "a:b:c"}).WantError(t, 400, "invalid_request"); e["param"] != "external_ref" {
		t.Fatalf("param %v", e["param"])
	}
	env.Do(t, "POST", "/v1/clients/cli_nope/addresses", ws.Key, map[string]any{"name": "X"}).WantError(t, 404, "not_found")
	// An address is reached only through its own client.
	env.Do(t, "PATCH", "/v1/clients/"+other+"/addresses/"+a["id"].(string), ws.Key, map[string]any{"name": "Moved"}).WantError(t, 404, "not_found")
	ws2 := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", base, ws2.Key, map[string]any{"name": "X"}).WantError(t, 404, "not_found")
	env.Do(t, "PATCH", base+"/"+a["id"].(string), ws2.Key, map[string]any{"name": "X"}).WantError(t, 404, "not_found")
	if n := total(t, env, base, ws.Key); n != 1 {
		t.Fatalf("%d addresses, want 1", n)
	}
	if n := total(t, env, "/v1/clients/"+other+"/addresses", ws.Key); n != 0 {
		t.Fatalf("%d addresses on the other client", n)
	}
	if got := env.Get(t, base, ws.Key).JSON(t)["data"].([]any)[0].(map[string]any); got["name"] != "HQ" {
		t.Fatalf("refused writes changed the address: %v", got)
	}
}
