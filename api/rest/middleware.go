package rest

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
)

// The RateLimit-* headers as fasthttp writes them (it normalizes names):
// set in that form, they skip the normalizing copy.
var (
	hdrLimit     = []byte("Ratelimit-Limit")
	hdrRemaining = []byte("Ratelimit-Remaining")
	hdrReset     = []byte("Ratelimit-Reset")
)

// recoverPanics turns a panic into a 500 that reveals nothing; the stack goes to the log.
func (s *Server) recoverPanics(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = apierr.Internal(fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	return c.Next()
}

func (s *Server) assignRequestID(c *fiber.Ctx) error {
	requestID(c)
	return c.Next()
}

// authenticate resolves the bearer key, then spends a rate-limit token.
func (s *Server) authenticate(c *fiber.Ctx) error {
	now := Arrival(c)
	p, err := s.Auth.AuthenticateAt(c.UserContext(), c.Get(fiber.HeaderAuthorization), now)
	if err != nil {
		// A typo in the path says so even without a key: the routes are public knowledge.
		if len(s.routes.Allowed(c.Path())) == 0 {
			return apierr.RouteNotFound(c.Method(), c.Path())
		}
		if e, ok := apierr.As(err); ok && e.Status == 401 {
			exchangeOf(c).authFailure = e.Code
		}
		return err
	}
	exchangeOf(c).principal = p
	err = s.limitAndServe(c, p, now)
	if s.Usage != nil {
		status := c.Response().StatusCode()
		if err != nil {
			status = s.toAPIError(err).Status
		}
		s.Usage.Record(p.Workspace.ID, p.Key.ID, status, now) // counted in the hour it arrived
	}
	return err
}

// limitAndServe spends a rate-limit token of the key, then serves the request.
func (s *Server) limitAndServe(c *fiber.Ctx, p *access.Principal, now time.Time) error {
	limit := s.cfg.RateLimits[p.Workspace.Plan]
	if p.Key.RateLimit != nil {
		limit = *p.Key.RateLimit
	}
	r := s.Limiter.Take(p.Key.ID, limit, now)
	if r.Limit > 0 {
		h := &c.Response().Header
		var buf [20]byte
		h.SetCanonical(hdrLimit, strconv.AppendInt(buf[:0], int64(r.Limit), 10))
		h.SetCanonical(hdrRemaining, strconv.AppendInt(buf[:0], int64(r.Remaining), 10))
		h.SetCanonical(hdrReset, strconv.AppendInt(buf[:0], int64(r.Reset), 10))
	}
	if !r.Allowed {
		exchangeOf(c).rateLimited = true
		return apierr.RateLimited(r.RetryAfter)
	}
	return c.Next()
}

// Arrival is when the request was handed to the app. fasthttp's server
// reads the clock then; each further reading (~50 ns on a virtual
// machine's clock) is a percent of a 429.
func Arrival(c *fiber.Ctx) time.Time {
	if at := c.Context().Time(); !at.IsZero() {
		return at
	}
	return time.Now() // a RequestCtx not served by fasthttp's server
}

// Principal is the authenticated caller of c.
func Principal(c *fiber.Ctx) *access.Principal { return exchangeOf(c).principal }

// sendJSON writes a prepared JSON body.
func sendJSON(c *fiber.Ctx, status int, b []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(b)
}
