package api

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// MeRecord is the one record of GET /v1/me.
type MeRecord struct {
	WorkspaceID    string `json:"workspace_id"`
	WorkspaceName  string `json:"workspace_name"`
	Plan           string `json:"plan"`
	CommerceMode   bool   `json:"commerce_mode"`
	CommerceModule bool   `json:"commerce_module"`
	Key            MeKey  `json:"key"`
}

// MeKey describes the calling key.
type MeKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	ExpiresAt *time.Time `json:"expires_at"`
}

type meList struct {
	Data []MeRecord `json:"data"`
	Meta listMeta   `json:"meta"`
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
	pg, err := parsePage(c, resource.Me)
	if err != nil {
		return err
	}
	rec := MeRecord{
		WorkspaceID: p.Workspace.ID, WorkspaceName: p.Workspace.Name, Plan: p.Workspace.Plan.String(),
		CommerceMode: p.Workspace.CommerceMode, CommerceModule: p.Workspace.CommerceModule,
		Key: MeKey{ID: p.Key.ID, Name: p.Key.Name, Role: p.Key.Role, Prefix: p.Key.Prefix, ExpiresAt: access.KeyExpiry(p.Key.ExpiresAt)},
	}
	out := meList{Data: []MeRecord{}, Meta: listMeta{Limit: pg.Limit, Offset: pg.Offset, Total: 1}}
	if pg.Offset == 0 {
		out.Data = append(out.Data, rec)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return sendJSON(c, fiber.StatusOK, b)
}
