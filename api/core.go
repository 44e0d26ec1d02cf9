// Package api is the entry to Ledgerbase's business core, whatever the
// transport (/v1, the admin UI, the command line). It knows nothing of
// HTTP: a caller brings a principal and an operation and a body, or a
// list's query, and gets JSON or an *apierr.Error back.
package api

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/clock"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/usage"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Config is what the core needs from the appliance's settings.
type Config struct {
	Logger *slog.Logger
	// KeyCacheTTL is the longest a cached key lookup is used; changes by
	// any process are seen within a second regardless (shortcut.Set.AccessGen).
	KeyCacheTTL time.Duration
	// RecordCacheBytes sizes the render cache of records (records.SetCache):
	// 0 is records.DefaultCacheBytes, negative turns it off.
	RecordCacheBytes int
	// Webhooks are the endpoint URL rules (allow_http, allow_private_networks)
	// checked when an endpoint is saved.
	Webhooks webhooks.Settings
}

// Core is the business core on an open, migrated database: the records'
// reads, every write, the API keys and the traffic they make.
type Core struct {
	DB      *database.DB
	Auth    *access.Authenticator
	Records *records.Engine
	// Clock moves the records whose state follows time (Clock.Run is the
	// periodic tick a serving process runs).
	Clock *clock.Clock
	Usage *usage.Recorder // each key's traffic, for the admin dashboard
	// Webhooks are the endpoint URL rules checked when an endpoint is saved.
	Webhooks webhooks.Settings
	Log      *slog.Logger
	idem     *idempotency.Store
	faults   faultLog // episodes of database faults, logged once each
}

// New opens the core on an open, migrated database.
func New(db *database.DB, cfg Config) (*Core, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := checkWrites(); err != nil {
		return nil, err
	}
	eng, err := records.New(db, resource.All)
	if err != nil {
		return nil, err
	}
	if cfg.RecordCacheBytes != 0 {
		eng.SetCache(cfg.RecordCacheBytes)
	}
	clk := clock.New(db, eng)
	eng.Refresh = clk.Exact // gift cards' and promotions' states are exact when read
	c := &Core{
		DB:       db,
		Clock:    clk,
		Auth:     access.NewAuthenticator(db.Reader, db.Writer),
		Records:  eng,
		Usage:    usage.New(db.Writer),
		Webhooks: cfg.Webhooks,
		Log:      cfg.Logger,
		idem:     idempotency.New(db.Writer),
	}
	// Every process's key, role and workspace changes reach the key cache
	// within a second (database triggers, watched by the DB).
	c.Auth.Changes = shortcut.Of(db).AccessGen
	if cfg.KeyCacheTTL > 0 {
		c.Auth.TTL = cfg.KeyCacheTTL
	}
	return c, nil
}

// checkWrites refuses to start when a declared write has no implementation:
// a declaration must never turn into a route or form that cannot answer.
func checkWrites() error {
	for _, rt := range resource.AllEndpoints() {
		if rt.Op.Kind == resource.List || rt.Op.Kind == resource.Get || rt.Op.Kind == resource.Document {
			continue
		}
		if _, ok := writes.Lookup(rt.Resource, rt.Op); !ok {
			return fmt.Errorf("api: %s %s is declared but api/writes has no implementation of it", rt.Method, rt.Path)
		}
	}
	return nil
}

// Route is one endpoint derived from a declaration.
type Route = resource.Endpoint

// Routes lists every /v1 endpoint of the declarations, in declaration order.
func Routes() []Route { return resource.Endpoints() }

// FindRoute is the declared endpoint of r's operation of kind k (an
// action's name for Action), AdminOnly ones included.
func FindRoute(r *resource.Resource, k resource.OpKind, name string) (Route, bool) {
	for _, rt := range resource.AllEndpoints() {
		if rt.Resource == r && rt.Op.Kind == k && (k != resource.Action || rt.Op.Name == name) {
			return rt, true
		}
	}
	return Route{}, false
}

// WorkspaceOf is the records' view of the caller's workspace.
func WorkspaceOf(p *access.Principal) records.Workspace {
	return records.Workspace{ID: p.Workspace.ID, Commerce: p.Workspace.Commerce()}
}
