package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/customer"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// faultLogs counts the lines of a JSON log at level whose message holds msg.
func faultLogs(logs string, level, msg string) int {
	n := 0
	for line := range strings.SplitSeq(logs, "\n") {
		var l struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Level == level && strings.Contains(l.Msg, msg) {
			n++
		}
	}
	return n
}

// A full disk is the client's 507 storage_full, not a 500: SQLite's own
// page limit (PRAGMA max_page_count on the writer's one connection) fills
// the database of a real server. Refused writes leave nothing behind,
// reads keep answering, the operator hears of it once at ERROR and sees
// it in the metrics, the admin UI says so in a banner, and once the limit
// is raised the same Idempotency-Keys write, once each, on an intact file.
func TestFullDiskAnswers507StorageFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "full.db"), database.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	cfg := testConfig()
	cfg.Metrics.Enabled, cfg.Metrics.Addr = true, ""
	r := start(t, cfg, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), db)
	env := r.env
	ws := env.Workspace(t, "business", true, true)
	key := ws.NewKey(t, access.KeySpec{})
	ui := webtest.SignedIn(t, env)
	notes := strings.Repeat("n", 4000)
	create := func(i int) *apitest.Response {
		return env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": fmt.Sprintf("full-%d", i), "notes": notes},
			"Idempotency-Key", fmt.Sprintf("full-%d", i))
	}
	first := create(0).WantStatus(t, http.StatusCreated).JSON(t)

	var pages int64
	if err := db.Write.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	// Free pages inside the file take a few writes; then the file must grow.
	var refused []int
	stored := 1
	for i := 1; len(refused) < 5; i++ {
		if i > 500 {
			t.Fatalf("500 writes of 4 KB and none refused (%d pages allowed)", pages)
		}
		res := create(i)
		if res.Status == http.StatusCreated {
			if len(refused) > 0 {
				t.Fatalf("a write was stored after the disk was full: %s", res.Body)
			}
			stored++
			continue
		}
		e := res.WantError(t, http.StatusInsufficientStorage, "storage_full")
		if msg, _ := e["message"].(string); !strings.Contains(msg, "storage is full") {
			t.Errorf("message %q does not say the storage is full", msg)
		}
		refused = append(refused, i)
	}
	t.Logf("%d writes stored, then %d refused", stored, len(refused))

	// Nothing of a refused write was stored; reads answer as before.
	for _, i := range refused {
		if n := db.Ent.Customer.Query().Where(customer.WorkspaceID(ws.ID), customer.Name(fmt.Sprintf("full-%d", i))).CountX(ctx); n != 0 {
			t.Errorf("refused write full-%d left %d clients", i, n)
		}
	}
	list := env.Get(t, "/v1/clients?limit=1", key).WantStatus(t, http.StatusOK).JSON(t)
	if total := list["meta"].(map[string]any)["total"].(float64); int(total) != stored {
		t.Errorf("meta.total = %v, want the %d stored", total, stored)
	}
	env.Get(t, "/v1/clients/"+first["id"].(string), key).WantStatus(t, http.StatusOK)
	if res, err := env.Client.Get(env.URL + "/readyz"); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("readyz while only writes are refused: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// Once per episode at ERROR, not once per refused request.
	if n := faultLogs(logs.String(), "ERROR", "storage is full"); n != 1 {
		t.Errorf("%d ERROR lines say the storage is full over %d refused writes, want 1:\n%s", n, len(refused), logs.String())
	}
	if n := faultLogs(logs.String(), "ERROR", "request failed"); n != 0 {
		t.Errorf("%d refused writes logged as failed requests:\n%s", n, logs.String())
	}
	m := scrape(t, r.url+"/metrics")
	m.want(t, "ledgerbase_database_storage_full", nil, 1)
	m.want(t, "ledgerbase_database_faults_total", map[string]string{"kind": "storage_full"}, float64(len(refused)))
	m.want(t, "ledgerbase_database_up", nil, 1)

	// The admin UI: a banner that says so, with the same status.
	clients := "/admin/w/" + ws.ID + "/records/clients"
	page := ui.PostWithToken(clients+"/new", clients, url.Values{"name": {"full-ui"}, "notes": {notes}})
	if page.Status != http.StatusInsufficientStorage || !strings.Contains(page.Body, `role="alert"`) ||
		!strings.Contains(page.Body, "storage is full") || strings.Contains(page.Body, "Something went wrong") {
		t.Errorf("admin UI create on a full disk: %d\n%s", page.Status, page.Body)
	}
	if p := ui.Get(clients); p.Status != http.StatusOK {
		t.Errorf("admin UI list on a full disk: %d", p.Status)
	}

	// Space returns: the same keys write, once each.
	if _, err := db.Write.ExecContext(ctx, "PRAGMA max_page_count = 4294967294"); err != nil {
		t.Fatal(err)
	}
	for _, i := range refused {
		create(i).WantStatus(t, http.StatusCreated)
		create(i).WantStatus(t, http.StatusCreated) // replayed
		if n := db.Ent.Customer.Query().Where(customer.WorkspaceID(ws.ID), customer.Name(fmt.Sprintf("full-%d", i))).CountX(ctx); n != 1 {
			t.Errorf("full-%d stored %d times after recovery", i, n)
		}
	}
	m = scrape(t, r.url+"/metrics")
	m.want(t, "ledgerbase_database_storage_full", nil, 0)
	var check string
	if err := db.Write.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
}
