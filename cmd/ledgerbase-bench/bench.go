package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// benchCmd measures the real server against a bare fiber handler in the
// same run, so figures from a busy or a different machine still compare.
func benchCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "ledgerbase-bench",
		Short: "Seed a workspace, serve it, and measure /v1 against a bare fiber baseline",
		Long: `ledgerbase-bench seeds a workspace at --scale (reused when an earlier run seeded it
with the same counts and seed), starts 'ledgerbase serve' (the binary --server
names) as a child process on a loopback port, drives it with keep-alive
connections from this process, and prints per scenario: requests/s (median of
--rounds), its ratio to a bare fiber handler serving the same invoice JSON from
memory (a second child process; every round is paired with a baseline round
just before it), p50/p90/p99 latency, errors, and the server's peak RSS.

--against starts a second 'serve' from another build on the same database and
pairs every round with one of its rounds too: the "× against" column is this
build's req/s over that one's, in the same run (old binary against new, or the
build without events: go build -tags ledgerbase_noevents ./cmd/ledgerbase).
--servers N starts N 'serve' processes of the measured build on the one
database (PostgreSQL) and spreads the connections over them in turn, as a
round-robin balancer would; --against-servers sizes the --against build's
the same way, so --against with the same binary, --servers 2 and
--against-servers 1 pairs two servers with one, round for round.
The webhook rows register an endpoint on a receiver in this process.`,
		Args:          cobra.NoArgs,
		RunE:          runBench,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := c.Flags()
	f.String("database-url", "", "postgres://... to measure on PostgreSQL (default: a SQLite file in --dir)")
	f.String("server", "", "the ledgerbase binary to measure (default: ledgerbase beside this program, else on PATH)")
	f.String("against", "", "a second ledgerbase binary measured in the same run, round for round (see above)")
	f.Int("scale", 1_000_000, "invoices to seed; the demo generator sizes every other resource from it unless counted below")
	f.Int("clients", 0, "clients to seed (default --scale/10: 100,000 at the default scale)")
	f.Int("sales-orders", 0, "sales orders to seed, each with its lines (default --scale/5: 200,000)")
	f.Int("products", 0, "products to seed, each with its variants (default --scale/20: 50,000)")
	f.Int("conns", 64, "keep-alive connections per scenario")
	f.Duration("duration", 5*time.Second, "length of one measured round")
	f.Duration("warmup", 2*time.Second, "unmeasured load before a scenario's rounds")
	f.Int("rounds", 3, "measured rounds per scenario; the table shows medians")
	f.Uint64("seed", 1, "seed of the data and of every request sequence")
	f.String("only", "", "run only the scenarios whose name contains one of these comma-separated words")
	f.String("dir", filepath.Join(os.TempDir(), "ledgerbase-bench"), "SQLite file (when no --database-url) and server logs")
	f.String("serve-flags", "", "extra flags for the measured 'ledgerbase serve', e.g. \"--log-access=false\" (default: its production defaults)")
	f.Int("servers", 1, "measured 'serve' processes on the one database; connections go to them in turn, as behind a round-robin balancer (PostgreSQL)")
	f.Int("against-servers", 0, "'serve' processes of the --against build (default: as many as --servers)")
	f.String("against-flags", "", "extra flags for the --against server only, e.g. \"--shortcuts-off=probeCache\": the same binary with and without a shortcut")
	c.AddCommand(baselineCmd())
	return c
}

// benchEnv is what the scenarios need: the servers and the seeded data.
type benchEnv struct {
	app, base *child
	against   *child // a second build on the same database, or nil
	// more are the measured build's servers beyond app (--servers), and
	// againstMore the against build's (--against-servers).
	more, againstMore []*child
	auth              string // an admin key without rate limit
	limited           string // a key allowed one request a minute
	data              *sample
	baseGen           func(*rand.Rand) request // the baseline's requests
	nonce             string                   // keeps this run's created records apart from earlier runs'
	dashboard         request                  // the admin dashboard, signed in
	pdfShort          string                   // invoices of 3 and 200 lines (documentInvoices)
	pdfLong           string
}

