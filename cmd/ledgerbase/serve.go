package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/health"
	"github.com/ledgerbase/ledgerbase/api/mail"
	"github.com/ledgerbase/ledgerbase/api/openapi"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/api/telemetry"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/session"
)

// version is the build's version, set with -ldflags "-X main.version=...".
var version = "dev"

func serveCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the /v1 API, the admin UI, health probes and metrics",
		Long: `Serve the /v1 API, the admin UI, /healthz, /readyz and /metrics.

Every setting below can also come from a YAML file (--config, or
LEDGERBASE_CONFIG; configs/ledgerbase.yaml explains each one) and from its
LEDGERBASE_* environment variable. A flag beats the environment, which beats
the file, which beats the default.

SIGTERM or SIGINT shuts down gracefully: /readyz answers 503, new
connections are refused, requests in flight get --shutdown-grace to finish,
then the database is closed.`,
		Args: cobra.NoArgs,
		RunE: runServe,
	}
	addConfigFlags(c.Flags())
	return c
}

func runServe(c *cobra.Command, _ []string) error {
	cfg, err := loadConfig(c.Flags(), os.Environ())
	if err != nil {
		return err
	}
	out := newLogWriter(os.Stderr, 100*time.Millisecond)
	defer out.Close()
	log := cfg.logger(out)
	slog.SetDefault(log)
	ctx := c.Context()
	db, err := openMigrated(ctx, cfg.Database.URL, cfg.databaseOptions())
	if err != nil {
		return err
	}
	a, err := newAppliance(cfg, log, db)
	if err != nil {
		db.Close()
		return err
	}
	var banner string
	if cfg.Demo {
		if banner, err = demoWorkspace(ctx, a.api.Core, db, a.baseURL()); err != nil {
			a.close()
			return err
		}
	}
	ln, mln, err := a.listen()
	if err != nil {
		a.close()
		return err
	}
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- a.serve(ln, mln) }()
	log.Info("ledgerbase listening", "url", a.baseURL(), "database", redactURL(cfg.Database.URL),
		"metrics", a.metricsURL(mln), "version", version)
	if banner != "" {
		fmt.Fprint(c.OutOrStdout(), banner)
	}
	select {
	case err := <-errc:
		a.close()
		return err
	case <-sig.Done():
	}
	stop() // a second signal kills the process at once
	log.Info("shutting down", "grace", cfg.ShutdownGrace.String(), "delay", cfg.ShutdownDelay.String())
	if err := a.shutdown(context.Background()); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// appliance is one running `ledgerbase serve`: the API, probes, metrics
// and the listeners they answer on.
type appliance struct {
	cfg       Config
	log       *slog.Logger
	db        *database.DB
	api       *rest.Server
	app       *fiber.App
	probe     *health.Probe
	telemetry *telemetry.Telemetry
	metrics   *http.Server // nil when /metrics is on the main listener or off
	tls       *tls.Config  // nil for plain HTTP
	keyPair   *keyPair     // the certificate of tls
	// The background work (usage counts, overdue invoices, webhooks) runs
	// until stopUsage; usageDone closes after it, before the database does.
	stopUsage context.CancelFunc
	usageDone chan struct{}
}

