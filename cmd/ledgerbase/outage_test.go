package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	db := migrated(t, "sqlite:"+filepath.Join(t.TempDir(), "full.db"), 4)
	r, logs := startWatched(t, db)
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
	if err := db.WritePool.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WritePool.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
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
	// Writers queued together share the writer's transaction: each of them
	// hears of the full disk too, none of them a 500.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 20 * time.Second}
			defer hc.CloseIdleConnections()
			for n := range 5 {
				i := 1000 + 10*w + n
				k := &keyed{key: fmt.Sprintf("full-%d", i), path: "/v1/clients", body: fmt.Sprintf(`{"name":"full-%d","notes":%q}`, i, notes)}
				status, body, _, err := post(hc, r.url, key, k)
				mu.Lock()
				if err != nil || status != http.StatusInsufficientStorage || !strings.Contains(string(body), `"storage_full"`) {
					t.Errorf("concurrent write on a full disk: %d %s %v", status, body, err)
				}
				refused = append(refused, i)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	// Nothing of a refused write was stored; reads answer as before.
	for _, i := range refused {
		if n := db.Writer.Customer.Query().Where(customer.WorkspaceID(ws.ID), customer.Name(fmt.Sprintf("full-%d", i))).CountX(ctx); n != 0 {
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
	if _, err := db.WritePool.ExecContext(ctx, "PRAGMA max_page_count = 4294967294"); err != nil {
		t.Fatal(err)
	}
	for _, i := range refused {
		create(i).WantStatus(t, http.StatusCreated)
		create(i).WantStatus(t, http.StatusCreated) // replayed
		if n := db.Writer.Customer.Query().Where(customer.WorkspaceID(ws.ID), customer.Name(fmt.Sprintf("full-%d", i))).CountX(ctx); n != 1 {
			t.Errorf("full-%d stored %d times after recovery", i, n)
		}
	}
	m = scrape(t, r.url+"/metrics")
	m.want(t, "ledgerbase_database_storage_full", nil, 0)
	var check string
	if err := db.WritePool.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
}

// cluster is a PostgreSQL server of the test's own, in a temporary
// directory on a free loopback port, that the test may stop and start
// (the suite's shared server must stay up for the other packages).
type cluster struct {
	t        *testing.T
	bin, dir string
	port     string
}

// startCluster initializes and starts a cluster. Outside CI a machine
// without PostgreSQL's server binaries skips the test; under CI it fails.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		bins = append(bins, p)
	}
	if len(bins) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("PostgreSQL's server binaries (initdb, pg_ctl) are missing; CI needs them for the outage test")
		}
		t.Skip("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
	}
	slices.Sort(bins)
	dir, err := os.MkdirTemp("", "ledgerbase-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bin: filepath.Dir(bins[len(bins)-1]), dir: dir}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster belongs to postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user for initdb: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.run("pg_ctl", "stop", "-D", c.data(), "-m", "immediate", "-w")
		os.RemoveAll(dir)
	})
	addr, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	_, c.port, _ = net.SplitHostPort(addr)
	if err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions"); err != nil {
		t.Fatal(err)
	}
	c.start()
	return c
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *cluster) url() string {
	return "postgres://postgres@127.0.0.1:" + c.port + "/postgres?sslmode=disable"
}

// run runs one of the cluster's programs, as postgres when the test is root.
func (c *cluster) run(name string, args ...string) error {
	prog := filepath.Join(c.bin, name)
	cmd := exec.Command(prog, args...)
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", prog}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func (c *cluster) start() {
	c.t.Helper()
	opts := "-p " + c.port + " -k " + c.dir + " -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
	if err := c.run("pg_ctl", "start", "-D", c.data(), "-w", "-t", "30", "-l", filepath.Join(c.dir, "log"), "-o", opts); err != nil {
		c.t.Fatal(err)
	}
}

// stop stops the server in a pg_ctl mode: fast (a clean shutdown that
// ends every session) or immediate (a crash, recovered at the next start).
func (c *cluster) stop(mode string) {
	c.t.Helper()
	if err := c.run("pg_ctl", "stop", "-D", c.data(), "-m", mode, "-w"); err != nil {
		c.t.Fatal(err)
	}
}