func runBench(c *cobra.Command, _ []string) error {
	ctx := c.Context()
	f := c.Flags()
	scale, _ := f.GetInt("scale")
	size := benchSize{invoices: scale}
	size.clients, _ = f.GetInt("clients")
	size.salesOrders, _ = f.GetInt("sales-orders")
	size.products, _ = f.GetInt("products")
	size = size.withDefaults()
	conns, _ := f.GetInt("conns")
	dur, _ := f.GetDuration("duration")
	warm, _ := f.GetDuration("warmup")
	rounds, _ := f.GetInt("rounds")
	seed, _ := f.GetUint64("seed")
	only, _ := f.GetString("only")
	dir, _ := f.GetString("dir")
	serveFlags, _ := f.GetString("serve-flags")
	out := c.OutOrStdout()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	url, _ := f.GetString("database-url")
	snapshot := ""
	if url == "" {
		// Every run starts from the database as seeding left it: the write
		// scenarios add rows, and a reused file would drift run after run.
		path := filepath.Join(dir, fmt.Sprintf("bench-%d-%d-%d-%d-seed%d.db", size.invoices, size.clients, size.salesOrders, size.products, seed))
		snapshot = path + ".seeded"
		if err := restoreSnapshot(snapshot, path); err != nil {
			return err
		}
		url = "sqlite:" + path
	}

	db, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		return err
	}
	ws, seeded, err := benchWorkspace(ctx, db, size, seed)
	if err != nil {
		return err
	}
	if seeded > 0 && snapshot != "" {
		if err := saveSnapshot(ctx, db, snapshot); err != nil {
			return err
		}
	}
	env := &benchEnv{nonce: fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff)}
	// Keys an interrupted earlier run left active.
	if _, err := db.Writer.APIKey.Update().Where(apikey.WorkspaceID(ws.ID), apikey.NameIn("bench", "bench over limit"), apikey.RevokedAtIsNil()).
		SetRevokedAt(time.Now().UTC()).Save(ctx); err != nil {
		return err
	}
	secret, key, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Name: "bench", Role: access.RoleAdmin, RateLimit: new(int)})
	if err != nil {
		return err
	}
	// Revoked when the run ends: plans cap a workspace's active keys, and
	// the workspace is reused run after run.
	defer access.RevokeKey(context.WithoutCancel(ctx), db.Writer, key.ID)
	one := 1
	limited, limitedKey, err := access.NewKey(ctx, db.Writer, access.KeySpec{WorkspaceID: ws.ID, Name: "bench over limit", Role: access.RoleAdmin, RateLimit: &one})
	if err != nil {
		return err
	}
	defer access.RevokeKey(context.WithoutCancel(ctx), db.Writer, limitedKey.ID)
	env.auth, env.limited = "Bearer "+secret, "Bearer "+limited
	if env.dashboard, err = dashboardRequest(ctx, db, ws.ID); err != nil {
		return err
	}
	if env.data, err = sampleData(ctx, db, ws.ID, seed); err != nil {
		return err
	}
	fmt.Fprintf(out, "data: %s, seed %d; the workspace holds %s\n", size, seed, env.data.describe())

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	server, _ := f.GetString("server")
	if server, err = serverBinary(exe, server); err != nil {
		return err
	}
	against, _ := f.GetString("against")
	serveArgs := append([]string{"serve", "--database-url", url}, strings.Fields(serveFlags)...)
	if env.app, err = startChild(ctx, dir, "server", "/v1/me", env.auth, server, serveArgs...); err != nil {
		return err
	}
	defer env.app.stop()
	servers, _ := f.GetInt("servers")
	for i := 1; i < servers; i++ {
		ch, err := startChild(ctx, dir, fmt.Sprintf("server-%d", i+1), "/v1/me", env.auth, server, serveArgs...)
		if err != nil {
			return err
		}
		defer ch.stop()
		env.more = append(env.more, ch)
	}
	if against != "" {
		againstFlags, _ := f.GetString("against-flags")
		againstArgs := append(serveArgs[:len(serveArgs):len(serveArgs)], strings.Fields(againstFlags)...)
		if env.against, err = startChild(ctx, dir, "against", "/v1/me", env.auth, against, againstArgs...); err != nil {
			return err
		}
		defer env.against.stop()
		n, _ := f.GetInt("against-servers")
		for i := 1; i < cmp.Or(n, servers); i++ {
			ch, err := startChild(ctx, dir, fmt.Sprintf("against-%d", i+1), "/v1/me", env.auth, against, againstArgs...)
			if err != nil {
				return err
			}
			defer ch.stop()
			env.againstMore = append(env.againstMore, ch)
		}
	}
	inv, err := env.app.get(ctx, "/v1/invoices/"+env.data.invoices[0].id, env.auth)
	if err != nil {
		return err
	}
	bodyFile := filepath.Join(dir, "baseline-invoice.json")
	if err := os.WriteFile(bodyFile, inv, 0o600); err != nil {
		return err
	}
	if env.pdfShort, env.pdfLong, err = documentInvoices(ctx, env); err != nil {
		return err
	}
	if env.base, err = startChild(ctx, dir, "baseline", "/v1/invoices/x", "", exe, "baseline", "--body", bodyFile); err != nil {
		return err
	}
	defer env.base.stop()

	fmt.Fprintf(out, "machine: %s; %d CPUs, GOMAXPROCS %d, load average %s; %s; serve %s\n", hostInfo(), runtime.NumCPU(), runtime.GOMAXPROCS(0),
		loadAverage(), dbKind(url), cmp.Or(serveFlags, "with its defaults"))
	fmt.Fprintf(out, "server: %s (%d serve processes)", server, len(env.appAddrs()))
	if against != "" {
		fmt.Fprintf(out, "; against: %s (%d serve processes)", against, len(env.againstAddrs()))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "run: %d connections, %d rounds of %s after %s warm-up, seed %d; each round paired with a baseline round,\n"+
		"× baseline is the median of the pairs' ratios; latencies and req/s are medians of the rounds\n\n", conns, rounds, dur, warm, seed)

	var results []result
	if seeded > 0 {
		results = append(results, result{name: "seed " + env.data.describe(), note: fmt.Sprintf("%.1f s", seeded.Seconds()),
			target: "≤ 60 s for 1,000,000 invoices", met: verdict(scale < 1_000_000, seeded <= time.Minute)})
	}
	for _, sc := range scenarios(env) {
		if !sc.selected(only) && sc.name != baselineName {
			continue
		}
		n := cmp.Or(sc.conns, conns)
		if db.Path != "" {
			// The host may drop the page cache between runs: every scenario
			// starts with the file cached, as on a server that ran a while.
			if err := warmPageCache(db.Path); err != nil {
				return err
			}
		}
		// Pages the scenarios before left to write back would be charged
		// to this one.
		settleDisk()
		fmt.Fprintf(c.ErrOrStderr(), "running %s (%d connections)\n", sc.name, n)
		results = append(results, sc.measure(ctx, env, seed, n, warm, dur, rounds))
	}
	if only == "" || strings.Contains(only, "webhook") {
		results = append(results, webhookRows(ctx, env)...)
	}
	hwm, _ := procStatus(env.app.cmd.Process.Pid, "VmHWM")
	results = append(results, result{name: "server peak RSS over the whole run (VmHWM)", note: fmt.Sprintf("%.0f MB", float64(hwm)/(1<<20))})
	printResults(out, results)
	return nil
}

