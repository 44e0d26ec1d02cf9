package rest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// demoWS is a workspace filled by the demo generator, with an unlimited admin key.
type demoWS struct {
	ID, Key string
}

// demoSet is what the read tests share: demo data is only read, so one
// seeding serves every test of the package.
type demoSet struct {
	// A and B are business workspaces with commerce on; Plain has the same
	// kind of data with commerce mode and module off.
	A, B, Plain demoWS
}

var (
	demoOnce sync.Once
	demoData demoSet
	demoErr  error
)

// seededWorkspaces returns the shared demo workspaces, seeding them once.
func seededWorkspaces(t *testing.T) demoSet {
	t.Helper()
	db, _ := apitest.DB(t)
	demoOnce.Do(func() {
		ctx := context.Background()
		mk := func(name string, commerce bool, seed uint64) demoWS {
			if demoErr != nil {
				return demoWS{}
			}
			ws, err := access.NewWorkspace(ctx, db.Writer, name, "business", commerce, commerce)
			if err != nil {
				demoErr = err
				return demoWS{}
			}
			if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: 120, Seed: seed}); err != nil {
				demoErr = err
				return demoWS{}
			}
			unlimited := 0
			key, _, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Role: access.RoleAdmin, RateLimit: &unlimited})
			if err != nil {
				demoErr = err
			}
			return demoWS{ID: ws.ID, Key: key}
		}
		demoData = demoSet{A: mk("Demo A", true, 1), B: mk("Demo B", true, 2), Plain: mk("Demo Plain", false, 3)}
	})
	if demoErr != nil {
		t.Fatalf("demo data: %v", demoErr)
	}
	return demoData
}

// getRoutes are the GET endpoints derived from the declarations, plus /v1/me.
func getRoutes() []api.Route {
	out := []api.Route{}
	for _, rt := range api.Routes() {
		if rt.Method == "GET" {
			out = append(out, rt)
		}
	}
	return out
}

// listRoute is the list endpoint of r.
func listRoute(r *resource.Resource) (api.Route, bool) {
	for _, rt := range getRoutes() {
		if rt.Resource == r && rt.Op.Kind == resource.List {
			return rt, true
		}
	}
	return api.Route{}, false
}

// fill puts ids into a route pattern: /v1/clients/:id/addresses.
func fill(pattern string, ids ...string) string {
	parts := strings.Split(pattern, "/")
	k := 0
	for i, p := range parts {
		if strings.HasPrefix(p, ":") && k < len(ids) {
			parts[i] = ids[k]
			k++
		}
	}
	return strings.Join(parts, "/")
}

type list struct {
	Data []map[string]any `json:"data"`
	Meta struct {
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
		Total  int `json:"total"`
	} `json:"meta"`
}

// getList fetches a list and fails unless it is a 200 list envelope.
func getList(t *testing.T, env *apitest.Env, path, key string) list {
	t.Helper()
	r := env.Get(t, path, key).WantStatus(t, 200)
	var l list
	r.Decode(t, &l)
	if l.Data == nil {
		t.Fatalf("%s: no data array: %s", path, r.Body)
	}
	return l
}

// firstID is the id of the first record of a list (parents of sub-resources).
func firstID(t *testing.T, env *apitest.Env, path, key string) string {
	t.Helper()
	l := getList(t, env, path, key)
	if len(l.Data) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return l.Data[0]["id"].(string)
}

// parentPath is the list path of r's parent, or "".
func parentPath(r *resource.Resource) string {
	if r.Parent == nil {
		return ""
	}
	return "/v1/" + r.Parent.Resource.Name
}

// listPath is a concrete list URL of r in a workspace: a sub-resource under
// the parent that has the most children (demo parents may have none).
func listPath(t *testing.T, env *apitest.Env, r *resource.Resource, key string) string {
	t.Helper()
	rt, ok := listRoute(r)
	if !ok {
		t.Fatalf("%s has no list", r.Name)
	}
	if r.Parent == nil {
		return rt.Path
	}
	best, bestN := "", -1
	for _, p := range getList(t, env, parentPath(r)+"?limit=100", key).Data {
		path := fill(rt.Path, p["id"].(string))
		if n := getList(t, env, path, key).Meta.Total; n > bestN {
			best, bestN = path, n
		}
	}
	if bestN <= 0 {
		t.Fatalf("no %s under any of the first 100 %s", r.Name, r.Parent.Resource.Name)
	}
	return best
}
