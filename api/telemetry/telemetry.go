// Package telemetry owns what an operator watches: the Prometheus metrics
// of the appliance and its access log. One fiber middleware, installed
// first, feeds both, so every response is counted and logged once.
package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Unmatched is the route label of every request no route answered, so
// random paths cannot grow the number of series.
const Unmatched = "unmatched"

// authFailureReasons are the 401 codes of DESIGN.md, pre-declared so a
// rate() over them works before the first failure.
var authFailureReasons = []string{"missing_api_key", "invalid_api_key", "expired_api_key", "revoked_api_key"}

// Options configures Telemetry.
type Options struct {
	// Logger receives one access line per request; nil disables the access log.
	Logger *slog.Logger
	// Version is reported by ledgerbase_build_info.
	Version string
}

// Telemetry is a registry of the appliance's metrics and the middleware
// that records them.
type Telemetry struct {
	Registry *prometheus.Registry

	log          *slog.Logger
	fastLog      *LogHandler                   // log's handler when it has the fast access line
	limitedBy    map[string]prometheus.Counter // rateLimited by plan
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	inFlight     *lineCounter // read by a GaugeFunc at scrape time: one atomic add, not a CAS loop on a float
	rateLimited  *prometheus.CounterVec
	authFailures *prometheus.CounterVec
	faults       *prometheus.CounterVec
	// storageFull is set by a 507 and cleared by the next write that
	// succeeds: the database accepts writes again.
	storageFull atomic.Bool

	appOnce sync.Once
	routes  routeIndex
	// onError is the app's own error handler: App.ErrorHandler would look
	// for a mounted sub-app's on every call, and the appliance mounts none.
	onError fiber.ErrorHandler
	// series caches each route, method and status's series (WithLabelValues
	// hashes the labels every time).
	series sync.Map // seriesKey -> *series
}

// lineCounter is a counter alone on its cache line: every request adds to
// it from every core, and a neighbour would bounce with it.
type lineCounter struct {
	atomic.Int64
	_ [56]byte
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func (t *Telemetry) seriesByLabels(route, method string, status int) *series {
	k := seriesKey{route, method, status}
	if s, ok := t.series.Load(k); ok {
		return s.(*series)
	}
	code := strconv.Itoa(status)
	s, _ := t.series.LoadOrStore(k, &series{
		requests: t.requests.WithLabelValues(route, method, code),
		duration: t.duration.WithLabelValues(route, method, code),
	})
	return s.(*series)
}

// New registers the appliance's metrics and the runtime collectors on a
// registry of its own (servers in one test process must not share counters).
func New(o Options) *Telemetry {
	reg := prometheus.NewRegistry()
	labels := []string{"route", "method", "status"}
	t := &Telemetry{
		Registry: reg,
		log:      o.Logger,
		inFlight: new(lineCounter),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ledgerbase_http_request_duration_seconds",
			Help: "Time to answer HTTP requests, by route pattern, method and status.",
			// Reads answer in well under a millisecond; lists and writes take longer.
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, labels),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_rate_limited_total",
			Help: "Requests refused with 429 by the per-key rate limiter, by the workspace's plan.",
		}, []string{"plan"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_auth_failures_total",
			Help: "Requests refused with 401, by reason (the error code).",
		}, []string{"reason"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_database_faults_total",
			Help: "Requests refused because of a fault of the database, by kind: storage_full (507) or database_unavailable (503).",
		}, []string{"kind"}),
	}
	if o.Logger != nil {
		t.fastLog, _ = o.Logger.Handler().(*LogHandler)
	}
	t.limitedBy = map[string]prometheus.Counter{}
	for _, p := range resource.PlanNames() {
		t.limitedBy[p] = t.rateLimited.WithLabelValues(p)
	}
	for _, r := range authFailureReasons {
		t.authFailures.WithLabelValues(r)
	}
	for _, f := range []database.Fault{database.StorageFull, database.Unavailable} {
		t.faults.WithLabelValues(f.String())
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "ledgerbase_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": o.Version, "goversion": runtime.Version()},
	})
	build.Set(1)
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ledgerbase_http_requests_in_flight",
		Help: "HTTP requests being answered now.",
	}, func() float64 { return float64(t.inFlight.Load()) })
	storageFull := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ledgerbase_database_storage_full",
		Help: "1 from a write refused because the database's storage is full (507) until a write succeeds again.",
	}, func() float64 {
		if t.storageFull.Load() {
			return 1
		}
		return 0
	})
	reg.MustRegister(t.requests, t.duration, inFlight, t.rateLimited, t.authFailures, t.faults, storageFull, build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	return t
}

