package rest

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

type meList struct {
	Data []api.MeRecord `json:"data"`
	Meta listMeta       `json:"meta"`
}

type listMeta struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	Total  int `json:"total"`
}

// me answers the workspace and key of the caller as a list of one record.
func (s *Server) me(c *fiber.Ctx) error {
	p := principal(c)
	if err := p.Gate(resource.Me, resource.Read); err != nil {
		return err
	}
	pg, err := api.ParseList(c.Context().QueryArgs().VisitAll, resource.Me)
	if err != nil {
		return err
	}
	rec := api.Me(p)
	out := meList{Data: []api.MeRecord{}, Meta: listMeta{Limit: pg.Limit, Offset: pg.Offset, Total: 1}}
	if pg.Offset == 0 {
		out.Data = append(out.Data, rec)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, b)
}
