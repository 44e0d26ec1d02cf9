package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
)

// Authenticator turns a bearer secret into a Principal. Lookups are cached
// for TTL so the hot path does not touch the database; Invalidate drops the
// cache at once when this process changes a key, role or workspace, and
// TTL bounds how long another process's change takes to be seen.
type Authenticator struct {
	db  *ent.Client // reads
	w   *ent.Client // last_used_at writes
	TTL time.Duration

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cached // by secret hash
	// lastUsed throttles last_used_at writes to one a minute per key.
	lastUsed sync.Map // key id -> time.Time
}

type cached struct {
	p   *Principal
	err error
	at  time.Time
}

// NewAuthenticator reads keys with reader and records last use with writer.
func NewAuthenticator(reader, writer *ent.Client) *Authenticator {
	return &Authenticator{db: reader, w: writer, TTL: 5 * time.Second, cache: map[[sha256.Size]byte]cached{}}
}

// Invalidate forgets every cached key (after a revoke, a plan or role change).
func (a *Authenticator) Invalidate() {
	a.mu.Lock()
	a.cache = map[[sha256.Size]byte]cached{}
	a.mu.Unlock()
}

// Authenticate checks an Authorization header value.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (*Principal, error) {
	return a.AuthenticateAt(ctx, header, time.Now())
}

// AuthenticateAt checks an Authorization header value at time now (the
// caller's clock reading, so a request reads the clock once).
func (a *Authenticator) AuthenticateAt(ctx context.Context, header string, now time.Time) (*Principal, error) {
	if header == "" {
		return nil, errMissing
	}
	scheme, secret, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, apierr.Unauthorized("invalid_api_key", "the Authorization header must be 'Bearer lb_...'")
	}
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return nil, errMissing
	}
	if !WellFormed(secret) {
		return nil, errInvalid
	}
	// The binary hash keys the cache: no hex string per request.
	var buf [64]byte // a well-formed secret fits: no allocation to hash it
	h := sha256.Sum256(append(buf[:0], secret...))
	a.mu.RLock()
	c, hit := a.cache[h]
	a.mu.RUnlock()
	if !hit || now.Sub(c.at) > a.TTL {
		p, err := a.load(ctx, hex.EncodeToString(h[:]))
		if err != nil && !isAuthError(err) {
			return nil, err // database trouble is not cached
		}
		c = cached{p: p, err: err, at: now}
		a.mu.Lock()
		if len(a.cache) > 100_000 { // bound memory under a flood of fake keys
			a.cache = map[[sha256.Size]byte]cached{}
		}
		a.cache[h] = c
		a.mu.Unlock()
	}
	if c.err != nil {
		return nil, c.err
	}
	if err := c.p.Key.check(now); err != nil {
		return nil, err
	}
	a.touch(c.p.Key.ID, now)
	return c.p, nil
}

func isAuthError(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Status == 401
}

func (a *Authenticator) load(ctx context.Context, hash string) (*Principal, error) {
	k, err := a.db.APIKey.Query().Where(apikey.SecretHash(hash)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errInvalid
	}
	if err != nil {
		return nil, apierr.Unavailable(err)
	}
	ws, err := a.db.Workspace.Get(ctx, k.WorkspaceID)
	if err != nil {
		return nil, apierr.Unavailable(err)
	}
	p := &Principal{
		Workspace: WorkspaceOf(ws),
		Key: Key{ID: k.ID, Name: k.Name, Role: k.Role, Prefix: k.Prefix, ExpiresAt: k.ExpiresAt,
			RevokedAt: k.RevokedAt, RateLimit: k.RateLimit},
	}
	if k.Role != RoleAdmin && k.Role != RoleViewer {
		r, err := a.db.Role.Query().Where(role.WorkspaceID(k.WorkspaceID), role.Name(k.Role)).Only(ctx)
		switch {
		case ent.IsNotFound(err):
			p.Grants = map[string]resource.Access{} // a deleted role grants nothing
		case err != nil:
			return nil, apierr.Unavailable(err)
		default:
			p.Grants = ParseGrants(r.Grants)
		}
	}
	return p, nil
}

// WorkspaceOf converts a stored workspace.
func WorkspaceOf(ws *ent.Workspace) Workspace {
	plan, _ := resource.ParsePlan(string(ws.Plan))
	return Workspace{ID: ws.ID, Name: ws.Name, Plan: plan, CommerceMode: ws.CommerceMode, CommerceModule: ws.CommerceModule}
}

// ParseGrants reads a stored role matrix; unknown values grant nothing.
func ParseGrants(g map[string]string) map[string]resource.Access {
	out := make(map[string]resource.Access, len(g))
	for k, v := range g {
		if acc, ok := resource.ParseAccess(v); ok {
			out[k] = acc
		}
	}
	return out
}

func (a *Authenticator) touch(keyID string, now time.Time) {
	if v, ok := a.lastUsed.Load(keyID); ok && now.Sub(v.(time.Time)) < time.Minute {
		return
	}
	a.lastUsed.Store(keyID, now)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.w.APIKey.UpdateOneID(keyID).SetLastUsedAt(now.UTC()).Exec(ctx)
	}()
}