// newAppliance builds the server on an open, migrated database. mounts add
// routes before /v1 (the admin UI; tests add slow routes).
func newAppliance(cfg Config, log *slog.Logger, db *database.DB, mounts ...func(*fiber.App)) (*appliance, error) {
	a := &appliance{cfg: cfg, log: log, db: db, probe: health.New(db.Ping, log)}
	var accessLog *slog.Logger
	if cfg.Log.Access {
		accessLog = log
	}
	a.telemetry = telemetry.New(telemetry.Options{Logger: accessLog, Version: version})
	if err := a.telemetry.WatchDB(db); err != nil {
		return nil, err
	}
	hooks, err := cfg.webhooks(log)
	if err != nil {
		return nil, err
	}
	hookMetrics := webhooks.NewMetrics(db)
	if err := a.telemetry.Registry.Register(hookMetrics); err != nil {
		return nil, err
	}
	mailMetrics := mail.NewMetrics(db)
	if err := a.telemetry.Registry.Register(mailMetrics); err != nil {
		return nil, err
	}
	srv, err := rest.New(db, rest.Config{
		Config: api.Config{
			Webhooks:         hooks,
			Logger:           log,
			KeyCacheTTL:      cfg.KeyCacheTTL,
			RecordCacheBytes: cfg.recordCacheBytes(),
		},
		RateLimits:       cfg.rateLimits(),
		SharedRateLimits: cfg.RateLimit.Shared,
		BodyLimit:        cfg.BodyLimit,
		ReadTimeout:      cfg.ReadTimeout,
		WriteTimeout:     cfg.WriteTimeout,
		IdleTimeout:      cfg.IdleTimeout,
		Observe:          a.telemetry.Middleware,
	})
	if err != nil {
		return nil, err
	}
	a.api = srv
	outbox, err := mail.NewOutbox(db, srv.Records, cfg.mail(log), mailDocuments(srv.Core))
	if err != nil {
		return nil, err
	}
	outbox.Metrics = mailMetrics
	if err := openapi.Register(srv); err != nil {
		return nil, err
	}
	srv.Mount(a.probe.Mount)
	srv.Mount(web.New(srv.Core).Mount)
	srv.AllowBody(fiber.MethodPost, web.CompanyPath, web.CompanyBodyLimit) // a logo upload
	if cfg.Metrics.Enabled {
		if cfg.Metrics.Addr == "" {
			h := adaptor.HTTPHandler(a.telemetry.Handler())
			srv.Mount(func(app *fiber.App) { app.Get("/metrics", h) })
		} else {
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", a.telemetry.Handler())
			a.metrics = &http.Server{
				Handler:           mux,
				ReadHeaderTimeout: cfg.ReadTimeout,
				ReadTimeout:       cfg.ReadTimeout,
				WriteTimeout:      cfg.WriteTimeout,
				IdleTimeout:       cfg.IdleTimeout,
				ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			}
		}
	}
	for _, m := range mounts {
		srv.Mount(m)
	}
	a.app = srv.Finish()
	if cfg.TLS.Cert != "" {
		if a.keyPair, err = newKeyPair(cfg.TLS.Cert, cfg.TLS.Key, log); err != nil {
			return nil, err
		}
		// fasthttp speaks HTTP/1.1 only, so do not offer h2 in ALPN.
		a.tls = &tls.Config{GetCertificate: a.keyPair.get, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	uctx, cancel := context.WithCancel(context.Background())
	a.stopUsage, a.usageDone = cancel, make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { srv.Clock.Run(uctx, time.Minute, cfg.Events.Retention, log) })
	worker := webhooks.NewWorker(db, hooks)
	worker.Metrics = hookMetrics
	worker.Queues = []webhooks.Queue{outbox}
	bg.Go(func() { worker.Run(uctx) })
	go func() { srv.Usage.Run(uctx, time.Minute); bg.Wait(); close(a.usageDone) }()
	return a, nil
}

// mailDocuments are the core's documents for the outbox: the PDF of a
// record, rendered as its workspace's system, and the company that sends it.
func mailDocuments(c *api.Core) mail.Documents {
	return mail.Documents{
		PDF: func(ctx context.Context, ws, res, id, lang string) (string, []byte, error) {
			w, err := c.DB.Reader.Workspace.Get(ctx, ws)
			if err != nil {
				return "", nil, err
			}
			p := &access.Principal{Workspace: access.WorkspaceOf(w), Key: access.Key{Name: mail.System, Role: access.RoleAdmin}}
			return c.DocumentPDF(ctx, p, res, id, lang)
		},
		Sender: func(ctx context.Context, ws string) (string, string, error) {
			p, err := c.Company(ctx, ws)
			if err != nil {
				return "", "", err
			}
			return p.LegalName, p.Email, nil
		},
	}
}

// keyPair serves a certificate from files and reloads it when they change,
// so a renewed certificate (certbot, cert-manager) needs no restart.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger
	// every bounds how often the files are looked at (handshakes are many).
	every time.Duration

	mu      sync.Mutex
	cert    *tls.Certificate
	mod     [2]time.Time
	checked time.Time
}

