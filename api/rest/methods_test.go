package rest_test

import (
	"net/http"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// Issue 18 item 5: a method the server does not know (PROPFIND, FOO, a
// lower-case get) is answered like any other wrong method — 405
// method_not_allowed with Allow where the path is served, 404
// route_not_found where it is not — in the JSON error body with
// X-Request-Id, with or without a key. fasthttp/fiber used to answer a
// bare text "400 Invalid http method" before any middleware ran.
func TestUnknownMethodsGetTheJSONErrorBody(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	cases := []struct{ method, path, allow string }{
		{"PROPFIND", "/v1/clients", "GET, HEAD, POST"},
		{"FOO", "/v1/clients/cli_x", "GET, HEAD, PATCH"},
		{"MKCOL", "/v1/me", "GET, HEAD"},
		{"get", "/v1/returns", "GET, HEAD"},
		{"PURGE", "/v1/openapi.json", "GET, HEAD"}, // a route outside the /v1 table
	}
	for _, key := range []string{ws.Key, ""} {
		for _, c := range cases {
			r := env.Do(t, c.method, c.path, key, nil)
			r.WantError(t, http.StatusMethodNotAllowed, "method_not_allowed")
			if r.Header.Get("Allow") != c.allow {
				t.Fatalf("%s %s: Allow %q, want %q", c.method, c.path, r.Header.Get("Allow"), c.allow)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("%s %s: Content-Type %q", c.method, c.path, ct)
			}
		}
		env.Do(t, "PROPFIND", "/v1/nope", key, nil).WantError(t, http.StatusNotFound, "route_not_found")
		env.Do(t, "FOO", "/nope", key, nil).WantError(t, http.StatusNotFound, "route_not_found")
	}
	// A client's own request id is kept here too.
	r := env.Do(t, "PROPFIND", "/v1/clients", "", nil, "X-Request-Id", "trace-123")
	if e := r.WantError(t, http.StatusMethodNotAllowed, "method_not_allowed"); e["request_id"] != "trace-123" {
		t.Fatalf("request_id %v, want the client's trace-123", e["request_id"])
	}
}