// appAddrs are the measured build's servers.
func (e *benchEnv) appAddrs() []string {
	out := []string{e.app.addr}
	for _, c := range e.more {
		out = append(out, c.addr)
	}
	return out
}

// againstAddrs are the against build's servers.
func (e *benchEnv) againstAddrs() []string {
	out := []string{e.against.addr}
	for _, c := range e.againstMore {
		out = append(out, c.addr)
	}
	return out
}

// benchSize is what bench seeds: the figures at the default scale.
type benchSize struct {
	invoices, clients, salesOrders, products int
}

// withDefaults scales the counts left at zero with the invoices:
// 1,000,000 invoices, 100,000 clients, 200,000 sales orders, 50,000 products.
func (s benchSize) withDefaults() benchSize {
	for _, c := range []struct {
		n   *int
		div int
	}{{&s.clients, 10}, {&s.salesOrders, 5}, {&s.products, 20}} {
		if *c.n <= 0 {
			*c.n = max(1, s.invoices/c.div)
		}
	}
	return s
}

func (s benchSize) String() string {
	return fmt.Sprintf("%d invoices, %d clients, %d sales orders, %d products", s.invoices, s.clients, s.salesOrders, s.products)
}

// benchWorkspace finds the workspace an earlier run seeded alike, or seeds one and says how long it took.
func benchWorkspace(ctx context.Context, db *database.DB, size benchSize, seed uint64) (*ent.Workspace, time.Duration, error) {
	// Workspaces of earlier proportions have other names: never reused.
	name := fmt.Sprintf("bench %d seed %d clients %d orders %d products %d", size.invoices, seed, size.clients, size.salesOrders, size.products)
	ws, err := db.Writer.Workspace.Query().Where(workspace.Name(name)).First(ctx)
	if err == nil {
		return ws, 0, nil
	}
	if !ent.IsNotFound(err) {
		return nil, 0, err
	}
	fmt.Fprintf(os.Stderr, "seeding %s (and the rest in proportion)...\n", size)
	t0 := time.Now()
	ws, err = access.NewWorkspace(ctx, db.Writer, name+" (seeding)", "business", true, true)
	if err != nil {
		return nil, 0, err
	}
	o := demo.Options{Invoices: size.invoices, Clients: size.clients, SalesOrders: size.salesOrders, Products: size.products, Seed: seed, Alone: true,
		Progress: func(step string) { fmt.Fprintf(os.Stderr, "  %s at %.1f s\n", step, time.Since(t0).Seconds()) }}
	if err := demo.Seed(ctx, db, ws.ID, o); err != nil {
		return nil, 0, fmt.Errorf("seed: %w", err)
	}
	took := time.Since(t0)
	// Named only once complete, so an interrupted seeding is never reused.
	ws, err = ws.Update().SetName(name).Save(ctx)
	return ws, took, err
}

