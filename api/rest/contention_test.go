package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// raceLimit bounds every answer of a race: a write that waits behind the
// others, or retries, still answers well within it.
const raceLimit = 5 * time.Second

// race sends n requests at once, request i to servers[i%len(servers)], and
// returns the answers; each must come within raceLimit.
func race(t *testing.T, servers []*apitest.Env, n int, send func(env *apitest.Env, i int) *apitest.Response) []*apitest.Response {
	t.Helper()
	out := make([]*apitest.Response, n)
	took := make([]time.Duration, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			out[i] = send(servers[i%len(servers)], i)
			took[i] = time.Since(t0)
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d requests, the slowest answered in %v", n, slices.Max(took).Round(time.Millisecond))
	for i, d := range took {
		if d > raceLimit {
			t.Errorf("request %d took %v (status %d), more than %v", i, d.Round(time.Millisecond), out[i].Status, raceLimit)
		}
	}
	return out
}

// concurrentPosts sends n POSTs of the same body at once, split over the
// servers, and returns the answers.
func concurrentPosts(t *testing.T, env *apitest.Env, key, path string, n int, body func(i int) obj) []*apitest.Response {
	t.Helper()
	return postsTo(t, []*apitest.Env{env}, key, path, n, body)
}

func postsTo(t *testing.T, servers []*apitest.Env, key, path string, n int, body func(i int) obj) []*apitest.Response {
	t.Helper()
	return race(t, servers, n, func(env *apitest.Env, i int) *apitest.Response { return env.Do(t, "POST", path, key, body(i)) })
}

// Issue 18 item 3: 50 concurrent creates of one category name all succeed,
// each with its own derived slug; contention must not exhaust the write
// path's retries (it did on PostgreSQL: 500 on category_workspace_id_slug).
func TestConcurrentCategoryCreatesOfOneNameGetDistinctSlugs(t *testing.T) {
	t.Parallel()
	servers := apitest.Servers(t, 2)
	ws := servers[0].Workspace(t, "starter", true, false)
	const n = 50
	res := postsTo(t, servers, ws.Key, "/v1/categories", n, func(int) obj { return obj{"name": "Same"} })
	var slugs []string
	for _, r := range res {
		r.WantStatus(t, http.StatusCreated)
		slugs = append(slugs, r.JSON(t)["slug"].(string))
	}
	want := []string{"same"}
	for i := 2; i <= n; i++ {
		want = append(want, fmt.Sprintf("same-%d", i))
	}
	sort.Strings(slugs)
	sort.Strings(want)
	if fmt.Sprint(slugs) != fmt.Sprint(want) {
		t.Fatalf("slugs %v, want same, same-2 … same-%d once each", slugs, n)
	}
}

// A slug the caller chose is theirs: under contention one create wins and
// the others get a clear 409 duplicate naming slug, never a 5xx.
func TestConcurrentCategoryCreatesOfOneChosenSlug(t *testing.T) {
	t.Parallel()
	servers := apitest.Servers(t, 2)
	ws := servers[0].Workspace(t, "starter", true, false)
	const n = 50
	res := postsTo(t, servers, ws.Key, "/v1/categories", n, func(i int) obj {
		if i%2 == 0 { // derived slugs race with the chosen one
			return obj{"name": "Fixed"}
		}
		return obj{"name": fmt.Sprint("Fixed ", i), "slug": "fixed"}
	})
	created, slugs := 0, map[string]bool{}
	for i, r := range res {
		switch {
		case r.Status == http.StatusCreated:
			s := r.JSON(t)["slug"].(string)
			if slugs[s] {
				t.Fatalf("slug %q given twice", s)
			}
			slugs[s] = true
			if i%2 == 1 {
				created++
			}
		case r.Status == http.StatusConflict && i%2 == 1:
			wantParam(t, r.WantError(t, http.StatusConflict, "duplicate"), "slug")
		default:
			t.Fatalf("request %d: status %d: %s", i, r.Status, r.Body)
		}
	}
	if created > 1 || !slugs["fixed"] {
		t.Fatalf("%d creates with the chosen slug, slugs %v", created, slugs)
	}
}

// Allocated SKUs hold under the same contention, and a SKU the caller
// chose is created once and refused (409) for the rest.
func TestConcurrentItemCreatesAllocateAndRefuseCleanly(t *testing.T) {
	t.Parallel()
	servers := apitest.Servers(t, 2)
	ws := servers[0].Workspace(t, "starter", false, false)
	const n = 50
	res := postsTo(t, servers, ws.Key, "/v1/items", n, func(i int) obj {
		if i%2 == 0 {
			return obj{"name": "Allocated"}
		}
		return obj{"name": "Chosen", "number": "CHOSEN-1"}
	})
	nums, chosen := map[string]bool{}, 0
	for i, r := range res {
		switch {
		case r.Status == http.StatusCreated:
			num := r.JSON(t)["number"].(string)
			if nums[num] {
				t.Fatalf("number %q given twice", num)
			}
			nums[num] = true
			if num == "CHOSEN-1" {
				chosen++
			}
		case r.Status == http.StatusConflict && i%2 == 1:
			wantParam(t, r.WantError(t, http.StatusConflict, "duplicate"), "number")
		default:
			t.Fatalf("request %d: status %d: %s", i, r.Status, r.Body)
		}
	}
	if chosen != 1 || len(nums) != n/2+1 {
		t.Fatalf("%d creates of the chosen SKU, %d numbers in all: %v", chosen, len(nums), nums)
	}
}

// Issue 32 item 1: 40 concurrent PATCHes, split over two servers, each
// making an address of one client its default billing address: 40
// addresses, or 4 asked 10 times each. On PostgreSQL they deadlocked (500)
// or hung: each locked its address, then waited for the client's row, held
// by one that was clearing the default of an address locked by another
// waiting write. Every one answers, in time, and one default is left.
func TestConcurrentDefaultAddressChangesLeaveOneDefault(t *testing.T) {
	t.Parallel()
	servers := apitest.Servers(t, 2)
	ws := servers[0].Workspace(t, "growth", false, false)
	const n = 40
	for _, addresses := range []int{n, 4} {
		cli := servers[0].Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Many addresses"}).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
		base := "/v1/clients/" + cli + "/addresses"
		ids := make([]string, addresses)
		for i := range ids {
			ids[i] = servers[i%2].Do(t, "POST", base, ws.Key, obj{"name": fmt.Sprint("Address ", i)}).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
		}
		res := race(t, servers, n, func(env *apitest.Env, i int) *apitest.Response {
			a := i % addresses
			return env.Do(t, "PATCH", base+"/"+ids[a], ws.Key, obj{"name": fmt.Sprint("Address ", a), "default_billing": true})
		})
		won := map[string]bool{}
		for i, r := range res {
			switch r.Status {
			case http.StatusOK:
				won[ids[i%addresses]] = true
			case http.StatusConflict:
			default:
				t.Errorf("%d addresses, request %d: status %d: %s", addresses, i, r.Status, r.Body)
			}
		}
		var l struct{ Data []map[string]any }
		servers[1].Get(t, base+"?limit=100", ws.Key).WantStatus(t, http.StatusOK).Decode(t, &l)
		var defaults []string
		for _, a := range l.Data {
			if a["default_billing"] == true {
				defaults = append(defaults, a["id"].(string))
			}
		}
		if len(l.Data) != addresses || len(defaults) != 1 || !won[defaults[0]] {
			t.Fatalf("%d addresses listed, default billing %v, want %d and one of the %d that a PATCH made it", len(l.Data), defaults, addresses, len(won))
		}
	}
}
