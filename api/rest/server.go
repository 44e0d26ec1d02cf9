// Package rest is the /v1 surface over the business core (package api):
// the fiber app, its middleware, the routes derived from the resource
// declarations, and the writing of every answer and error as HTTP.
package rest

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/ratelimit"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/routing"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Config is what the API needs from the appliance's settings: the core's
// (api.Config), and the HTTP surface's own.
type Config struct {
	api.Config
	// RateLimits per minute by plan; a key's own limit overrides its plan's.
	RateLimits map[resource.Plan]int
	// SharedRateLimits keeps the buckets in the database so every process
	// sharing it enforces one limit per key (one small write per request).
	SharedRateLimits bool
	// BodyLimit caps request bodies (DESIGN.md: 1 MiB).
	BodyLimit int
	// ReadTimeout, WriteTimeout and IdleTimeout protect against slow clients.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Observe, when set, runs first on every request (metrics, access log).
	// Errors of the handlers after it reach it unrendered: it must render
	// them with c.App().ErrorHandler to see the final status.
	Observe fiber.Handler
}

// DefaultRateLimits are DESIGN.md's per-minute defaults.
func DefaultRateLimits() map[resource.Plan]int {
	return map[resource.Plan]int{resource.Starter: 120, resource.Growth: 300, resource.Business: 1200}
}

// Server is the running API: the core, served over HTTP.
type Server struct {
	*api.Core
	App     *fiber.App
	Limiter ratelimit.Taker
	cfg     Config
	log     *slog.Logger
	routes  *routing.Table // every route the app serves, for 404 and 405
	hooks   []func(*fiber.App)
	public  []func(fiber.Router)
	large   []largeBody
}

// New builds the core and its app on an open, migrated database.
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
	core, err := api.New(db, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Server{Core: core, cfg: cfg, log: cfg.Logger}
	limit := cfg.BodyLimit
	for _, e := range api.Routes() {
		if e.Op.MaxBody > 0 {
			s.AllowBody(e.Method, e.Path, e.Op.MaxBody)
			limit = max(limit, e.Op.MaxBody)
		}
	}
	s.Limiter = ratelimit.New()
	if cfg.SharedRateLimits {
		s.Limiter = ratelimit.NewShared(db, cfg.Logger)
	}
	s.App = fiber.New(fiber.Config{
		AppName:               "ledgerbase",
		BodyLimit:             limit, // the routes' own limits; limitBody holds the others to cfg.BodyLimit
		ErrorHandler:          s.errorHandler,
		DisableStartupMessage: true,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		// Writes are JSON we decode ourselves; keep fasthttp from copying twice.
		ReadBufferSize: 8192,
		// A page of a list leaves in one write call rather than two
		// (docs/performance.md); the buffer is pooled.
		WriteBufferSize: 32 << 10,
	})
	if cfg.Observe != nil {
		s.App.Use(cfg.Observe)
	}
	s.App.Use(s.recoverPanics, s.assignRequestID, s.limitBody)
	return s, nil
}

// largeBody is a route whose bodies may exceed the server's limit.
type largeBody struct {
	method, pattern string
	limit           int
}

// AllowBody lets the bodies of method at the fiber pattern be up to limit
// bytes, beyond the server's limit (a logo upload); call it before Finish,
// with at most the largest limit a declaration names (Op.MaxBody).
func (s *Server) AllowBody(method, pattern string, limit int) {
	s.large = append(s.large, largeBody{method, pattern, limit})
}

// limitBody answers 413 to a body over the server's limit, unless its
// route allows more: the app reads up to the largest allowance.
func (s *Server) limitBody(c *fiber.Ctx) error {
	n := len(c.Request().Body())
	if n <= s.cfg.BodyLimit {
		return c.Next()
	}
	for _, l := range s.large {
		if n <= l.limit && c.Method() == l.method && routing.Match(l.pattern, c.Path()) {
			return c.Next()
		}
	}
	return fiber.ErrRequestEntityTooLarge
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
	s.App.Use(s.wrongMethod)
	s.routes = routing.New(s.App.GetRoutes(true))
	s.refuseUnknownMethods()
	return s.App
}

// refuseUnknownMethods answers a method fiber does not know (PROPFIND) as
// any wrong method, 405 or 404 with the JSON error body: fiber would reply
// a bare "400 Invalid http method" before any middleware runs.
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
