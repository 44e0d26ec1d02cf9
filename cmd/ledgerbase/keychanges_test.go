package main

import (
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// runCLIProcess runs `ledgerbase args...` in another process and returns
// its output once it has exited.
func runCLIProcess(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ledgerbase %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// seenWithin polls the server until check passes, and fails the test when
// it has not within d: how long another process's change took to be seen.
func seenWithin(t *testing.T, d time.Duration, what string, check func() bool) {
	t.Helper()
	from := time.Now()
	for !check() {
		if time.Since(from) > d {
			t.Fatalf("%s: not seen %v after the change", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s: seen after %v", what, time.Since(from).Round(time.Millisecond))
}

// keyChangeServer serves with the default key cache lifetime (5 s), which
// is what let a revocation by another process go unseen for seconds.
func keyChangeServer(t *testing.T) *running {
	t.Helper()
	db, _ := apitest.DB(t)
	cfg := testConfig()
	cfg.KeyCacheTTL = defaultConfig().KeyCacheTTL
	if cfg.KeyCacheTTL < 5*time.Second {
		t.Fatalf("the default key cache lifetime is %v: this test needs one longer than a second to mean anything", cfg.KeyCacheTTL)
	}
	return start(t, cfg, quiet, db)
}

// cached makes sure the server answers path for each key from its key
// cache (a request that loads no key), so a change is seen through the
// cache and not by a lookup the previous change had already forced.
func cached(t *testing.T, r *running, path string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		from := time.Now()
		for {
			r.env.Get(t, path, k)
			before := r.a.api.Auth.Loads()
			r.env.Get(t, path, k)
			if r.a.api.Auth.Loads() == before {
				break
			}
			if time.Since(from) > 5*time.Second {
				t.Fatal("the key is looked up on every request: nothing is cached")
			}
		}
	}
}

func keyID(t *testing.T, r *running, secret string) string {
	t.Helper()
	k, err := r.env.DB.Writer.APIKey.Query().Where(apikey.SecretHash(access.HashSecret(secret))).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func TestARevocationByTheCLIInAnotherProcessIsSeenWithinASecond(t *testing.T) {
	r := keyChangeServer(t)
	_, dbURL := apitest.DB(t)
	ws := r.env.Workspace(t, "starter", false, false)
	secret := ws.NewKey(t, access.KeySpec{Name: "to revoke"})
	r.env.Get(t, "/v1/me", secret).WantStatus(t, 200)
	cached(t, r, "/v1/me", secret)
	runCLIProcess(t, "key", "revoke", keyID(t, r, secret), "--database-url", dbURL)
	seenWithin(t, time.Second, "revocation", func() bool { return r.env.Get(t, "/v1/me", secret).Status == 401 })
	r.env.Get(t, "/v1/me", secret).WantError(t, 401, "revoked_api_key")
	r.env.Get(t, "/v1/me", ws.Key).WantStatus(t, 200)
}

func TestKeyRoleAndPlanChangesByAnotherProcessAreSeenWithinASecond(t *testing.T) {
	r := keyChangeServer(t)
	other := ownDB(t) // another process's pools, on the same database
	ctx := t.Context()
	ws := r.env.Workspace(t, "starter", false, false)
	ws.Role(t, "clerk", "invoices:read")
	clerk := ws.NewKey(t, access.KeySpec{Name: "clerk", Role: "clerk"})
	expiring := ws.NewKey(t, access.KeySpec{Name: "expiring"})
	for _, k := range []string{ws.Key, clerk, expiring} {
		r.env.Get(t, "/v1/invoices", k).WantStatus(t, 200)
	}
	r.env.Get(t, "/v1/clients", ws.Key).WantError(t, 403, "plan_required")

	cached(t, r, "/v1/clients", ws.Key)
	if err := other.Writer.Workspace.UpdateOneID(ws.ID).SetPlan(workspace.PlanGrowth).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "plan change", func() bool { return r.env.Get(t, "/v1/clients", ws.Key).Status == 200 })

	cached(t, r, "/v1/invoices", clerk)
	if _, err := other.Writer.Role.Update().Where(role.WorkspaceID(ws.ID), role.Name("clerk")).
		SetGrants(map[string]string{"invoices": "none"}).Save(ctx); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "role grants change", func() bool { return r.env.Get(t, "/v1/invoices", clerk).Status == 403 })
	r.env.Get(t, "/v1/invoices", clerk).WantError(t, 403, "permission_denied")

	id := keyID(t, r, clerk)
	cached(t, r, "/v1/invoices", clerk)
	if err := other.Writer.APIKey.UpdateOneID(id).SetRole(access.RoleViewer).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "key role change", func() bool { return r.env.Get(t, "/v1/invoices", clerk).Status == 200 })

	// An expiry set in the past, as an operator would to cut a key off.
	id = keyID(t, r, expiring)
	cached(t, r, "/v1/invoices", expiring)
	if err := other.Writer.APIKey.UpdateOneID(id).SetExpiresAt(time.Now().Add(-time.Hour).UTC().Truncate(time.Second)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "expiry change", func() bool { return r.env.Get(t, "/v1/invoices", expiring).Status == 401 })
	r.env.Get(t, "/v1/invoices", expiring).WantError(t, 401, "expired_api_key")
}

func TestChangesInTheAdminUIOfAnotherServerAreSeenWithinASecond(t *testing.T) {
	r := keyChangeServer(t)
	cfg := testConfig()
	cfg.KeyCacheTTL = defaultConfig().KeyCacheTTL
	second := start(t, cfg, quiet, ownDB(t)) // another `serve` on the same database
	admin := webtest.SignedIn(t, second.env)
	ws := r.env.Workspace(t, "starter", false, false)
	ws.Role(t, "clerk", "invoices:read")
	clerk := ws.NewKey(t, access.KeySpec{Name: "clerk", Role: "clerk"})
	doomed := ws.NewKey(t, access.KeySpec{Name: "doomed"})
	for _, k := range []string{ws.Key, clerk, doomed} {
		r.env.Get(t, "/v1/invoices", k).WantStatus(t, 200)
	}

	settings := "/admin/w/" + ws.ID + "/settings"
	cached(t, r, "/v1/clients", ws.Key)
	if p := admin.PostWithToken(settings, settings, url.Values{"name": {"Moved"}, "plan": {"growth"}}); p.Status != 303 {
		t.Fatalf("save settings: %d\n%s", p.Status, p.Body)
	}
	seenWithin(t, time.Second, "plan change in the admin UI", func() bool { return r.env.Get(t, "/v1/clients", ws.Key).Status == 200 })

	rl, err := r.env.DB.Writer.Role.Query().Where(role.WorkspaceID(ws.ID), role.Name("clerk")).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rolePage := "/admin/w/" + ws.ID + "/roles/" + rl.ID
	cached(t, r, "/v1/invoices", clerk)
	if p := admin.PostWithToken(rolePage, rolePage, url.Values{"grant.invoices": {"none"}}); p.Status != 303 {
		t.Fatalf("save role: %d\n%s", p.Status, p.Body)
	}
	seenWithin(t, time.Second, "grant change in the admin UI", func() bool { return r.env.Get(t, "/v1/invoices", clerk).Status == 403 })

	revoke := "/admin/w/" + ws.ID + "/keys/" + keyID(t, r, doomed) + "/revoke"
	cached(t, r, "/v1/invoices", doomed)
	if p := admin.PostWithToken(revoke, revoke, nil); p.Status != 303 {
		t.Fatalf("revoke: %d\n%s", p.Status, p.Body)
	}
	seenWithin(t, time.Second, "revocation in the admin UI", func() bool { return r.env.Get(t, "/v1/invoices", doomed).Status == 401 })
	r.env.Get(t, "/v1/invoices", doomed).WantError(t, 401, "revoked_api_key")
}

// Changes are seen while and after every connection the watcher reads
// through is cut under it: the read pool's connections, terminated by the
// server (a PostgreSQL restart or failover, an operator's
// pg_terminate_backend). Keys are read afresh until the watcher reads again.
func TestChangesAreSeenWhileAndAfterTheReadPoolsConnectionsAreCut(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("pg_terminate_backend is PostgreSQL's")
	}
	cfg := testConfig()
	cfg.KeyCacheTTL = defaultConfig().KeyCacheTTL
	own := ownDB(t) // a pool of the server's own, so only its connections are cut
	r := start(t, cfg, quiet, own)
	other := ownDB(t)
	ws := r.env.Workspace(t, "starter", false, false)
	first := ws.NewKey(t, access.KeySpec{Name: "first"})
	second := ws.NewKey(t, access.KeySpec{Name: "second"})
	firstID, secondID := keyID(t, r, first), keyID(t, r, second)
	cached(t, r, "/v1/me", first, second)
	if n := cutPool(t, own.ReadPool, other); n == 0 {
		t.Fatal("the server's read pool held no connection to cut")
	}
	if err := access.RevokeKey(t.Context(), other.Writer, firstID); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "revocation after the connections were cut", func() bool { return r.env.Get(t, "/v1/me", first).Status == 401 })
	seenWithin(t, 5*time.Second, "the watcher current again", func() bool { _, ok := shortcut.Of(r.env.DB).AccessGen(); return ok })
	cached(t, r, "/v1/me", second) // the cache is trusted again
	if err := access.RevokeKey(t.Context(), other.Writer, secondID); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, time.Second, "revocation once the watcher reads again", func() bool { return r.env.Get(t, "/v1/me", second).Status == 401 })
}

// cutPool has the server terminate the backend of every connection pool
// holds, and gives them back to the pool dead; it returns how many.
func cutPool(t *testing.T, pool *sql.DB, killer *database.DB) int {
	t.Helper()
	ctx := t.Context()
	// Holding as many connections as are open means holding all of them,
	// the watcher's included (Conn waits for it when the pool is full).
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var pids []int64
	for len(conns) < pool.Stats().OpenConnections {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var pid int64
		if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		var done bool
		if err := killer.WritePool.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&done); err != nil || !done {
			t.Fatalf("terminate backend %d: %v, %v", pid, done, err)
		}
	}
	return len(pids)
}
