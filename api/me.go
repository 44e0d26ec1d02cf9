package api

import (
	"encoding/json"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
)

// MeRecord is the one record of GET /v1/me: the caller's workspace and key.
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

// Me is p's record of GET /v1/me.
func Me(p *access.Principal) MeRecord {
	return MeRecord{
		WorkspaceID: p.Workspace.ID, WorkspaceName: p.Workspace.Name, Plan: p.Workspace.Plan.String(),
		CommerceMode: p.Workspace.CommerceMode, CommerceModule: p.Workspace.CommerceModule,
		Key: MeKey{ID: p.Key.ID, Name: p.Key.Name, Role: p.Key.Role, Prefix: p.Key.Prefix, ExpiresAt: access.KeyExpiry(p.Key.ExpiresAt)},
	}
}

// MePage is GET /v1/me's page under l: the caller's record, a list of one.
func MePage(p *access.Principal, l List) ([]byte, error) {
	data := []MeRecord{}
	if l.Offset == 0 {
		data = append(data, Me(p))
	}
	return json.Marshal(map[string]any{"data": data, "meta": listMeta{l.Limit, l.Offset, 1}})
}
