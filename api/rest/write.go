package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
)

// write is the one handler of every POST, PATCH and DELETE of the
// declarations: the request as the core's Write takes it, under its
// Idempotency-Key when a POST has one.
func (s *Server) write(rt api.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w := api.WriteRequest{
			Principal: Principal(c), Route: rt, ID: c.Params("id"),
			Body: c.Body(), ContentType: c.Get(fiber.HeaderContentType), RequestID: requestID(c),
		}
		if rt.Resource.Parent != nil && rt.Resource.Parent.IDParam != "" {
			w.ChildID = c.Params(rt.Resource.Parent.IDParam)
		}
		res, e := s.Write(c.UserContext(), s.keyed(c, w))
		return s.send(c, res, e)
	}
}

// keyed puts w under the request's Idempotency-Key when a POST has one,
// identified by its path and body.
func (s *Server) keyed(c *fiber.Ctx, w api.WriteRequest) api.WriteRequest {
	if key := c.Get(idempotency.Header); key != "" && c.Method() == fiber.MethodPost {
		w.Key, w.Target = key, c.Path()
	}
	return w
}

// send writes a write's answer, or its refusal.
func (s *Server) send(c *fiber.Ctx, res api.Result, e *apierr.Error) error {
	if res.Replayed {
		c.Set(idempotency.ReplayedHeader, "true")
	}
	if e != nil {
		return e
	}
	return sendJSON(c, res.Status, res.Body)
}