// child is a server process of the run.
type child struct {
	cmd  *exec.Cmd
	addr string
	log  string
}

// serverBinary is the ledgerbase binary to start: named, or beside this
// program, or on PATH.
func serverBinary(self, named string) (string, error) {
	if named != "" {
		return filepath.Abs(named)
	}
	p := filepath.Join(filepath.Dir(self), "ledgerbase")
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	p, err := exec.LookPath("ledgerbase")
	if err != nil {
		return "", errors.New("no ledgerbase binary: build one (go build ./cmd/ledgerbase) and name it with --server")
	}
	return p, nil
}

// loadAverage is the machine's 1, 5 and 15 minute load, as /proc tells it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// startChild starts exe and waits until it answers ready with 200.
func startChild(ctx context.Context, dir, name, ready, auth, exe string, args ...string) (*child, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, append(args, "--addr", addr)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// The webhook rows deliver to a receiver on this machine's loopback.
	cmd.Env = append(os.Environ(), "LEDGERBASE_WEBHOOKS_ALLOW_HTTP=true", "LEDGERBASE_WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	go func() { _ = cmd.Wait(); lf.Close() }()
	c := &child{cmd: cmd, addr: addr, log: logPath}
	if err := c.waitReady(ctx, ready, auth); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// get fetches path and fails on anything but 200.
func (c *child) get(ctx context.Context, path, auth string) ([]byte, error) {
	status, b, err := c.api(ctx, "GET", path, auth, nil)
	if err == nil && status != 200 {
		err = fmt.Errorf("GET %s: %d %s", path, status, b)
	}
	return b, err
}

// waitReady polls until the server answers path with 200 (a first start
// may rebuild search indexes over a big table).
func (c *child) waitReady(ctx context.Context, path, auth string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if c.cmd.ProcessState != nil {
			return fmt.Errorf("%s exited; see %s", c.cmd.Path, c.log)
		}
		_, err := c.get(ctx, path, auth)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready: %w (log: %s)", err, c.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// baselineCmd is the bare fiber handler every figure is compared with.
func baselineCmd() *cobra.Command {
	c := &cobra.Command{
		Use:    "baseline",
		Short:  "Serve one JSON body from memory on GET /v1/invoices/:id (no auth, no database)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			addr, _ := c.Flags().GetString("addr")
			path, _ := c.Flags().GetString("body")
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			app := fiber.New(fiber.Config{DisableStartupMessage: true})
			app.Get("/v1/invoices/:id", func(c *fiber.Ctx) error {
				c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
				return c.Send(body)
			})
			errc := make(chan error, 1)
			go func() { errc <- app.Listen(addr) }()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
				return app.Shutdown()
			}
		},
	}
	c.Flags().String("addr", "127.0.0.1:8081", "address to listen on")
	c.Flags().String("body", "", "file holding the JSON to answer")
	return c
}

func hostInfo() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %s", runtime.GOOS, runtime.GOARCH, model)
}

