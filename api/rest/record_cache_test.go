package rest_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// The render cache must answer byte for byte what a server without it
// answers: every list and every record of every resource, read twice so
// the second read comes from the cache.
func TestRecordCacheAnswersLikeNoCache(t *testing.T) {
	t.Parallel()
	d := seededWorkspaces(t)
	plain := apitest.Start(t, apitest.WithRecordCache(-1))
	// A cache too small for a page: list answers outlive their records.
	for _, cached := range []*apitest.Env{apitest.Start(t), apitest.Start(t, apitest.WithRecordCache(16<<10))} {
		answersLikeNoCache(t, d, cached, plain)
	}
}

func answersLikeNoCache(t *testing.T, d demoSet, cached, plain *apitest.Env) {
	for _, ws := range []demoWS{d.A, d.Plain} {
		for _, rt := range getRoutes() {
			if rt.Op.Kind != resource.List || strings.Contains(rt.Path, ":") {
				continue
			}
			for _, q := range []string{"?limit=5", "?limit=5&offset=150"} {
				path := rt.Path + q
				want := plain.Get(t, path, ws.Key)
				if want.Status != 200 {
					continue // gated for this workspace
				}
				for i := 0; i < 2; i++ {
					if got := cached.Get(t, path, ws.Key); got.Status != 200 || !bytes.Equal(got.Body, want.Body) {
						t.Fatalf("%s (read %d): cached %d %s\nuncached %s", path, i+1, got.Status, got.Body, want.Body)
					}
				}
				var l list
				want.Decode(t, &l)
				for _, rec := range l.Data {
					id, ok := rec["id"].(string)
					if !ok {
						continue
					}
					one := rt.Path + "/" + id
					want := plain.Get(t, one, ws.Key).WantStatus(t, 200)
					for i := 0; i < 2; i++ {
						if got := cached.Get(t, one, ws.Key); !bytes.Equal(got.Body, want.Body) {
							t.Fatalf("%s (read %d): cached %s\nuncached %s", one, i+1, got.Body, want.Body)
						}
					}
				}
			}
		}
	}
}

// A cached record changed by another server on the same database (or by
// any other writer) is answered as it is now, in reads of one, in lists and
// in searches (whose pages can come from the cache by the ids the search
// found).
func TestRecordCacheSeesOtherServersWrites(t *testing.T) {
	t.Parallel()
	a, b := apitest.Start(t), apitest.Start(t)
	ws := a.Workspace(t, "growth", false, false)
	other := a.Workspace(t, "growth", false, false)
	id := a.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Acme One"}).WantStatus(t, 201).JSON(t)["id"].(string)
	// The lists first: reading the record alone would cache it afresh.
	name := func(env *apitest.Env) (one, inList string) {
		for _, path := range []string{"/v1/clients", "/v1/clients?q=acme+one"} {
			found := ""
			for _, c := range getList(t, env, path, ws.Key).Data {
				if c["id"] == id {
					found = c["name"].(string)
				}
			}
			if inList != "" && found != inList {
				t.Fatalf("%s: %q, but the list has %q", path, found, inList)
			}
			inList = found
		}
		one = env.Get(t, "/v1/clients/"+id, ws.Key).WantStatus(t, 200).JSON(t)["name"].(string)
		return one, inList
	}
	for i := 0; i < 2; i++ { // the second read is served from the cache
		if one, inList := name(a); one != "Acme One" || inList != "Acme One" {
			t.Fatalf("before: %q, %q", one, inList)
		}
	}
	// A cached record is another workspace's only by its id: still a 404,
	// with nothing committed since it was cached.
	a.Get(t, "/v1/clients/"+id, other.Key).WantError(t, 404, "not_found")
	b.Do(t, "PATCH", "/v1/clients/"+id, ws.Key, map[string]any{"name": "Acme One Renamed"}).WantStatus(t, 200)
	if one, inList := name(a); one != "Acme One Renamed" || inList != "Acme One Renamed" {
		t.Fatalf("after another server's PATCH: %q, %q", one, inList)
	}
	// A writer outside the API (the CLI, another version of the appliance).
	if err := a.DB.Writer.Customer.UpdateOneID(id).SetName("Acme One Direct").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if one, inList := name(a); one != "Acme One Direct" || inList != "Acme One Direct" {
		t.Fatalf("after a direct write: %q, %q", one, inList)
	}
	// Deleted rows are gone, not served from the cache.
	if err := a.DB.Writer.Customer.DeleteOneID(id).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.Get(t, "/v1/clients/"+id, ws.Key).WantError(t, 404, "not_found")
	for _, path := range []string{"/v1/clients", "/v1/clients?q=acme+one"} {
		if l := getList(t, a, path, ws.Key); len(l.Data) != 0 || l.Meta.Total != 0 {
			t.Fatalf("%s: deleted client still listed: %v", path, l.Data)
		}
	}
}

// Issue 37: a write answered by one server is seen by the next read on any
// other, while every server keeps its caches warm under concurrent reads
// (on PostgreSQL the table versions asked by concurrent reads share one
// query: a read must never be given a version asked before its request).
func TestReadsOnAnyServerSeeTheWriteAnsweredBefore(t *testing.T) {
	t.Parallel()
	servers := apitest.Servers(t, 3)
	ws := servers[0].Workspace(t, "growth", false, false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 6 { // readers keeping every cache warm and the version queries shared
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				env := servers[(g+i)%len(servers)]
				for _, path := range []string{"/v1/clients?limit=5", "/v1/clients?q=racer", "/v1/clients?limit=5&sort=name"} {
					if r := env.Get(t, path, ws.Key); r.Status != 200 {
						t.Errorf("%s: %d %s", path, r.Status, r.Body)
						return
					}
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	listed := func(env *apitest.Env, path, id string) string {
		for _, c := range getList(t, env, path, ws.Key).Data {
			if c["id"] == id {
				return c["name"].(string)
			}
		}
		return ""
	}
	for i := range 60 {
		w, r := servers[i%3], servers[(i+1)%3]
		name := fmt.Sprintf("Racer %d", i)
		id := w.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": name}).WantStatus(t, 201).JSON(t)["id"].(string)
		if got := listed(r, "/v1/clients?limit=5", id); got != name {
			t.Fatalf("round %d: the list on another server has %q for the client just created", i, got)
		}
		if got := listed(r, "/v1/clients?q=racer+"+fmt.Sprint(i), id); got != name {
			t.Fatalf("round %d: the search on another server has %q for the client just created", i, got)
		}
		renamed := name + " renamed"
		w.Do(t, "PATCH", "/v1/clients/"+id, ws.Key, map[string]any{"name": renamed}).WantStatus(t, 200)
		if got := r.Get(t, "/v1/clients/"+id, ws.Key).WantStatus(t, 200).JSON(t)["name"]; got != renamed {
			t.Fatalf("round %d: another server reads %q after the rename", i, got)
		}
		if got := listed(r, "/v1/clients?limit=5", id); got != renamed {
			t.Fatalf("round %d: the list on another server has %q after the rename", i, got)
		}
		if i%4 == 3 {
			// Clients are not deleted over /v1: a writer outside the API.
			if err := w.DB.Writer.Customer.DeleteOneID(id).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
			r.Get(t, "/v1/clients/"+id, ws.Key).WantError(t, 404, "not_found")
			if got := listed(r, "/v1/clients?limit=5", id); got != "" {
				t.Fatalf("round %d: the list on another server still has the deleted client", i)
			}
		}
	}
}
