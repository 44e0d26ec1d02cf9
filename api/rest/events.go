package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// GET /v1/events and /v1/events/{id}: the workspace's change log, read by
// the core (api.Core.Events).

func (s *Server) getEvent(c *fiber.Ctx) error {
	return sendBytes(c)(s.Event(c.UserContext(), Principal(c), c.Params("id")))
}

func (s *Server) listEvents(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, resource.Events)
	if err != nil {
		return err
	}
	return sendBytes(c)(s.Events(c.UserContext(), Principal(c), l))
}
