package rest_test

import (
	"net/http"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// Two servers on one database, a key allowed 6 requests a minute: with
// shared buckets the key gets 6 in all; counted per process it gets 6 from
// each server.
func TestSharedRateLimitsHoldAcrossServers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		opts    []apitest.Option
		allowed int
	}{
		{"shared", []apitest.Option{apitest.WithSharedRateLimits()}, 6},
		{"per process", nil, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, b := apitest.Start(t, c.opts...), apitest.Start(t, c.opts...)
			ws := a.Workspace(t, "business", false, false)
			six := 6
			key := ws.NewKey(t, access.KeySpec{RateLimit: &six})
			ok, limited := 0, 0
			for i := 0; i < 14; i++ {
				env := a
				if i%2 == 1 {
					env = b
				}
				r := env.Get(t, "/v1/me", key)
				switch r.Status {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests:
					limited++
					r.WantError(t, 429, "rate_limited")
					if r.Header.Get("Retry-After") == "" || r.Header.Get("RateLimit-Remaining") != "0" {
						t.Fatalf("429 headers: %v", r.Header)
					}
				default:
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
			}
			if ok != c.allowed || limited != 14-c.allowed {
				t.Fatalf("%d allowed and %d limited, want %d allowed", ok, limited, c.allowed)
			}
		})
	}
}