func newKeyPair(certFile, keyFile string, log *slog.Logger) (*keyPair, error) {
	kp := &keyPair{certFile: certFile, keyFile: keyFile, log: log, every: 10 * time.Second}
	if err := kp.load(); err != nil {
		return nil, err
	}
	return kp, nil
}

func (kp *keyPair) modTimes() ([2]time.Time, error) {
	var m [2]time.Time
	for i, f := range []string{kp.certFile, kp.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return m, err
		}
		m[i] = st.ModTime()
	}
	return m, nil
}

func (kp *keyPair) load() error {
	mod, err := kp.modTimes()
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(kp.certFile, kp.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	kp.cert, kp.mod, kp.checked = &cert, mod, time.Now()
	return nil
}

// get is tls.Config.GetCertificate. A pair that fails to load (caught
// mid-renewal: new certificate, old key) keeps the previous one serving.
func (kp *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if time.Since(kp.checked) < kp.every {
		return kp.cert, nil
	}
	kp.checked = time.Now()
	if mod, err := kp.modTimes(); err == nil && mod != kp.mod {
		if err := kp.load(); err != nil {
			kp.log.Warn("keeping the previous TLS certificate", "err", err)
		} else {
			kp.log.Info("reloaded the TLS certificate", "cert", kp.certFile)
		}
	}
	return kp.cert, nil
}

// listen binds the main listener and, when configured, the metrics one.
func (a *appliance) listen() (main, metrics net.Listener, err error) {
	if main, err = net.Listen("tcp", a.cfg.Addr); err != nil {
		return nil, nil, err
	}
	if a.metrics != nil {
		if metrics, err = net.Listen("tcp", a.cfg.Metrics.Addr); err != nil {
			main.Close()
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return main, metrics, nil
}

// serve answers on ln (TLS when configured) and, when set, serves /metrics
// on mln, until shutdown.
func (a *appliance) serve(ln, mln net.Listener) error {
	if mln != nil && a.metrics != nil {
		go func() {
			if err := a.metrics.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("metrics listener failed", "err", err)
			}
		}()
	}
	if a.tls != nil {
		ln = tls.NewListener(ln, a.tls)
	}
	return a.app.Listener(ln)
}

// shutdown stops the appliance without dropping requests: /readyz turns
// 503, after shutdown_delay the listener closes, requests in flight get
// shutdown_grace, then the database closes.
func (a *appliance) shutdown(ctx context.Context) error {
	a.probe.Drain()
	if d := a.cfg.ShutdownDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	gctx, cancel := context.WithTimeout(ctx, a.cfg.ShutdownGrace)
	defer cancel()
	err := a.app.ShutdownWithContext(gctx)
	if err != nil {
		a.log.Warn("grace period over: requests still in flight are cut off", "err", err)
	}
	if a.metrics != nil {
		if merr := a.metrics.Shutdown(gctx); merr != nil {
			a.metrics.Close()
		}
	}
	if cerr := a.close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close database: %w", cerr))
	}
	return err
}

// close stops the background work, then closes the database.
func (a *appliance) close() error {
	a.stopUsage()
	<-a.usageDone // the last traffic counts are written before the database closes
	return a.db.Close()
}

// baseURL is the address clients reach the main listener at.
func (a *appliance) baseURL() string {
	scheme := "http"
	if a.cfg.TLS.Cert != "" {
		scheme = "https"
	}
	return scheme + "://" + a.cfg.Addr
}

func (a *appliance) metricsURL(mln net.Listener) string {
	switch {
	case !a.cfg.Metrics.Enabled:
		return "off"
	case mln != nil:
		return "http://" + mln.Addr().String() + "/metrics"
	}
	return a.baseURL() + "/metrics"
}

// redactURL hides a PostgreSQL password from logs.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// demoInvoices is the size of `serve --demo`'s data: enough for several
// pages of every list, small enough to load in a blink.
const demoInvoices = 500

// demoKeyName names the key `serve --demo` mints: it is how the next start
// recognises the keys it minted before (docs/decisions.md).
const demoKeyName = "serve --demo"

// demoWorkspace seeds a business workspace when the database has none, and
// mints a key for it on every start (secrets are never stored, so an old
// one cannot be shown again), revoking the one printed before.
func demoWorkspace(ctx context.Context, core *api.Core, db *database.DB, baseURL string) (string, error) {
	ws, err := db.Writer.Workspace.Query().Order(ent.Asc(workspace.FieldCreatedAt)).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return "", err
	}
	if ws == nil {
		ws, err = access.NewWorkspace(ctx, db.Writer, "Demo Company", "business", true, true)
		if err != nil {
			return "", err
		}
		if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: demoInvoices, Seed: 1}); err != nil {
			return "", fmt.Errorf("demo data: %w", err)
		}
		if err := demoCompany(ctx, core, ws.ID); err != nil {
			return "", err
		}
	}
	secret, revoked, err := rotateDemoKey(ctx, db.Writer, ws.ID)
	if err != nil {
		return "", err
	}
	replaced := ""
	if revoked > 0 {
		replaced = "\n  (a new key at every start: the one printed before is revoked)\n"
	}
	login, err := demoAdmin(ctx, db)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`
Ledgerbase demo is ready: workspace %q (%s), business plan, commerce on.

  export KEY=%s
  curl -H "Authorization: Bearer $KEY" %s/v1/invoices
%s
Admin UI: %s/admin/  %s

`, ws.Name, ws.ID, secret, baseURL, replaced, baseURL, login), nil
}

