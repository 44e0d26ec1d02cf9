// Package api is the /v1 surface: the fiber app, its middleware, and the
// routes derived from the resource declarations.
package api

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/ratelimit"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/routing"
	"github.com/ledgerbase/ledgerbase/api/usage"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Config is what the API needs from the appliance's settings.
type Config struct {
	Logger *slog.Logger
	// RateLimits per minute by plan; a key's own limit overrides its plan's.
	RateLimits map[resource.Plan]int
	// SharedRateLimits keeps the buckets in the database so every process
	// sharing it enforces one limit per key (one small write per request).
	SharedRateLimits bool
	// BodyLimit caps request bodies (DESIGN.md: 1 MiB).
	BodyLimit int
	// KeyCacheTTL is the longest a cached key lookup is used; changes by
	// any process are seen within a second regardless (database.AccessGen).
	KeyCacheTTL time.Duration
	// RecordCacheBytes sizes the render cache of records (records.SetCache):
	// 0 is records.DefaultCacheBytes, negative turns it off.
	RecordCacheBytes int
	// ReadTimeout, WriteTimeout and IdleTimeout protect against slow clients.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Webhooks are the endpoint URL rules (allow_http, allow_private_networks)
	// checked when an endpoint is saved.
	Webhooks webhooks.Settings
	// Observe, when set, runs first on every request (metrics, access log).
	// Errors of the handlers after it reach it unrendered: it must render
	// them with c.App().ErrorHandler to see the final status.
	Observe fiber.Handler
}

// DefaultRateLimits are DESIGN.md's per-minute defaults.
func DefaultRateLimits() map[resource.Plan]int {
	return map[resource.Plan]int{resource.Starter: 120, resource.Growth: 300, resource.Business: 1200}
}

// Server is the running API.
type Server struct {
	App     *fiber.App
	DB      *database.DB
	Auth    *access.Authenticator
	Records *records.Engine
	Limiter ratelimit.Taker
	Usage   *usage.Recorder // each key's traffic, for the admin dashboard
	cfg     Config
	log     *slog.Logger
	routes  *routing.Table // every route the app serves, for 404 and 405
	idem    *idempotency.Store
	faults  faultLog // episodes of database faults, logged once each
	hooks   []func(*fiber.App)
	public  []func(fiber.Router)
}

// New builds the app on an open, migrated database.
func New(db *database.DB, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RateLimits == nil {
		cfg.RateLimits = DefaultRateLimits()
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 1 << 20
	}
	if err := checkWrites(); err != nil {
		return nil, err
	}
	eng, err := records.New(db, resource.All)
	if err != nil {
		return nil, err
	}
	if cfg.RecordCacheBytes != 0 {
		eng.SetCache(cfg.RecordCacheBytes)
	}
	eng.Refresh = writes.Refresher(db, eng)
	s := &Server{
		DB:      db,
		Auth:    access.NewAuthenticator(db.Reader, db.Ent),
		Records: eng,
		Usage:   usage.New(db.Ent),
		cfg:     cfg,
		log:     cfg.Logger,
		idem:    idempotency.New(db.Ent),
	}
	// Every process's key, role and workspace changes reach the key cache
	// within a second (database triggers, watched by the DB).
	s.Auth.Changes = db.AccessGen
	if cfg.KeyCacheTTL > 0 {
		s.Auth.TTL = cfg.KeyCacheTTL
	}
	s.Limiter = ratelimit.New()
	if cfg.SharedRateLimits {
		s.Limiter = ratelimit.NewShared(db, cfg.Logger)
	}
	s.App = fiber.New(fiber.Config{
		AppName:               "ledgerbase",
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          s.errorHandler,
		DisableStartupMessage: true,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		// Writes are JSON we decode ourselves; keep fasthttp from copying twice.
		ReadBufferSize: 8192,
		// A page of 25 invoices is ~20 KB: with fasthttp's 4 KB default it
		// left in two write calls (the buffer's first 4 KB, then the rest),
		// and socket writes were 16% of a search's CPU. One write per
		// response took `ledgerbase bench` lists from 13.4k to 14.7k req/s
		// and q by client name from 7.1–8.2k to 9.0–9.3k. The buffer is
		// pooled and held only while a response is written.
		WriteBufferSize: 32 << 10,
	})
	if cfg.Observe != nil {
		s.App.Use(cfg.Observe)
	}
	s.App.Use(s.recoverPanics, s.assignRequestID)
	return s, nil
}

// Mount adds a group of routes (the admin UI, metrics, health) before the
// /v1 routes and the catch-all are installed by Finish.
func (s *Server) Mount(f func(*fiber.App)) { s.hooks = append(s.hooks, f) }

// Finish installs /v1 and the catch-all; call it once, after Mount.
func (s *Server) Finish() *fiber.App {
	for _, h := range s.hooks {
		h(s.App)
	}
	s.mountV1()
	s.App.Use(s.noRoute)
	s.routes = routing.New(s.App.GetRoutes(true))
	s.refuseUnknownMethods()
	return s.App
}

// refuseUnknownMethods answers a method fiber does not know (PROPFIND, FOO)
// as the rest of the API answers a wrong method: fiber would otherwise
// reply a bare text "400 Invalid http method" before any middleware runs,
// without the JSON error body or X-Request-Id (issue 18). It is 405
// method_not_allowed with Allow where the path is served, 404 where it is
// not (docs/decisions.md says why not 501).
func (s *Server) refuseUnknownMethods() {
	known := map[string]bool{}
	for _, m := range s.App.Config().RequestMethods {
		known[m] = true
	}
	srv := s.App.Server()
	next := srv.Handler
	srv.Handler = func(rctx *fasthttp.RequestCtx) {
		if known[string(rctx.Method())] { // no allocation: the compiler keys the map by the bytes
			next(rctx)
			return
		}
		c := s.App.AcquireCtx(rctx)
		defer s.App.ReleaseCtx(c)
		_ = s.errorHandler(c, s.wrongMethod(c))
	}
}

// Public adds /v1 routes served without a key (the OpenAPI document).
func (s *Server) Public(f func(fiber.Router)) { s.public = append(s.public, f) }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }
