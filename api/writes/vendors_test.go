package writes_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

func TestVendorCreateAndUpdate(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	v := env.Do(t, "POST", "/v1/vendors", ws.Key, map[string]any{"name": "Paper Co", "phone": "+33 1", "preferred_language": "bilingual"}).
		WantStatus(t, http.StatusCreated).JSON(t)
	id, _ := v["id"].(string)
	if !strings.HasPrefix(id, "ven_") || v["name"] != "Paper Co" || v["phone"] != "+33 1" || v["preferred_language"] != "bilingual" || v["currency_code"] != "EUR" {
		t.Fatalf("created vendor %v", v)
	}
	u := env.Do(t, "PATCH", "/v1/vendors/"+id, ws.Key, map[string]any{"name": "Paper Company", "email": "ap@paper.test", "preferred_language": nil}).
		WantStatus(t, http.StatusOK).JSON(t)
	if u["name"] != "Paper Company" || u["email"] != "ap@paper.test" || u["phone"] != "+33 1" || u["preferred_language"] != nil {
		t.Fatalf("updated vendor %v", u)
	}
	if e := env.Do(t, "POST", "/v1/vendors", ws.Key, map[string]any{"name": "X", "preferred_language": "EN"}).WantError(t, 400, "invalid_request"); e["param"] != "preferred_language" {
		t.Fatalf("param %v", e["param"])
	}
	if e := env.Do(t, "PATCH", "/v1/vendors/"+id, ws.Key, map[string]any{"name": nil}).WantError(t, 400, "invalid_request"); e["param"] != "name" {
		t.Fatalf("param %v", e["param"])
	}
	env.Do(t, "PATCH", "/v1/vendors/ven_nope", ws.Key, map[string]any{"name": "X"}).WantError(t, 404, "not_found")
	if n := total(t, env, "/v1/vendors", ws.Key); n != 1 {
		t.Fatalf("%d vendors, want 1", n)
	}
	if got := env.Get(t, "/v1/vendors/"+id, ws.Key).JSON(t); got["name"] != "Paper Company" {
		t.Fatalf("refused PATCH changed the vendor: %v", got)
	}
}
