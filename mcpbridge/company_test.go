package mcpbridge_test

import (
	"encoding/base64"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
)

// get_company and update_company reach /v1/company through a real MCP
// client: a zero profile first, a change, a refusal naming its field; a
// viewer's bridge reads the profile but is not offered the change.
func companyProfileThroughTools(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "starter", false, false)
	s := f.stdio(t, ws.Key)
	tools := s.tools(t)
	if tools["get_company"] == nil || tools["update_company"] == nil {
		t.Fatalf("tools: %v", names(tools))
	}
	if p := s.ok(t, "get_company", map[string]any{}); p["legal_name"] != nil || p["updated_at"] != nil {
		t.Fatalf("a profile never saved: %v", p)
	}
	logo := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
	got := s.ok(t, "update_company", map[string]any{"legal_name": "Tooled SARL", "country": "FR", "default_vat_rate_bp": 2000, "logo": logo})
	if got["legal_name"] != "Tooled SARL" || got["country"] != "FR" || got["default_vat_rate_bp"] != float64(2000) || got["logo"] != logo {
		t.Fatalf("update_company answered %v", got)
	}
	if p := s.ok(t, "get_company", map[string]any{}); p["legal_name"] != "Tooled SARL" || p["logo"] != logo {
		t.Fatalf("get_company after the change: %v", p)
	}
	for field, bad := range map[string]any{"country": "XX", "default_currency": "ZZZ", "email": "nobody", "default_language": "de",
		"logo": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not an image"))} {
		if e := s.toolError(t, "update_company", map[string]any{field: bad}, "invalid_request"); e["param"] != field {
			t.Errorf("update_company %s=%v: %v", field, bad, e)
		}
	}
	viewer := f.stdio(t, ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})).tools(t)
	if viewer["get_company"] == nil || viewer["update_company"] != nil {
		t.Fatalf("a viewer's tools: %v", names(viewer))
	}
}