// WatchDB exports db's pool statistics (go_sql_* by db_name: "read" and
// "write", or "main" for one pool) and ledgerbase_database_up, a ping at
// each scrape, so an alert can fire while no request comes.
func (t *Telemetry) WatchDB(db *database.DB) error {
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ledgerbase_database_up",
		Help: "1 when the database answered a ping at this scrape, 0 when it did not.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		if db.Ping(ctx) != nil {
			return 0
		}
		return 1
	})
	if err := t.Registry.Register(up); err != nil {
		return err
	}
	if db.ReadPool == db.WritePool {
		return t.Registry.Register(collectors.NewDBStatsCollector(db.WritePool, "main"))
	}
	if err := t.Registry.Register(collectors.NewDBStatsCollector(db.ReadPool, "read")); err != nil {
		return err
	}
	return t.Registry.Register(collectors.NewDBStatsCollector(db.WritePool, "write"))
}

// pingTimeout bounds ledgerbase_database_up's ping, within a scrape's
// usual 10 s timeout.
const pingTimeout = 2 * time.Second

// Handler serves the registry in the Prometheus exposition formats.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{Registry: t.Registry})
}

// Middleware measures and logs every request. Install it first (it is
// rest.Config.Observe): it renders the errors of the handlers after it so it
// sees the status the client gets, panics included.
func (t *Telemetry) Middleware(c *fiber.Ctx) error {
	start := rest.Arrival(c)
	t.appOnce.Do(func() {
		t.routes = newRouteIndex(c.App())
		t.onError = c.App().Config().ErrorHandler // a copy of the whole Config: once, not per request
	})
	t.inFlight.Add(1)
	defer t.inFlight.Add(-1)
	if err := c.Next(); err != nil {
		if herr := t.onError(c, err); herr != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	// The monotonic clock alone (time.Now reads the wall clock too); the
	// line's time is the arrival's wall clock plus the time taken.
	elapsed := time.Since(start)
	end := start.Add(elapsed)
	status := c.Response().StatusCode()
	method := methodLabel(c.Method())
	// A request refused before routing (401, 429) is labelled with the
	// endpoint it was addressed to.
	route := t.routes.lookup(c.Method(), c.Route().Path, c.Path(), status)
	ser := t.seriesByLabels(route, method, status)
	ser.requests.Inc()
	ser.duration.Observe(elapsed.Seconds())

	p := rest.Principal(c)
	if rest.RateLimited(c) && p != nil {
		plan := p.Workspace.Plan.String()
		if ctr, ok := t.limitedBy[plan]; ok {
			ctr.Inc()
		} else {
			t.rateLimited.WithLabelValues(plan).Inc()
		}
	}
	if reason := rest.AuthFailure(c); reason != "" {
		t.authFailures.WithLabelValues(reason).Inc()
	}
	t.watchFaults(c, method, status)
	if t.log != nil {
		keyID := ""
		if p != nil {
			keyID = p.Key.ID // the id only: the secret never reaches a log
		}
		// fasthttp's RequestCtx is the request's context: fiber's
		// UserContext would look it up among the request's values.
		logAccess(c.Context(), t.log, t.fastLog, end, &accessLine{
			requestID:  rest.RequestID(c),
			method:     c.Method(),
			route:      route,
			path:       c.Path(),
			status:     status,
			durationUS: elapsed.Microseconds(),
			keyID:      keyID,
			ip:         c.IP(),
		})
	}
	return nil
}

// watchFaults counts the requests a database fault refused and keeps
// ledgerbase_database_storage_full.
func (t *Telemetry) watchFaults(c *fiber.Ctx, method string, status int) {
	if status >= 500 {
		if f := rest.DatabaseFault(c); f != "" {
			t.faults.WithLabelValues(f).Inc()
			if f == database.StorageFull.String() {
				t.storageFull.Store(true)
			}
		}
		return
	}
	if status < 400 && t.storageFull.Load() && method != fiber.MethodGet && method != fiber.MethodHead && method != fiber.MethodOptions {
		t.storageFull.Store(false)
	}
}

// methods are the label values of the methods fiber routes (it answers
// others with 501 before any middleware runs).
var methods = []string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
	fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace}

// methodLabel returns one of methods, never m itself: fiber's strings
// point into buffers reused by the next request, and a label value is kept.
func methodLabel(m string) string {
	for _, k := range methods {
		if k == m {
			return k
		}
	}
	return "OTHER"
}
