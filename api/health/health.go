// Package health answers orchestrators' probes: /healthz says the process
// lives, /readyz that the database answers and it is not shutting down.
package health

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Probe is the appliance's health state.
type Probe struct {
	ping     func(context.Context) error
	log      *slog.Logger
	draining atomic.Bool
	// Timeout bounds the database check, so a hung database answers 503
	// before the orchestrator's own probe timeout.
	Timeout time.Duration
}

// New builds a probe whose readiness asks ping.
func New(ping func(context.Context) error, log *slog.Logger) *Probe {
	if log == nil {
		log = slog.Default()
	}
	return &Probe{ping: ping, log: log, Timeout: 2 * time.Second}
}

// Drain makes /readyz answer 503 from now on: the process is shutting down
// and load balancers should send new requests elsewhere.
func (p *Probe) Drain() { p.draining.Store(true) }

// Draining reports whether Drain was called.
func (p *Probe) Draining() bool { return p.draining.Load() }

// Mount adds /healthz and /readyz to app.
func (p *Probe) Mount(app *fiber.App) {
	app.Get("/healthz", p.healthz)
	app.Get("/readyz", p.readyz)
}

func (p *Probe) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (p *Probe) readyz(c *fiber.Ctx) error {
	if p.Draining() {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "shutting_down"})
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), p.Timeout)
	defer cancel()
	if err := p.ping(ctx); err != nil {
		// The cause stays in the log: probes are often reachable by more
		// people than the database's address should be.
		p.log.Warn("not ready: database does not answer", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "database_unavailable"})
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
