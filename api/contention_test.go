package api_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// concurrentPosts sends n POSTs of the same body at once and returns the answers.
func concurrentPosts(t *testing.T, env *apitest.Env, key, path string, n int, body func(i int) obj) []*apitest.Response {
	t.Helper()
	out := make([]*apitest.Response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = env.Do(t, "POST", path, key, body(i))
		})
	}
	close(start)
	wg.Wait()
	return out
}

// Issue 18 item 3: 50 concurrent creates of one category name all succeed,
// each with its own derived slug; contention must not exhaust the write
// path's retries (it did on PostgreSQL: 500 on category_workspace_id_slug).
func TestConcurrentCategoryCreatesOfOneNameGetDistinctSlugs(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, false)
	const n = 50
	res := concurrentPosts(t, env, ws.Key, "/v1/categories", n, func(int) obj { return obj{"name": "Same"} })
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
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", true, false)
	const n = 50
	res := concurrentPosts(t, env, ws.Key, "/v1/categories", n, func(i int) obj {
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
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	const n = 50
	res := concurrentPosts(t, env, ws.Key, "/v1/items", n, func(i int) obj {
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
