package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
)

// /v1/webhook-endpoints: where a workspace's events are pushed, managed by
// admin keys only (api.ManageEndpoints); the core reads and writes them
// (api/endpoints.go).

func (s *Server) mountWebhooks(v1 fiber.Router) {
	g := v1.Group("/webhook-endpoints", adminOnly)
	g.Post("/", s.configure(api.CreateEndpoint, true))
	g.Get("/", s.listEndpoints)
	g.Get("/:id", s.getEndpoint)
	g.Patch("/:id", s.configure(api.UpdateEndpoint, false))
	g.Delete("/:id", s.configure(api.DeleteEndpoint, false))
	g.Post("/:id/rotate-secret", s.configure(api.RotateSecret, true))
	g.Get("/:id/deliveries", s.listDeliveries)
	// "Send again" takes no Idempotency-Key: each call sends again.
	g.Post("/:id/deliveries/:delivery_id/retry", s.configure(api.RetryDelivery, false))
}

func adminOnly(c *fiber.Ctx) error {
	if err := api.ManageEndpoints(Principal(c)); err != nil {
		return err
	}
	return c.Next()
}

// configure serves the configuration write op on the endpoint :id (and
// its delivery :delivery_id) through the core's Write, under the POST's
// Idempotency-Key (a retry replays the first answer, secret included).
func (s *Server) configure(op api.ConfigOp, keyed bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w := api.WriteRequest{
			Principal: Principal(c), Config: op, ID: c.Params("id"), ChildID: c.Params("delivery_id"),
			Body: c.Body(), ContentType: c.Get(fiber.HeaderContentType), RequestID: requestID(c),
		}
		if keyed {
			w = s.keyed(c, w)
		}
		res, e := s.Write(c.UserContext(), w)
		return s.send(c, res, e)
	}
}

func (s *Server) getEndpoint(c *fiber.Ctx) error {
	return sendBytes(c)(s.Endpoint(c.UserContext(), Principal(c), c.Params("id")))
}

func (s *Server) listEndpoints(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.Endpoints(c.UserContext(), Principal(c), l))
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.Deliveries(c.UserContext(), Principal(c), c.Params("id"), l))
}

// sendBytes answers a read's JSON with 200, or its error.
func sendBytes(c *fiber.Ctx) func(b []byte, err error) error {
	return func(b []byte, err error) error {
		if err != nil {
			return err
		}
		return sendJSON(c, fiber.StatusOK, b)
	}
}