// A PostgreSQL outage is 503 database_unavailable with Retry-After, never a
// 500, whether a request finds the database down or loses its connection
// mid-flight: 4 writers create clients under Idempotency-Keys, retrying
// each 503 under its key, while the database is stopped (fast, then
// immediate) and started again. /readyz says the database is down while
// it is, the admin UI shows a banner, and afterwards every key's client is
// stored exactly once.
func TestDatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	pg := startCluster(t)
	ctx := context.Background()
	db := migrated(t, pg.url(), 8)
	r, logs := startWatched(t, db)
	env := r.env
	ws := env.Workspace(t, "business", true, true)
	key := ws.NewKey(t, access.KeySpec{})
	ui := webtest.SignedIn(t, env)

	var (
		mu         sync.Mutex
		acked      []string
		refused    int // 503 database_unavailable
		unexpected []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 20 * time.Second}
			defer hc.CloseIdleConnections()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k := &keyed{key: fmt.Sprintf("outage-%d-%d", w, n), path: "/v1/clients"}
				k.body = fmt.Sprintf(`{"name":%q}`, k.key)
				// The same key until it is written: a 503 may hide a commit.
				for attempt := 0; ; attempt++ {
					status, body, h, err := post(hc, r.url, key, k)
					mu.Lock()
					switch {
					case err != nil:
						unexpected = append(unexpected, fmt.Sprintf("%s: %v", k.key, err))
					case status == http.StatusCreated:
						acked = append(acked, k.key)
					case status == http.StatusServiceUnavailable && strings.Contains(string(body), `"database_unavailable"`) && h.Get("Retry-After") != "":
						refused++
					default:
						unexpected = append(unexpected, fmt.Sprintf("%s: %d %s", k.key, status, body))
					}
					mu.Unlock()
					if status == http.StatusCreated || attempt > 400 {
						break
					}
					time.Sleep(25 * time.Millisecond)
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	// waitWrites waits until the writers have written n more clients.
	waitWrites := func(n int) {
		t.Helper()
		from := count()
		deadline := time.Now().Add(15 * time.Second)
		for count() < from+n {
			if time.Now().After(deadline) {
				t.Fatalf("the writers wrote %d clients in 15 s, want %d", count()-from, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	readyz := func() int {
		res, err := env.Client.Get(r.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	waitWrites(20)
	for _, mode := range []string{"fast", "immediate"} {
		pg.stop(mode)
		// Answers other than a 201: the writers see the outage.
		failed := func() int { mu.Lock(); defer mu.Unlock(); return refused + len(unexpected) }
		before := failed()
		deadline := time.Now().Add(10 * time.Second)
		for failed() < before+8 {
			if time.Now().After(deadline) {
				t.Fatalf("stop -m %s: the writers saw no outage within 10 s", mode)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if s := readyz(); s < 300 {
			t.Errorf("stop -m %s: /readyz answered %d while the database is down", mode, s)
		}
		scrape(t, r.url+"/metrics").want(t, "ledgerbase_database_up", nil, 0)
		page := ui.Get("/admin/")
		if page.Status != http.StatusServiceUnavailable || !strings.Contains(page.Body, `role="alert"`) ||
			!strings.Contains(page.Body, "database cannot be reached") || page.Header.Get("Retry-After") == "" {
			t.Errorf("stop -m %s: admin UI answered %d:\n%s", mode, page.Status, page.Body)
		}
		pg.start()
		waitWrites(20)
		if s := readyz(); s != http.StatusOK {
			t.Errorf("start after stop -m %s: /readyz answered %d", mode, s)
		}
	}
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, u := range unexpected {
		t.Errorf("not a 201 or a 503 database_unavailable: %s", u)
	}
	if refused == 0 {
		t.Error("no request was refused while the database was down")
	}
	names := db.Writer.Customer.Query().Where(customer.WorkspaceID(ws.ID)).Select(customer.FieldName).StringsX(ctx)
	stored := map[string]int{}
	for _, n := range names {
		stored[n]++
	}
	for _, k := range acked {
		if stored[k] != 1 {
			t.Errorf("acknowledged %s is stored %d times", k, stored[k])
		}
	}
	if len(names) != len(acked) {
		t.Errorf("%d clients stored for %d acknowledged keys", len(names), len(acked))
	}
	m := scrape(t, r.url+"/metrics")
	m.want(t, "ledgerbase_database_up", nil, 1)
	if v, _ := m.value("ledgerbase_database_faults_total", map[string]string{"kind": "database_unavailable"}); v < float64(refused) {
		t.Errorf("ledgerbase_database_faults_total{kind=database_unavailable} = %v, want at least the %d refusals", v, refused)
	}
	if n := faultLogs(logs.String(), "ERROR", "database is unavailable"); n < 1 || n > 2 {
		t.Errorf("%d ERROR lines say the database is unavailable over 2 outages and %d refusals, want 1 or 2", n, refused)
	}
	if n := faultLogs(logs.String(), "ERROR", "request failed"); n != 0 {
		t.Errorf("%d requests logged as failed (500s):\n%s", n, logs.String())
	}
	t.Logf("%d clients written by 4 writers over 2 outages, %d answers 503 database_unavailable", len(acked), refused)
}

// The same on a disk that really fills: the database on a small tmpfs,
// where the WAL's growth meets ENOSPC under 4 writers. Only 201 or 507,
// and once the filesystem grows, every refused key writes once on an
// intact file. Mounting needs privileges a container may lack: then the
// test skips, and the page limit above still holds the behaviour.
func TestFullFilesystemAnswers507StorageFull(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "ledgerbase-full-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		os.Remove(dir)
		t.Skipf("cannot mount a small filesystem here: %v %s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("umount", "-l", dir).Run()
		os.Remove(dir)
	})
	ctx := context.Background()
	db := migrated(t, "sqlite:"+filepath.Join(dir, "full.db"), 4)
	r := start(t, testConfig(), quiet, db)
	ws := r.env.Workspace(t, "business", true, true)
	key := ws.NewKey(t, access.KeySpec{RateLimit: new(int)})
	notes := strings.Repeat("n", 4000)
	var (
		mu              sync.Mutex
		stored, refused []*keyed
		wg              sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 20 * time.Second}
			defer hc.CloseIdleConnections()
			mine := 0
			for n := 0; mine < 5; n++ {
				if n > 1000 {
					t.Errorf("writer %d: 1000 writes of 4 KB fit on 8 MB", w)
					return
				}
				k := &keyed{key: fmt.Sprintf("fs-%d-%d", w, n), path: "/v1/clients"}
				k.body = fmt.Sprintf(`{"name":%q,"notes":%q}`, k.key, notes)
				status, body, _, err := post(hc, r.url, key, k)
				mu.Lock()
				switch {
				case err == nil && status == http.StatusCreated:
					stored = append(stored, k)
				case err == nil && status == http.StatusInsufficientStorage && strings.Contains(string(body), `"storage_full"`):
					refused = append(refused, k)
					mine++
				default:
					t.Errorf("write on a filling disk: %d %s %v", status, body, err)
					mine = 5
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d writes stored, %d refused", len(stored), len(refused))
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dir).CombinedOutput(); err != nil {
		t.Fatalf("grow the filesystem: %v %s", err, out)
	}
	retryAll(t, r.url, key, refused)
	names := db.Writer.Customer.Query().Where(customer.WorkspaceID(ws.ID)).Select(customer.FieldName).StringsX(ctx)
	count := map[string]int{}
	for _, n := range names {
		count[n]++
	}
	for _, k := range append(stored, refused...) {
		if count[k.key] != 1 {
			t.Errorf("%s stored %d times", k.key, count[k.key])
		}
	}
	if len(names) != len(stored)+len(refused) {
		t.Errorf("%d clients for %d keys", len(names), len(stored)+len(refused))
	}
	var check string
	if err := db.WritePool.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
}

// migrated opens and migrates a database of the test's own at url.
func migrated(t *testing.T, url string, conns int) *database.DB {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, url, database.Options{MaxOpenConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	return db
}

// startWatched serves db with metrics on and every log line, down to
// DEBUG, kept for the test to read.
func startWatched(t *testing.T, db *database.DB) (*running, *syncBuffer) {
	t.Helper()
	logs := new(syncBuffer)
	cfg := testConfig()
	cfg.Metrics.Enabled, cfg.Metrics.Addr = true, ""
	return start(t, cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), db), logs
}
