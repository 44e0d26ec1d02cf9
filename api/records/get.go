package records

import (
	"context"
	"database/sql"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Get answers one record as JSON. parentID scopes sub-resources.
func (e *Engine) Get(ctx context.Context, r *resource.Resource, ws Workspace, id, parentID string) ([]byte, error) {
	if err := e.refresh(ctx, r, ws); err != nil {
		return nil, err
	}
	p := e.plans[r]
	args := p.args(ws, parentID, id)
	if !p.cacheable || e.cache == nil {
		_, b, err := e.readOne(ctx, e.db.ReadPool, p, ws, p.getSQL, args)
		return b, err
	}
	// Read before the row, so an entry is never marked checked at a version
	// newer than the row it holds.
	dv := int64(noVersion)
	if parentID == "" {
		var err error
		if dv, err = e.version(ctx, p, ws); err != nil {
			return nil, err
		}
		if b, ok := e.unchanged(p, ws, id, dv); ok && dv != noVersion {
			return b, nil
		}
	}
	var got, ver string
	err := e.db.ReadPool.QueryRowContext(ctx, p.versionSQL, args...).Scan(&got, &ver)
	if err == sql.ErrNoRows {
		return nil, apierr.NotFound(r.Singular)
	}
	if err != nil {
		return nil, apierr.Internal(err)
	}
	// got, not id: a key kept in the cache must not share memory with the
	// request (fiber's params point into a reused buffer).
	if b, ok := e.cached(p, ws, got, ver); ok {
		if dv != noVersion {
			e.remember(p, ws, got, ver, b, dv)
		}
		return b, nil
	}
	s, b, err := e.readOne(ctx, e.db.ReadPool, p, ws, p.getSQL, args)
	if err != nil {
		return nil, err
	}
	return e.remember(p, ws, s.ids[0], p.versionOf(s.rows[0]), b, dv), nil
}

// Render is one record read through qr: inside a write's transaction, as
// the write will commit it. It is not cached: the transaction may still fail.
func (e *Engine) Render(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, id, parentID string) ([]byte, error) {
	p := e.plans[r]
	_, b, err := e.readOne(ctx, qr, p, ws, p.getSQL, p.args(ws, parentID, id))
	return b, err
}

// RenderUnscoped is Render of a record that may be outside its resource's
// Scope: a write that moves a record out of its lists (archive) still
// answers with the record it wrote.
func (e *Engine) RenderUnscoped(ctx context.Context, qr Querier, r *resource.Resource, ws Workspace, id string) ([]byte, error) {
	p := e.plans[r]
	_, b, err := e.readOne(ctx, qr, p, ws, p.anySQL, []any{ws.ID, id})
	return b, err
}

// readOne reads and encodes the record that q selects with args.
func (e *Engine) readOne(ctx context.Context, qr Querier, p *plan, ws Workspace, q string, args []any) (*scanned, []byte, error) {
	s, err := e.query(ctx, qr, p, ws, q, args)
	if err != nil {
		return nil, nil, err
	}
	if len(s.rows) == 0 {
		return nil, nil, apierr.NotFound(p.r.Singular)
	}
	return s, p.encode(make([]byte, 0, 1024), ws, s, 0), nil
}

// byID reads the full rows of ids (any order; missing ids are absent).
func (e *Engine) byID(ctx context.Context, qr Querier, p *plan, ws Workspace, parentID string, ids []string) (*scanned, error) {
	q := "SELECT " + p.selects + " FROM " + p.r.Table + " t WHERE " + p.where + " AND t.id IN (" + marks(len(ids)) + ")"
	return e.query(ctx, qr, p, ws, q, p.args(ws, parentID, ids...))
}

// Exists reports whether the workspace has a record of r with this id
// (parents of sub-resources must exist before their children are listed).
func (e *Engine) Exists(ctx context.Context, r *resource.Resource, ws Workspace, id string) (bool, error) {
	q := e.db.Rebind("SELECT 1 FROM " + r.Table + " t WHERE " + e.plans[r].where + " AND t.id = ?")
	var one int
	err := e.db.ReadPool.QueryRowContext(ctx, q, ws.ID, id).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, apierr.Internal(err)
	}
	return true, nil
}
