// Package records serves the read side of /v1 for every declared resource:
// one compiled plan per resource (columns, SQL text per dialect) built at
// start, rows scanned into typed buffers and written straight to JSON.
package records

import (
	"context"

	"github.com/maypok86/otter/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Engine reads records.
type Engine struct {
	db    *database.DB
	sc    *shortcut.Set // db's
	plans map[*resource.Resource]*plan
	cache *otter.Cache[string, rendered]   // nil: off
	lists *otter.Cache[string, listAnswer] // nil: off (SetCache)
	off   strategy                         // strategies switched off
	// Refresh, when set, runs before every Get and list of a resource to
	// bring clock-driven states up to date (an expired promotion).
	Refresh func(ctx context.Context, r *resource.Resource, workspaceID string) error
}

func (e *Engine) refresh(ctx context.Context, r *resource.Resource, ws Workspace) error {
	if e.Refresh == nil {
		return nil
	}
	if err := e.Refresh(ctx, r, ws.ID); err != nil {
		return apierr.Internal(err)
	}
	return nil
}

// Workspace is what reads need to know of the caller's workspace.
type Workspace struct {
	ID       string
	Commerce bool // commerce mode and module both on: item reads show product fields
}

// Searches are the search indexes and per-value counts the declarations
// ask for: what their Migrate builds and what `q` and filtered lists read.
func Searches(rs []*resource.Resource) shortcut.Searches {
	var out shortcut.Searches
	for _, r := range rs {
		var counted []string
		for _, f := range r.Filters {
			if f.Type == resource.Boolean || f.Type == resource.Enum {
				counted = append(counted, f.Column)
			}
		}
		if r.Table != "" && (len(r.Search) > 0 || len(counted) > 0) {
			out = append(out, shortcut.Search{Table: r.Table, Columns: r.Search, Few: r.SearchFew, Counted: counted})
		}
	}
	return out
}

// New compiles a plan for every resource that has a table.
func New(db *database.DB, rs []*resource.Resource) (*Engine, error) {
	merged := map[string]shortcut.Search{}
	for _, s := range shortcut.MergeSearches(Searches(rs)) {
		merged[s.Table] = s
	}
	e := &Engine{db: db, sc: shortcut.Of(db), plans: map[*resource.Resource]*plan{}}
	for name, s := range strategies {
		if !db.Uses(name) {
			e.off |= s
		}
	}
	for _, r := range rs {
		if r.Table == "" {
			continue
		}
		p, err := compile(db, r)
		if err != nil {
			return nil, err
		}
		p.search = merged[r.Table]
		e.plans[r] = p
	}
	e.SetCache(DefaultCacheBytes)
	return e, nil
}