func dbKind(url string) string {
	if strings.HasPrefix(url, "postgres") {
		return "PostgreSQL"
	}
	return "SQLite " + strings.TrimPrefix(url, "sqlite:")
}

// result is one printed row.
type result struct {
	name          string
	conns         int
	rps, ratio    float64
	against       float64 // req/s over the --against build's, paired
	p50, p90, p99 float64
	errors        int
	rss           int64
	note          string // replaces the figures (seeding time, unavailable endpoint)
	target        string
	met           string
}

func verdict(skip, ok bool) string {
	switch {
	case skip:
		return "—"
	case ok:
		return "met"
	default:
		return "MISSED"
	}
}

// printResults writes a Markdown table, so a run pastes into the README as is.
func printResults(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	against := false
	for _, r := range rs {
		against = against || r.against > 0
	}
	col := func(v float64) string {
		if v <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", v)
	}
	head, rule := "| scenario\t| conns\t| req/s\t| × baseline\t", "|---\t|--:\t|--:\t|--:\t"
	if against {
		head, rule = head+"| × against\t", rule+"|--:\t"
	}
	fmt.Fprintln(tw, head+"| p50 ms\t| p90 ms\t| p99 ms\t| errors\t| peak RSS MB\t| target\t| \t|")
	fmt.Fprintln(tw, rule+"|--:\t|--:\t|--:\t|--:\t|--:\t|---\t|---\t|")
	for _, r := range rs {
		cells := fmt.Sprintf("| %s\t| %d\t| %.0f\t| %s\t", r.name, r.conns, r.rps, col(r.ratio))
		if r.note != "" {
			cells = fmt.Sprintf("| %s\t| \t| %s\t| \t", r.name, r.note)
		}
		if against {
			cells += "| " + col(r.against) + "\t"
		}
		if r.note != "" {
			fmt.Fprintf(tw, "%s| \t| \t| \t| \t| \t| %s\t| %s\t|\n", cells, r.target, r.met)
			continue
		}
		fmt.Fprintf(tw, "%s| %.2f\t| %.2f\t| %.2f\t| %d\t| %.0f\t| %s\t| %s\t|\n",
			cells, r.p50, r.p90, r.p99, r.errors, float64(r.rss)/(1<<20), r.target, r.met)
	}
	tw.Flush()
}

// scenario is one row of the table.
type scenario struct {
	name   string
	conns  int // 0: --conns
	base   bool
	gen    func(*rand.Rand) request
	ok     func(int) bool
	probe  *request // sent once first; a 501/404/405 means the endpoint is not there yet
	target string
	check  func(result) bool
}

const baselineName = "baseline: bare fiber, invoice JSON from memory"

func (s scenario) selected(only string) bool {
	if only == "" {
		return true
	}
	for _, w := range strings.Split(only, ",") {
		if w != "" && strings.Contains(s.name, w) {
			return true
		}
	}
	return false
}

