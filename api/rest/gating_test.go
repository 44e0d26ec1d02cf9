package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// gatedPath is a concrete path for rt where gating answers before any
// lookup: a made-up id is fine, the 403 comes first.
func gatedPath(pattern string) string {
	return fill(pattern, "any_01h0000000000000000000000", "any_01h0000000000000000000001")
}

// Every GET endpoint of a resource above a workspace's plan is a 403
// plan_required whose message names the plan; the plan itself reaches it.
func TestPlanGatingOnEveryGetEndpoint(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	keys := map[resource.Plan]string{}
	for _, name := range resource.PlanNames() {
		p, _ := resource.ParsePlan(name)
		keys[p] = env.Workspace(t, name, true, true).Key
	}
	for _, rt := range getRoutes() {
		r := rt.Resource
		for plan, key := range keys {
			res := env.Get(t, gatedPath(rt.Path), key)
			if plan < r.Plan {
				e := res.WantError(t, 403, "plan_required")
				if !strings.Contains(e["message"].(string), r.Plan.String()) {
					t.Fatalf("%s on %s: message %q does not name the %s plan", rt.Path, plan, e["message"], r.Plan)
				}
				continue
			}
			if res.Status == 403 {
				t.Fatalf("%s on %s: %d %s", rt.Path, plan, res.Status, res.Body)
			}
		}
	}
}

// Commerce mode gates products, categories and shipments; the commerce
// module gates products (spec section 1), on lists and single reads.
func TestCommerceConditions(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	modeOff := env.Workspace(t, "business", false, true).Key
	moduleOff := env.Workspace(t, "business", true, false).Key
	both := env.Workspace(t, "business", true, true).Key
	var mode, module []string
	for _, rt := range getRoutes() {
		r := rt.Resource
		path := gatedPath(rt.Path)
		switch {
		case r.Needs&resource.CommerceMode != 0:
			env.Get(t, path, modeOff).WantError(t, 403, "commerce_mode_required")
			mode = append(mode, r.Name)
		default:
			if res := env.Get(t, path, modeOff); res.Status == 403 {
				t.Fatalf("%s without commerce mode: %s", rt.Path, res.Body)
			}
		}
		switch {
		case r.Needs&resource.CommerceModule != 0:
			env.Get(t, path, moduleOff).WantError(t, 403, "commerce_module_required")
			module = append(module, r.Name)
		default:
			if res := env.Get(t, path, moduleOff); res.Status == 403 {
				t.Fatalf("%s without the commerce module: %s", rt.Path, res.Body)
			}
		}
		if res := env.Get(t, path, both); res.Status == 403 {
			t.Fatalf("%s with commerce on: %s", rt.Path, res.Body)
		}
	}
	for _, want := range []string{"products", "categories", "shipments"} {
		if !strings.Contains(strings.Join(mode, ","), want) {
			t.Errorf("%s is not gated by commerce mode (gated: %v)", want, mode)
		}
	}
	if strings.Join(unique(module), ",") != "products" {
		t.Errorf("commerce module gates %v, want products only", unique(module))
	}
}

func unique(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// A custom role reads only what it grants (sub-resources follow their
// parent's grant); viewer reads everything; me and the company profile
// (a singleton) are always readable.
func TestRolesGovernReads(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	ws.Role(t, "billing", "invoices:read,clients:write,vendors:none")
	billing := ws.NewKey(t, access.KeySpec{Role: "billing", RateLimit: new(int)})
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer, RateLimit: new(int)})
	for _, rt := range getRoutes() {
		r := rt.Resource
		path := gatedPath(rt.Path)
		res := env.Get(t, path, billing)
		switch grant := r.PermissionName(); {
		case r == resource.Me, r.Singleton, grant == "invoices", grant == "clients":
			if res.Status == 403 {
				t.Fatalf("billing role on %s: %s", rt.Path, res.Body)
			}
		default:
			e := res.WantError(t, 403, "permission_denied")
			if !strings.Contains(fmt.Sprint(e["message"]), grant) {
				t.Fatalf("%s: message %q does not name %s", rt.Path, e["message"], grant)
			}
		}
		if res := env.Get(t, path, viewer); res.Status == 403 {
			t.Fatalf("viewer on %s: %s", rt.Path, res.Body)
		}
	}
	// A viewer may not write.
	env.Do(t, "POST", "/v1/vendors", viewer, map[string]any{"name": "V"}).WantError(t, 403, "permission_denied")
}

// Every GET endpoint refuses every kind of bad key with its own 401 code.
func TestEveryGetEndpointRefusesBadKeys(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	expired := ws.NewKey(t, access.KeySpec{ExpiresIn: 1})
	revoked := ws.NewKey(t, access.KeySpec{Name: "revoke me"})
	k, err := env.DB.Writer.APIKey.Query().All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range k {
		if key.WorkspaceID == ws.ID && key.Name == "revoke me" {
			if err := access.RevokeKey(t.Context(), env.DB.Writer, key.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	bad := []struct{ header, code string }{
		{"", "missing_api_key"},
		{"Token " + ws.Key, "invalid_api_key"},
		{"Bearer lb_short", "invalid_api_key"},
		{"Bearer lb_" + strings.Repeat("A", 40), "invalid_api_key"},
		{"Bearer " + expired, "expired_api_key"},
		{"Bearer " + revoked, "revoked_api_key"},
	}
	for _, rt := range getRoutes() {
		for _, b := range bad {
			var h []string
			if b.header != "" {
				h = []string{"Authorization", b.header}
			}
			env.Do(t, "GET", gatedPath(rt.Path), "", nil, h...).WantError(t, 401, b.code)
		}
	}
}
