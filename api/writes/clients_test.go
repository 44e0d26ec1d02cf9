package writes_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// total is the meta.total of a list.
func total(t *testing.T, env *apitest.Env, path, key string) int {
	t.Helper()
	var l struct {
		Meta struct{ Total int } `json:"meta"`
	}
	env.Get(t, path, key).WantStatus(t, http.StatusOK).Decode(t, &l)
	return l.Meta.Total
}

func TestCreateClientAnswers201WithTheRecordAGetReturns(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	r := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{
		"name": "Acme", "email": "billing@acme.test", "currency_code": "USD", "preferred_language": "fr", "active": false,
	}).WantStatus(t, http.StatusCreated)
	c := r.JSON(t)
	id, _ := c["id"].(string)
	if !strings.HasPrefix(id, "cli_") || c["name"] != "Acme" || c["email"] != "billing@acme.test" || c["currency_code"] != "USD" ||
		c["preferred_language"] != "fr" || c["active"] != false || c["external_ref"] != nil || c["phones"] != "" {
		t.Fatalf("created client %v", c)
	}
	got := env.Get(t, "/v1/clients/"+id, ws.Key).WantStatus(t, http.StatusOK)
	if string(got.Body) != string(r.Body) {
		t.Fatalf("create answered %s, GET answers %s", r.Body, got.Body)
	}
}

func TestClientExternalRefUpsertsInBothForms(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	first := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{
		"name": "Acme", "email": "a@acme.test", "external_ref": "shopify:store-1:gid://Customer/42",
	}).WantStatus(t, http.StatusCreated).JSON(t)
	ref, _ := first["external_ref"].(map[string]any)
	if ref["system"] != "shopify" || ref["connection_id"] != "store-1" || ref["external_id"] != "gid://Customer/42" {
		t.Fatalf("external_ref not normalized: %v", first["external_ref"])
	}
	// The object form of the same ref updates the same client; omitted fields stay.
	second := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{
		"name": "Acme Inc", "external_ref": map[string]any{"system": "shopify", "connection_id": "store-1", "external_id": "gid://Customer/42"},
	}).WantStatus(t, http.StatusOK).JSON(t)
	if second["id"] != first["id"] || second["name"] != "Acme Inc" || second["email"] != "a@acme.test" {
		t.Fatalf("upsert did not update the same client: %v", second)
	}
	// An empty connection is null, in either form; it is another ref.
	third := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Other", "external_ref": "shopify::gid://Customer/42"}).
		WantStatus(t, http.StatusCreated).JSON(t)
	if r := third["external_ref"].(map[string]any); r["connection_id"] != nil {
		t.Fatalf("empty connection not null: %v", r)
	}
	again := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{
		"name": "Other 2", "external_ref": map[string]any{"system": "shopify", "connection_id": nil, "external_id": "gid://Customer/42"},
	}).WantStatus(t, http.StatusOK).JSON(t)
	if again["id"] != third["id"] {
		t.Fatalf("null connection matched %v, want %v", again["id"], third["id"])
	}
	if n := total(t, env, "/v1/clients", ws.Key); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}
	// Another workspace's ref never matches.
	other := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", "/v1/clients", other.Key, map[string]any{"name": "Acme", "external_ref": "shopify:store-1:gid://Customer/42"}).
		WantStatus(t, http.StatusCreated)
}

func TestClientRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cases := []struct {
		name  string
		body  any
		param string
	}{
		{"ref without connection part", map[string]any{"name": "A", "external_ref": "shopify:42"}, "external_ref"},
		{"ref without system", map[string]any{"name": "A", "external_ref": ":c:42"}, "external_ref.system"},
		{"ref without id", map[string]any{"name": "A", "external_ref": "s:c:"}, "external_ref.external_id"},
		{"object ref without external_id", map[string]any{"name": "A", "external_ref": map[string]any{"system": "s"}}, "external_ref.external_id"},
		{"object ref with an unknown key", map[string]any{"name": "A", "external_ref": map[string]any{"system": "s", "external_id": "1", "x": 1}}, "external_ref.x"},
		{"ref of a wrong type", map[string]any{"name": "A", "external_ref": 42}, "external_ref"},
		{"missing name", map[string]any{"email": "a@b.test"}, "name"},
		{"name of a wrong type", map[string]any{"name": 7}, "name"},
		{"unknown field", map[string]any{"name": "A", "emial": "a@b.test"}, "emial"},
		{"bad preferred_language", map[string]any{"name": "A", "preferred_language": "de"}, "preferred_language"},
		{"active as a string", map[string]any{"name": "A", "active": "yes"}, "active"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := env.Do(t, "POST", "/v1/clients", ws.Key, c.body).WantError(t, http.StatusBadRequest, "invalid_request")
			if e["param"] != c.param {
				t.Fatalf("param %v, want %s", e["param"], c.param)
			}
		})
	}
	env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "A",`).WantError(t, http.StatusBadRequest, "invalid_json")
	env.Do(t, "POST", "/v1/clients", ws.Key, `["name"]`).WantError(t, http.StatusBadRequest, "invalid_json")
	env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "A"} {}`).WantError(t, http.StatusBadRequest, "invalid_json")
	env.Do(t, "POST", "/v1/clients", ws.Key, "name=A", "Content-Type", "application/x-www-form-urlencoded").
		WantError(t, http.StatusUnsupportedMediaType, "unsupported_media_type")
	big := `{"name": "A", "notes": "` + strings.Repeat("x", 1<<20) + `"}`
	env.Do(t, "POST", "/v1/clients", ws.Key, big).WantError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
	if n := total(t, env, "/v1/clients", ws.Key); n != 0 {
		t.Fatalf("refused requests wrote %d clients", n)
	}
}

func TestPatchClientKeepsOmittedFieldsAndNullClears(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	c := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{
		"name": "Acme", "email": "a@acme.test", "notes": "vip", "preferred_language": "ar", "external_ref": "crm::7",
	}).WantStatus(t, http.StatusCreated).JSON(t)
	id := c["id"].(string)
	u := env.Do(t, "PATCH", "/v1/clients/"+id, ws.Key, map[string]any{"name": "Acme SA", "preferred_language": nil, "notes": ""}).
		WantStatus(t, http.StatusOK).JSON(t)
	if u["name"] != "Acme SA" || u["email"] != "a@acme.test" || u["notes"] != "" || u["preferred_language"] != nil || u["external_ref"] == nil {
		t.Fatalf("patched client %v", u)
	}
	if u["created_at"] != c["created_at"] {
		t.Fatalf("PATCH moved created_at: %v", u)
	}
	// PATCH carries name (spec: client body, name required).
	env.Do(t, "PATCH", "/v1/clients/"+id, ws.Key, map[string]any{"email": "x@acme.test"}).WantError(t, http.StatusBadRequest, "invalid_request")
	// A ref held by another client is a 409, and changes nothing.
	other := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Other"}).WantStatus(t, http.StatusCreated).JSON(t)
	env.Do(t, "PATCH", "/v1/clients/"+other["id"].(string), ws.Key, map[string]any{"name": "Other 2", "external_ref": "crm::7"}).
		WantError(t, http.StatusConflict, "duplicate")
	if got := env.Get(t, "/v1/clients/"+other["id"].(string), ws.Key).JSON(t); got["name"] != "Other" || got["external_ref"] != nil {
		t.Fatalf("refused PATCH changed the client: %v", got)
	}
	env.Do(t, "PATCH", "/v1/clients/cli_nope", ws.Key, map[string]any{"name": "X"}).WantError(t, http.StatusNotFound, "not_found")
	// Another workspace's client is not found either.
	ws2 := env.Workspace(t, "growth", false, false)
	env.Do(t, "PATCH", "/v1/clients/"+id, ws2.Key, map[string]any{"name": "Stolen"}).WantError(t, http.StatusNotFound, "not_found")
	if got := env.Get(t, "/v1/clients/"+id, ws.Key).JSON(t); got["name"] != "Acme SA" {
		t.Fatalf("another workspace renamed the client: %v", got)
	}
}

func TestClientWritesNeedTheGrowthPlan(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "A"}).WantError(t, http.StatusForbidden, "plan_required")
}