func (s scenario) measure(ctx context.Context, env *benchEnv, seed uint64, conns int, warm, dur time.Duration, rounds int) result {
	srv := env.app
	if s.base {
		srv = env.base
	}
	res := result{name: s.name, conns: conns, target: s.target}
	if s.probe != nil {
		status, err := probe(ctx, srv, *s.probe)
		if err != nil || status == 501 || status == 404 || status == 405 {
			res.note = fmt.Sprintf("endpoint not available (%d)", status)
			res.met = verdict(true, false)
			return res
		}
	}
	l := load{addrs: []string{srv.addr}, seed: seed}
	if !s.base {
		l.addrs = env.appAddrs()
	}
	pid := srv.cmd.Process.Pid
	l.run(ctx, conns, warm, s.gen, s.ok, pid)
	// The other build serves the same requests round for round; which of
	// the two goes first alternates.
	var other *load
	if env.against != nil && !s.base {
		other = &load{addrs: env.againstAddrs(), seed: seed}
		other.run(ctx, conns, warm, s.gen, s.ok, env.against.cmd.Process.Pid)
	}
	// Each round is paired with a baseline round just before it: a shared
	// machine's load drifts over minutes, and a pair sees the same load.
	base := load{addrs: []string{env.base.addr}, seed: seed}
	var rps, ratios, againsts, p50, p90, p99 []float64
	for i := 0; i < rounds; i++ {
		var b, o round
		if !s.base {
			b = base.run(ctx, conns, dur, env.baseGen, status(200), 0)
		}
		if other != nil && i%2 == 0 {
			o = other.run(ctx, conns, dur, s.gen, s.ok, 0)
		}
		r := l.run(ctx, conns, dur, s.gen, s.ok, pid)
		if other != nil && i%2 == 1 {
			o = other.run(ctx, conns, dur, s.gen, s.ok, 0)
		}
		rps = append(rps, r.rps())
		if !s.base && b.rps() > 0 {
			ratios = append(ratios, r.rps()/b.rps())
		}
		if o.rps() > 0 {
			againsts = append(againsts, r.rps()/o.rps())
		}
		p50, p90, p99 = append(p50, r.pct(.5)), append(p90, r.pct(.9)), append(p99, r.pct(.99))
		res.errors += r.errors
		res.rss = max(res.rss, r.peakRSS)
	}
	res.against = median(againsts)
	res.rps, res.p50, res.p90, res.p99 = median(rps), median(p50), median(p90), median(p99)
	res.ratio = median(ratios)
	if s.base {
		res.ratio = 1
	}
	if s.check != nil {
		res.met = verdict(false, s.check(res) && res.errors == 0)
	}
	return res
}

func probe(ctx context.Context, c *child, r request) (int, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, "http://"+c.addr+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", r.auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

var errNoData = errors.New("bench: the seeded workspace has no invoices")

// warmPageCache reads a file through once so the OS caches it.
func warmPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// restoreSnapshot copies the seeded database over path, or, with no
// snapshot yet, removes path so that the run seeds a fresh one.
func restoreSnapshot(snapshot, path string) error {
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if _, err := os.Stat(snapshot); errors.Is(err, os.ErrNotExist) {
		if err := os.Remove(path); !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return copyFile(snapshot, path)
}

// saveSnapshot keeps the freshly seeded database for the runs after this
// one. Nothing else writes while it runs: the server is not started yet.
func saveSnapshot(ctx context.Context, db *database.DB, snapshot string) error {
	// The whole WAL into the file first (a checkpoint of another connection may
	// hold the checkpoint lock for a moment: then busy is 1, try again).
	for deadline := time.Now().Add(time.Minute); ; {
		var busy, frames, done int
		if err := db.WritePool.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if busy == 0 && frames == 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("snapshot: the WAL could not be checkpointed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return copyFile(db.Path, snapshot)
}

// copyFile copies src to dst through a temporary file, synced before the
// rename: an interrupted copy is never taken for a whole one, and no
// write-back runs while the scenarios measure.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst + ".tmp")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}
