package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// secretRE matches a key secret, and hashRE a stored SHA-256 of one: no
// list may print either.
var (
	secretRE = regexp.MustCompile(`lb_[0-9A-Za-z]{40}`)
	hashRE   = regexp.MustCompile(`[0-9a-f]{64}`)
)

func noSecrets(t *testing.T, what, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) || strings.Contains(out, s[len("lb_"):]) {
			t.Fatalf("%s prints a key's secret:\n%s", what, out)
		}
	}
	if m := secretRE.FindString(out); m != "" {
		t.Fatalf("%s prints something shaped like a secret, %s:\n%s", what, m, out)
	}
	if m := hashRE.FindString(out); m != "" {
		t.Fatalf("%s prints something shaped like a secret's hash, %s:\n%s", what, m, out)
	}
}

// workspace list, key list and role list show what was created, as a table and as JSON, and never a secret.
func TestListCommandsShowWhatWasCreatedAndNoSecret(t *testing.T) {
	t.Parallel()
	dbURL := crashDB(t)
	// What the lists must show is made through the functions the create
	// commands call (each command is a process that migrates the database,
	// seconds on PostgreSQL; only the lists are under test here).
	db, err := openMigrated(t.Context(), dbURL, database.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	mkWS := func(name, plan string, mode, module bool) string {
		w, err := access.NewWorkspace(ctx, db.Writer, name, plan, mode, module)
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	ws := mkWS("Lists Ltd", "growth", true, false)
	other := mkWS("Other Lists", "business", true, true)
	r, err := access.NewRole(ctx, db.Writer, ws, "support", map[string]string{"invoices": "read", "clients": "write"})
	if err != nil {
		t.Fatal(err)
	}
	roleID := r.ID
	if _, err := access.NewRole(ctx, db.Writer, other, "warehouse", map[string]string{"shipments": "write"}); err != nil {
		t.Fatal(err)
	}
	mkKey := func(s access.KeySpec) (string, string) {
		secret, k, err := access.NewKey(ctx, db.Writer, s)
		if err != nil {
			t.Fatal(err)
		}
		return secret, k.ID
	}
	unlimited := 0
	used, usedID := mkKey(access.KeySpec{WorkspaceID: ws, Name: "used key", RateLimit: &unlimited})
	expiring, _ := mkKey(access.KeySpec{WorkspaceID: ws, Name: "ci", Role: "support", ExpiresIn: 720 * time.Hour})
	revoked, revokedID := mkKey(access.KeySpec{WorkspaceID: ws, Name: "old", Role: access.RoleViewer})
	elsewhere, _ := mkKey(access.KeySpec{WorkspaceID: other, Name: "elsewhere"})
	secrets := []string{used, expiring, revoked, elsewhere}
	if err := access.RevokeKey(ctx, db.Writer, revokedID); err != nil {
		t.Fatal(err)
	}
	// A key that was used.
	s := startServer(t, dbURL)
	if res := getMe(t, s.url, used); res != http.StatusOK {
		t.Fatalf("GET /v1/me with the used key: %d", res)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		k, err := db.Writer.APIKey.Get(ctx, usedID)
		if err != nil {
			t.Fatal(err)
		}
		if k.LastUsedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not record the key's use within 10 s")
		}
	}
	s.stop(t)

	// workspace list
	table := mustCLI(t, dbURL, "workspace", "list")
	noSecrets(t, "workspace list", table, secrets...)
	if !strings.HasPrefix(table, "ID") || !regexp.MustCompile(regexp.QuoteMeta(ws)+`\s+Lists Ltd\s+growth\s+on\s+off\s`).MatchString(table) ||
		!regexp.MustCompile(regexp.QuoteMeta(other)+`\s+Other Lists\s+business\s+on\s+on\s`).MatchString(table) {
		t.Fatalf("workspace list:\n%s", table)
	}
	var wss []map[string]any
	if err := json.Unmarshal([]byte(mustCLI(t, dbURL, "workspace", "list", "--json")), &wss); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, w := range wss {
		switch w["id"] {
		case ws:
			found++
			want := map[string]any{"name": "Lists Ltd", "plan": "growth", "commerce_mode": true, "commerce_module": false}
			for k, v := range want {
				if w[k] != v {
					t.Errorf("workspace list --json: %s %s = %v, want %v", ws, k, w[k], v)
				}
			}
			if _, err := time.Parse(time.RFC3339, w["created_at"].(string)); err != nil {
				t.Errorf("workspace list --json: created_at: %v", err)
			}
		case other:
			found++
		}
	}
	if found != 2 {
		t.Fatalf("workspace list --json lacks %s or %s: %v", ws, other, wss)
	}

	// key list
	keys, out := keyList(t, dbURL, ws)
	noSecrets(t, "key list --json", out, secrets...)
	if len(keys) != 3 {
		t.Fatalf("key list --json shows %d keys, want the workspace's 3: %v", len(keys), keys)
	}
	if _, ok := keys["elsewhere"]; ok {
		t.Fatal("key list shows another workspace's key")
	}
	for name, want := range map[string]struct {
		role, status, secret string
		expires, revoked     bool
		lastUsed             bool
	}{
		"used key": {role: "admin", status: "active", secret: used, lastUsed: true},
		"ci":       {role: "support", status: "active", secret: expiring, expires: true},
		"old":      {role: "viewer", status: "revoked", secret: revoked, revoked: true},
	} {
		k, ok := keys[name]
		if !ok {
			t.Fatalf("key list --json lacks %q: %v", name, keys)
		}
		if k.Role != want.role || k.Status != want.status || k.Prefix != want.secret[:9] ||
			(k.ExpiresAt != nil) != want.expires || (k.RevokedAt != nil) != want.revoked || (k.LastUsedAt != nil) != want.lastUsed {
			t.Errorf("key list --json: %q is %+v, want %+v", name, k, want)
		}
		if k.ExpiresAt != nil && (k.ExpiresAt.Before(time.Now().Add(719*time.Hour)) || k.ExpiresAt.After(time.Now().Add(721*time.Hour))) {
			t.Errorf("key list --json: %q expires at %s, not in 720h", name, k.ExpiresAt)
		}
	}
	table = mustCLI(t, dbURL, "key", "list", "--workspace", ws)
	noSecrets(t, "key list", table, secrets...)
	for _, want := range []string{
		keys["used key"].ID + `\s+used key\s+admin\s+` + used[:9] + `…\s+active\s+\S+Z\s+never\s+-\s+\S+Z`,
		keys["ci"].ID + `\s+ci\s+support\s+` + expiring[:9] + `…\s+active\s+\S+Z\s+\S+Z\s+-\s+never`,
		keys["old"].ID + `\s+old\s+viewer\s+` + revoked[:9] + `…\s+revoked\s+\S+Z\s+never\s+\S+Z\s+never`,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("key list has no line like %s:\n%s", want, table)
		}
	}
	if _, err := cliRun(t, dbURL, "key", "list", "--workspace", "ws_nosuchworkspace"); err == nil ||
		!strings.Contains(err.Error(), "no workspace ws_nosuchworkspace") {
		t.Fatalf("key list of an unknown workspace: %v", err)
	}

	// role list
	table = mustCLI(t, dbURL, "role", "list", "--workspace", ws)
	for _, want := range []string{`(?m)^admin\s+built-in\s+write on every resource$`, `(?m)^viewer\s+built-in\s+read on every resource$`,
		`(?m)^support\s+` + roleID + `\s+clients:write,invoices:read$`} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("role list has no line like %s:\n%s", want, table)
		}
	}
	var roles []struct {
		ID      *string           `json:"id"`
		Name    string            `json:"name"`
		BuiltIn bool              `json:"built_in"`
		Grants  map[string]string `json:"grants"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, dbURL, "role", "list", "--workspace", ws, "--json")), &roles); err != nil {
		t.Fatal(err)
	}
	if len(roles) != 3 || roles[0].Name != "admin" || !roles[0].BuiltIn || roles[0].Grants["invoices"] != "write" ||
		roles[1].Name != "viewer" || roles[1].Grants["clients"] != "read" || roles[1].ID != nil ||
		roles[2].Name != "support" || roles[2].BuiltIn || roles[2].ID == nil || *roles[2].ID != roleID ||
		len(roles[2].Grants) != 2 || roles[2].Grants["clients"] != "write" || roles[2].Grants["invoices"] != "read" {
		t.Fatalf("role list --json: %+v", roles)
	}
}

type listedKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	Prefix     string     `json:"prefix"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// keyList is `key list --json` of workspace ws, by key name, and as printed.
func keyList(t *testing.T, dbURL, ws string) (map[string]listedKey, string) {
	t.Helper()
	out := mustCLI(t, dbURL, "key", "list", "--workspace", ws, "--json")
	var keys []listedKey
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	byName := map[string]listedKey{}
	for _, k := range keys {
		byName[k.Name] = k
	}
	return byName, out
}

// getMe is the status of GET /v1/me with key.
func getMe(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Restarting `serve --demo` does not pile up admin keys: each start
// prints a key that works, the keys printed before stop working, and
// after three starts exactly one demo key is valid, the last printed.
func TestServeDemoRestartsLeaveOneValidDemoKey(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	var printed []string
	for i := 0; i < 3; i++ {
		s := startServer(t, dbURL, "--demo")
		var key string
		for deadline := time.Now().Add(10 * time.Second); key == "" && time.Now().Before(deadline); {
			key = secretRE.FindString(s.stdout.String())
			time.Sleep(10 * time.Millisecond)
		}
		if key == "" {
			t.Fatalf("start %d: serve --demo printed no key:\n%s", i+1, s.stdout)
		}
		if got := getMe(t, s.url, key); got != http.StatusOK {
			t.Fatalf("start %d: the printed key gets %d", i+1, got)
		}
		for j, old := range printed {
			if got := getMe(t, s.url, old); got != http.StatusUnauthorized {
				t.Fatalf("start %d: the key printed by start %d gets %d, want 401", i+1, j+1, got)
			}
		}
		printed = append(printed, key)
		s.stop(t)
	}
	var wss []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, dbURL, "workspace", "list", "--json")), &wss); err != nil {
		t.Fatal(err)
	}
	if len(wss) != 1 {
		t.Fatalf("three starts of serve --demo made %d workspaces", len(wss))
	}
	var keys []listedKey
	out := mustCLI(t, dbURL, "key", "list", "--workspace", wss[0].ID, "--json")
	noSecrets(t, "key list", out, printed...)
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	var active []listedKey
	for _, k := range keys {
		if k.Status == "active" {
			active = append(active, k)
		}
	}
	if len(keys) != 3 || len(active) != 1 || active[0].Prefix != printed[2][:9] || active[0].Role != "admin" {
		t.Fatalf("after three starts of serve --demo, want three demo keys of which one, the last printed (%s…), is active; key list --json:\n%s", printed[2][:9], out)
	}
}
