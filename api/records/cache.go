package records

import (
	"context"

	"github.com/maypok86/otter/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// The render cache keeps the JSON of records that depend on their own row
// alone (no embeds), checked on every read against the row's updated_at,
// which every write sets through ent. An entry checked at its table's
// current version (shortcut.Set.Version) is served without touching the row.
type rendered struct {
	version string
	json    []byte
	ws      string // the workspace the record belongs to
	checked int64  // data version the row was last seen at; noVersion: unknown
}

// noVersion is never a data version.
const noVersion = -1

// DefaultCacheBytes is the render cache's default budget.
const DefaultCacheBytes = 16 << 20

// SetCache sizes the render cache, and the list answers' (ids and totals)
// at half of it; 0 or less turns both off.
func (e *Engine) SetCache(maxBytes int) {
	if maxBytes <= 0 {
		e.cache, e.lists = nil, nil
		return
	}
	lists, err := otter.New(&otter.Options[string, listAnswer]{
		MaximumWeight: uint64(maxBytes / 2),
		Weigher: func(k string, v listAnswer) uint32 {
			n := len(k) + 24*len(v.ids) + 80
			for _, id := range v.ids {
				n += len(id)
			}
			return uint32(n)
		},
	})
	if err != nil { // only for contradictory options, which these are not
		panic(err)
	}
	e.lists = lists
	c, err := otter.New(&otter.Options[string, rendered]{
		MaximumWeight: uint64(maxBytes),
		// The entry's bytes plus its key, version and bookkeeping.
		Weigher: func(k string, v rendered) uint32 { return uint32(len(k) + len(v.version) + cap(v.json) + 96) },
	})
	if err != nil { // only for contradictory options, which these are not
		panic(err)
	}
	e.cache = c
}

// cacheKey names a record's rendering: products of commerce and
// non-commerce workspaces render differently.
func (p *plan) cacheKey(ws Workspace, id string) string {
	if !p.commerceSensitive {
		return id
	}
	if ws.Commerce {
		return id + "\x00c"
	}
	return id + "\x00n"
}

func (e *Engine) cached(p *plan, ws Workspace, id, version string) ([]byte, bool) {
	v, ok := e.cache.GetIfPresent(p.cacheKey(ws, id))
	if !ok || v.version != version {
		return nil, false
	}
	return v.json, true
}

// unchanged is the cached record id of ws if nothing was committed since
// it was last checked, at data version dv.
func (e *Engine) unchanged(p *plan, ws Workspace, id string, dv int64) ([]byte, bool) {
	v, ok := e.cache.GetIfPresent(p.cacheKey(ws, id))
	if !ok || v.checked != dv || v.ws != ws.ID {
		return nil, false
	}
	return v.json, true
}

// remember caches b, seen at data version dv (a reading taken before the
// row was read; noVersion if none); b is clipped so that a caller's append
// copies it.
func (e *Engine) remember(p *plan, ws Workspace, id, version string, b []byte, dv int64) []byte {
	b = b[:len(b):len(b)]
	e.cache.Set(p.cacheKey(ws, id), rendered{version: version, json: b, ws: ws.ID, checked: dv})
	return b
}

// pageCached appends the records of q — which selects p.keys — using the
// render cache: only rows missing from it, or changed since they were
// cached, are read in full, with one query. ids are the page's, unless a
// row was deleted between the two queries.
func (e *Engine) pageCached(ctx context.Context, p *plan, ws Workspace, parentID, q string, args []any, b []byte, dv int64) ([]byte, []string, error) {
	ids := []string{}
	var missing []string
	var parts [][]byte // nil where the cache has no current rendering
	var id, ver string
	err := database.EachRow(ctx, e.db.ReadPool, e.db.Rebind(q), args, []any{&id, &ver}, func() {
		j, ok := e.cached(p, ws, id, ver)
		if !ok {
			missing = append(missing, id)
		} else if dv != noVersion {
			e.remember(p, ws, id, ver, j, dv)
		}
		ids, parts = append(ids, id), append(parts, j)
	})
	if err != nil {
		return nil, nil, apierr.Internal(err)
	}
	if len(missing) > 0 {
		all, err := e.readMissing(ctx, p, ws, parentID, ids, parts, missing, dv)
		if err != nil {
			return nil, nil, err
		}
		if !all {
			ids = nil // deleted since the page was read; left out
		}
	}
	return joinParts(b, parts), ids, nil
}

// readMissing reads the records missing by id, keeps them as checked at
// dv, and puts each in the nil part of parts (one per id of ids) it fills;
// all is false when one is gone, its part left nil.
func (e *Engine) readMissing(ctx context.Context, p *plan, ws Workspace, parentID string, ids []string, parts [][]byte, missing []string, dv int64) (all bool, err error) {
	s, err := e.byID(ctx, e.db.ReadPool, p, ws, parentID, missing)
	if err != nil {
		return false, err
	}
	fresh := make(map[string][]byte, len(s.ids))
	for i, d := range s.rows {
		fresh[s.ids[i]] = e.remember(p, ws, s.ids[i], p.versionOf(d), p.encode(make([]byte, 0, 1024), ws, s, i), dv)
	}
	all = true
	for i, id := range ids {
		if parts[i] == nil {
			parts[i] = fresh[id]
			all = all && parts[i] != nil
		}
	}
	return all, nil
}

// pageUnchanged appends the records of a page when every one of them is
// cached, was checked at version dv, and nothing was committed since; ids
// are nil, and b untouched, when one is not (pageCached then reads which
// changed). The page's ids are ids when the search read them, else those
// idsSQL selects from the index alone, in the order of its ORDER BY.
func (e *Engine) pageUnchanged(ctx context.Context, p *plan, ws Workspace, parentID string, ids []string, idsSQL string, args []any, b []byte, dv int64) ([]byte, []string, error) {
	if ids == nil {
		var err error
		if ids, err = database.QueryStrings(ctx, e.db.ReadPool, e.db.Rebind(idsSQL), args...); err != nil {
			return nil, nil, apierr.Internal(err)
		}
	}
	out, ok, _, err := e.rowsAt(ctx, p, ws, parentID, ids, b, dv, false)
	if err != nil || !ok {
		return b, nil, err
	}
	// The ids must come from the same state as the records: nothing may
	// have been committed while they were read either.
	if v, err := e.version(ctx, p, ws); err != nil || v != dv {
		return b, nil, err
	}
	if ids == nil {
		ids = []string{}
	}
	return out, ids, nil
}

// rowsAt appends the records ids: those the render cache holds checked at
// version dv and, with fetch, the others read by id and kept as checked at
// dv (read: the caller must then check that dv still holds). ok is false,
// and b untouched, when a record is not cached (without fetch) or gone.
func (e *Engine) rowsAt(ctx context.Context, p *plan, ws Workspace, parentID string, ids []string, b []byte, dv int64, fetch bool) (out []byte, ok, read bool, err error) {
	parts := make([][]byte, len(ids))
	var missing []string
	for i, id := range ids {
		if j, ok := e.unchanged(p, ws, id, dv); ok {
			parts[i] = j
		} else if !fetch {
			return b, false, false, nil
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		if all, err := e.readMissing(ctx, p, ws, parentID, ids, parts, missing, dv); err != nil || !all {
			return b, false, true, err
		}
	}
	return joinParts(b, parts), true, len(missing) > 0, nil
}

// version (strategy unchangedPages) is the version of p's table in ws
// that cached records are checked at, or noVersion where none is kept.
func (e *Engine) version(ctx context.Context, p *plan, ws Workspace) (int64, error) {
	if !e.uses(unchangedPages) || !p.cacheable || e.cache == nil {
		return noVersion, nil
	}
	v, ok, err := e.sc.Version(ctx, ws.ID, p.r.Table)
	if err != nil {
		return noVersion, apierr.Internal(err)
	}
	if !ok {
		return noVersion, nil
	}
	return v, nil
}
