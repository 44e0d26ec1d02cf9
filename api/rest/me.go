package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// me answers the workspace and key of the caller as a list of one record.
func (s *Server) me(c *fiber.Ctx) error {
	p := Principal(c)
	if err := p.Gate(resource.Me, resource.Read); err != nil {
		return err
	}
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, resource.Me)
	if err != nil {
		return err
	}
	return sendBytes(c)(api.MePage(p, l))
}
