package rest_test

import (
	"crypto/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// randomSecret is a well-formed secret that names no key.
func randomSecret() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 40)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return access.SecretPrefix + string(b)
}

// A flood of made-up secrets must not push a real key out of the cache:
// before, the cache was a map emptied whenever it passed 100,000 entries,
// so 100,001 wrong secrets sent every key back to the database.
func TestAFloodOfInvalidKeysDoesNotEvictAValidOne(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	env.Get(t, "/v1/me", ws.Key).WantStatus(t, 200)
	if !env.Server.Auth.Cached(ws.Key) {
		t.Fatal("a key just used is not cached")
	}
	auth := env.Server.Auth
	loads := auth.Loads()
	const flood = 100_500
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= flood {
				_, err := auth.AuthenticateAt(t.Context(), "Bearer "+randomSecret(), time.Now())
				if e, ok := apierr.As(err); ok && e.Code == "invalid_api_key" {
					refused.Add(1)
				} else {
					t.Errorf("a made-up secret: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() != flood {
		t.Fatalf("%d of %d made-up secrets refused", refused.Load(), flood)
	}
	if n := auth.Loads() - loads; n < flood {
		t.Fatalf("%d made-up secrets were looked up %d times: the flood did not reach the cache", flood, n)
	}
	if !auth.Cached(ws.Key) {
		t.Fatal("the flood of made-up secrets evicted the valid key from the cache")
	}
	env.Get(t, "/v1/me", ws.Key).WantStatus(t, 200)
}
