package rest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

func TestKeysThatDoNotAuthenticateGet401(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	expired := ws.NewKey(t, access.KeySpec{ExpiresIn: time.Millisecond})
	revoked := ws.NewKey(t, access.KeySpec{Name: "to revoke"})
	k, err := env.DB.Writer.APIKey.Query().All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range k {
		if key.Name == "to revoke" && key.WorkspaceID == ws.ID {
			if err := access.RevokeKey(t.Context(), env.DB.Writer, key.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(5 * time.Millisecond)
	cases := []struct {
		name, header, code string
	}{
		{"missing", "", "missing_api_key"},
		{"malformed scheme", "Basic abc", "invalid_api_key"},
		{"malformed secret", "Bearer not-a-key", "invalid_api_key"},
		{"unknown", "Bearer lb_0000000000000000000000000000000000000000", "invalid_api_key"},
		{"expired", "Bearer " + expired, "expired_api_key"},
		{"revoked", "Bearer " + revoked, "revoked_api_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r *apitest.Response
			if c.header == "" {
				r = env.Get(t, "/v1/invoices", "")
			} else {
				r = env.Do(t, "GET", "/v1/invoices", "", nil, "Authorization", c.header)
			}
			r.WantError(t, http.StatusUnauthorized, c.code)
		})
	}
	env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, http.StatusOK)
}

func TestClientRequestIDIsKeptAndInsaneOneReplaced(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	r := env.Do(t, "GET", "/v1/me", "", nil, "X-Request-Id", "abc-123")
	if got := r.WantError(t, 401, "missing_api_key")["request_id"]; got != "abc-123" {
		t.Fatalf("request id %v", got)
	}
	r = env.Do(t, "GET", "/v1/me", "", nil, "X-Request-Id", "<script>")
	if got := r.WantError(t, 401, "missing_api_key")["request_id"]; got == "<script>" {
		t.Fatal("an insane request id was echoed")
	}
}
