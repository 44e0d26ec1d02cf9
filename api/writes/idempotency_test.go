package writes_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	body := `{"name": "Acme"}`
	first := env.Do(t, "POST", "/v1/clients", ws.Key, body, "Idempotency-Key", "k-1").WantStatus(t, http.StatusCreated)
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("a first response is marked replayed")
	}
	again := env.Do(t, "POST", "/v1/clients", ws.Key, body, "Idempotency-Key", "k-1").WantStatus(t, http.StatusCreated)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("replay %q %s, want the first body %s", again.Header.Get("Idempotent-Replayed"), again.Body, first.Body)
	}
	if n := total(t, env, "/v1/clients", ws.Key); n != 1 {
		t.Fatalf("%d clients, want 1", n)
	}
	// Another body, or the same body on another path, under the key is refused.
	env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "Other"}`, "Idempotency-Key", "k-1").WantError(t, http.StatusConflict, "idempotency_key_reused")
	env.Do(t, "POST", "/v1/vendors", ws.Key, body, "Idempotency-Key", "k-1").WantError(t, http.StatusConflict, "idempotency_key_reused")
	// Keys belong to a workspace: another one uses the same key freely.
	ws2 := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", "/v1/clients", ws2.Key, body, "Idempotency-Key", "k-1").WantStatus(t, http.StatusCreated)
	// Without a key, the same body creates again.
	env.Do(t, "POST", "/v1/clients", ws.Key, body).WantStatus(t, http.StatusCreated)
	if n := total(t, env, "/v1/clients", ws.Key); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}
	// A key longer than 255 characters is a 400 naming the header.
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'k'
	}
	if e := env.Do(t, "POST", "/v1/clients", ws.Key, body, "Idempotency-Key", string(long)).WantError(t, 400, "invalid_request"); e["param"] != "Idempotency-Key" {
		t.Fatalf("param %v", e["param"])
	}
}

func TestIdempotencyKeyStoresBusinessErrorsButNotRefusedRequests(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 100)
	path := "/v1/invoices/" + inv + "/payments"
	// A 409 the operation decided is the answer to the key, even once it would succeed.
	env.Do(t, "POST", path, ws.Key, payment("p", 200), "Idempotency-Key", "pay-1").WantError(t, 409, "amount_exceeds_balance")
	r := env.Do(t, "POST", path, ws.Key, payment("p", 200), "Idempotency-Key", "pay-1")
	r.WantError(t, 409, "amount_exceeds_balance") // carries this request's id
	if r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("a stored error is not marked replayed")
	}
	// A request refused before it ran (validation) does not take the key.
	env.Do(t, "POST", path, ws.Key, map[string]any{"id": "p"}, "Idempotency-Key", "pay-2").WantError(t, 400, "invalid_request")
	ok := env.Do(t, "POST", path, ws.Key, payment("p", 60), "Idempotency-Key", "pay-2").WantStatus(t, http.StatusCreated)
	if ok.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("the first run after a refused request is marked replayed")
	}
	if _, paid, _ := balanceOf(t, env, "/v1/invoices/"+inv, ws.Key); paid != 60 {
		t.Fatalf("paid %d, want 60", paid)
	}
}

func TestExpiredIdempotencyKeysAreForgotten(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "A"}`, "Idempotency-Key", "old").WantStatus(t, http.StatusCreated)
	// Age the key past 24 hours.
	res, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind("UPDATE idempotency_keys SET created_at = ? WHERE workspace_id = ? AND key = ?"),
		time.Now().UTC().Add(-25*time.Hour), ws.ID, "old")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("aged %d keys, want 1", n)
	}
	r := env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "B"}`, "Idempotency-Key", "old").WantStatus(t, http.StatusCreated)
	if r.Header.Get("Idempotent-Replayed") != "" || r.JSON(t)["name"] != "B" {
		t.Fatalf("an expired key was replayed: %s", r.Body)
	}
}

func TestConcurrentRequestsWithOneIdempotencyKeyRunOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	const n = 10
	var wg sync.WaitGroup
	res := make([]*apitest.Response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = env.Do(t, "POST", "/v1/clients", ws.Key, `{"name": "Once"}`, "Idempotency-Key", "race")
		}()
	}
	wg.Wait()
	fresh := 0
	for _, r := range res {
		switch {
		case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "":
			fresh++
		case r.Status == http.StatusCreated:
		case r.Status == http.StatusConflict:
			r.WantError(t, http.StatusConflict, "idempotency_key_in_use")
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	if fresh != 1 {
		t.Fatalf("%d requests ran, want 1", fresh)
	}
	if c := total(t, env, "/v1/clients", ws.Key); c != 1 {
		t.Fatalf("%d clients, want 1", c)
	}
}

// Every POST takes a key, whichever resource it writes.
func TestIdempotencyKeyOnEveryKindOfPost(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	cli := newClient(t, env, ws.Key)
	posts := []struct{ path, body string }{
		{"/v1/vendors", `{"name": "Paper"}`},
		{"/v1/items", `{"name": "Bolt"}`},
		{"/v1/items/upsert", `{"name": "Nut", "number": "NUT"}`},
		{"/v1/products", `{"name": "Mug"}`},
		{"/v1/categories", `{"name": "Cups"}`},
		{"/v1/clients/" + cli + "/addresses", `{"name": "HQ"}`},
	}
	for _, p := range posts {
		first := env.Do(t, "POST", p.path, ws.Key, p.body, "Idempotency-Key", "once:"+p.path).WantStatus(t, http.StatusCreated)
		again := env.Do(t, "POST", p.path, ws.Key, p.body, "Idempotency-Key", "once:"+p.path).WantStatus(t, http.StatusCreated)
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Fatalf("POST %s was not replayed: %s", p.path, again.Body)
		}
	}
	for path, want := range map[string]int{"/v1/vendors": 1, "/v1/items": 3, "/v1/categories": 1, "/v1/clients/" + cli + "/addresses": 1} {
		if n := total(t, env, path, ws.Key); n != want {
			t.Fatalf("%s has %d records, want %d", path, n, want)
		}
	}
}
