package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
)

// Authenticator turns a bearer secret into a Principal. A cached lookup is
// used only while Changes reports the number it did when the lookup was
// made, and for at most TTL; Invalidate drops everything at once after
// this process's own change.
type Authenticator struct {
	db  *ent.Client // reads
	w   *ent.Client // last_used_at writes
	TTL time.Duration
	// Changes reports a number that changes after every committed change
	// to keys, roles and workspaces, and whether it is current (else every
	// call reads the key afresh). Nil trusts the cache for TTL.
	Changes func() (gen int64, ok bool)

	// known holds keys found in the database; unknown, apart and smaller,
	// the secrets that name none, so a flood of them evicts only its kind.
	known, unknown *otter.Cache[[sha256.Size]byte, cached]
	epoch          atomic.Int64 // bumped by Invalidate
	loads          atomic.Int64 // database lookups, for tests and metrics
	// lastUsed throttles last_used_at writes to one a minute per key.
	lastUsed sync.Map // key id -> time.Time
}

type cached struct {
	p          *Principal
	err        error
	at         time.Time
	gen, epoch int64
}

// Cache sizes: every key a busy appliance serves fits in known; unknown
// only spares the database a client that repeats one wrong secret.
const (
	KnownKeys   = 10_000
	UnknownKeys = 1_000
)

// NewAuthenticator reads keys with reader and records last use with writer.
func NewAuthenticator(reader, writer *ent.Client) *Authenticator {
	known := otter.Must(&otter.Options[[sha256.Size]byte, cached]{MaximumSize: KnownKeys})
	unknown := otter.Must(&otter.Options[[sha256.Size]byte, cached]{MaximumSize: UnknownKeys})
	return &Authenticator{db: reader, w: writer, TTL: 5 * time.Second, known: known, unknown: unknown}
}

// Invalidate forgets every cached key (after a revoke, a plan or role change).
func (a *Authenticator) Invalidate() {
	a.epoch.Add(1)
	a.known.InvalidateAll()
	a.unknown.InvalidateAll()
}

// Loads is how many times a key was looked up in the database.
func (a *Authenticator) Loads() int64 { return a.loads.Load() }

// Cached reports whether the cache holds a lookup of secret (current or
// not), without counting as a use.
func (a *Authenticator) Cached(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	_, known := a.known.GetEntryQuietly(h)
	_, unknown := a.unknown.GetEntryQuietly(h)
	return known || unknown
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
	gen, current := int64(0), true
	if a.Changes != nil {
		gen, current = a.Changes()
	}
	epoch := a.epoch.Load()
	c, hit := a.known.GetIfPresent(h)
	if !hit {
		c, hit = a.unknown.GetIfPresent(h)
	}
	if !hit || !current || c.gen != gen || c.epoch != epoch || now.Sub(c.at) > a.TTL {
		a.loads.Add(1)
		p, err := a.load(ctx, hex.EncodeToString(h[:]))
		if err != nil && !isAuthError(err) {
			return nil, err // database trouble is not cached
		}
		// gen and epoch were read before the lookup: a change committed
		// meanwhile makes this entry stale at once rather than hide it.
		c = cached{p: p, err: err, at: now, gen: gen, epoch: epoch}
		if err != nil {
			a.unknown.Set(h, c)
		} else {
			a.unknown.Invalidate(h)
			a.known.Set(h, c)
		}
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
		Key: Key{ID: k.ID, Name: k.Name, Role: k.Role, Prefix: k.Prefix, ExpiresAt: KeyExpiry(k.ExpiresAt),
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