// rotateDemoKey revokes every key a previous `serve --demo` minted and
// mints a new admin key for workspace ws, in one transaction: a crash
// between the two leaves the previous key valid, never none or two.
func rotateDemoKey(ctx context.Context, db *ent.Client, ws string) (secret string, revoked int, err error) {
	tx, err := db.Tx(ctx)
	if err != nil {
		return "", 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	revoked, err = tx.APIKey.Update().Where(apikey.Name(demoKeyName), apikey.RevokedAtIsNil()).
		SetRevokedAt(time.Now().UTC()).Save(ctx)
	if err != nil {
		return "", 0, err
	}
	secret, _, err = access.NewKey(ctx, tx.Client(), access.KeySpec{WorkspaceID: ws, Name: demoKeyName, Role: access.RoleAdmin})
	if err != nil {
		return "", 0, err
	}
	return secret, revoked, tx.Commit()
}

// demoAdmin creates admin@example.com with a random password when no admin
// exists, and says how to sign in.
func demoAdmin(ctx context.Context, db *database.DB) (string, error) {
	exists, err := session.AnyAdmin(ctx, db.Writer)
	if err != nil || exists {
		return "(sign in with your admin account)", err
	}
	password := session.Token()[:20]
	if _, err := session.CreateAdmin(ctx, db.Writer, "admin@example.com", password); err != nil {
		return "", err
	}
	return "email admin@example.com, password " + password, nil
}

func healthcheckCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 if the local server's /healthz answers 200 (Docker's HEALTHCHECK)",
		Long: `Ask the server on --addr (same settings as serve: file, env, flags) for
/healthz and exit 0 if it answers 200. An unspecified host (0.0.0.0, ::)
is asked on 127.0.0.1.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig(c.Flags(), os.Environ())
			if err != nil {
				return err
			}
			u, err := healthURL(cfg)
			if err != nil {
				return err
			}
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				// The probe asks its own process over loopback: the certificate
				// names the public host, not 127.0.0.1, so it cannot verify.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
			}}
			res, err := client.Get(u)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("%s answered %s", u, res.Status)
			}
			return nil
		},
	}
	addConfigFlags(c.Flags(), "addr", "tls.cert", "tls.key")
	return c
}

func healthURL(cfg Config) (string, error) {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return "", fmt.Errorf("addr %q: %w", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if cfg.TLS.Cert != "" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/healthz", nil
}
