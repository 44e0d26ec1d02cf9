package rest

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/ent"
)

// /v1/webhook-endpoints: where a workspace's events are pushed, managed by
// admin keys only (api.ManageEndpoints); the core reads and writes them
// (api/endpoints.go).

func (s *Server) mountWebhooks(v1 fiber.Router) {
	g := v1.Group("/webhook-endpoints", adminOnly)
	g.Post("/", s.createEndpoint)
	g.Get("/", s.listEndpoints)
	g.Get("/:id", s.getEndpoint)
	g.Patch("/:id", s.updateEndpoint)
	g.Delete("/:id", s.deleteEndpoint)
	g.Post("/:id/rotate-secret", s.rotateSecret)
	g.Get("/:id/deliveries", s.listDeliveries)
	g.Post("/:id/deliveries/:delivery_id/retry", s.retryDelivery)
}

func adminOnly(c *fiber.Ctx) error {
	if err := api.ManageEndpoints(principal(c)); err != nil {
		return err
	}
	return c.Next()
}

// keyedWrite runs an endpoint write through the core's Write, in one
// transaction under the POST's Idempotency-Key, like every POST write: a
// retry replays the first answer, secret included, since a client that
// lost that answer has no other way to learn the secret.
func (s *Server) keyedWrite(c *fiber.Ctx, do func(ctx context.Context, tx *ent.Tx) (int, any, error)) error {
	w := api.WriteRequest{
		Principal: principal(c), Route: api.Route{Method: c.Method(), Path: c.Route().Path},
		Body: c.Body(), RequestID: requestID(c), Do: do,
	}
	res, e := s.Write(c.UserContext(), s.keyed(c, w))
	return s.send(c, res, e)
}

func (s *Server) createEndpoint(c *fiber.Ctx) error {
	in, err := s.EndpointBody(c.UserContext(), c.Get(fiber.HeaderContentType), c.Body(), true)
	if err != nil {
		return err
	}
	return s.keyedWrite(c, api.CreateEndpoint(principal(c), in))
}

func (s *Server) getEndpoint(c *fiber.Ctx) error {
	return sendBytes(c)(s.Endpoint(c.UserContext(), principal(c), c.Params("id")))
}

func (s *Server) listEndpoints(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.Endpoints(c.UserContext(), principal(c), l))
}

func (s *Server) updateEndpoint(c *fiber.Ctx) error {
	in, err := s.EndpointBody(c.UserContext(), c.Get(fiber.HeaderContentType), c.Body(), false)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.UpdateEndpoint(c.UserContext(), principal(c), c.Params("id"), in))
}

func (s *Server) deleteEndpoint(c *fiber.Ctx) error {
	if err := api.NoFields(c.Get(fiber.HeaderContentType), c.Body()); err != nil {
		return err
	}
	return sendBytes(c)(s.DeleteEndpoint(c.UserContext(), principal(c), c.Params("id")))
}

func (s *Server) rotateSecret(c *fiber.Ctx) error {
	if err := api.NoFields(c.Get(fiber.HeaderContentType), c.Body()); err != nil {
		return err
	}
	return s.keyedWrite(c, api.RotateSecret(principal(c), c.Params("id")))
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.Deliveries(c.UserContext(), principal(c), c.Params("id"), l))
}

// retryDelivery ("send again") makes a delivery due now, whatever its state.
func (s *Server) retryDelivery(c *fiber.Ctx) error {
	if err := api.NoFields(c.Get(fiber.HeaderContentType), c.Body()); err != nil {
		return err
	}
	return sendBytes(c)(s.RetryDelivery(c.UserContext(), principal(c), c.Params("id"), c.Params("delivery_id")))
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
