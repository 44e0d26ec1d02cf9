package api

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/document"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Document is record id of resource (its /v1 name: invoices, quotes,
// credit-notes, sales-orders, shipments) as the document a business sends,
// in lang ("" picks the client's preferred_language, then the company's
// default_language, then en; another is a 400 naming lang). It reads as a
// GET of the record does: the same gate, the same workspace scope.
func (c *Core) Document(ctx context.Context, p *access.Principal, res, id, lang string) (*document.Doc, error) {
	r := resource.ByName(res)
	if _, ok := document.Kinds[r]; !ok {
		return nil, apierr.NotFound("document")
	}
	if err := p.Gate(r, resource.Read); err != nil {
		return nil, err
	}
	l, err := document.ParseLang(lang)
	if err != nil {
		return nil, err
	}
	prof, err := c.companyProfile(ctx, p.Workspace)
	if err != nil {
		return nil, err
	}
	return document.Build(ctx, recordSource{c.Records, c.DB, WorkspaceOf(p)}, r, id, l, prof)
}

// recordSource reads a document's records through the read side, in one
// workspace. The records a document is made of (its client, items, the
// quote it follows) are part of reading it: they take the document's gate.
type recordSource struct {
	e  *records.Engine
	db *database.DB
	ws records.Workspace
}

func (s recordSource) Many(ctx context.Context, r *resource.Resource, ids []string) ([][]byte, error) {
	return s.e.RenderMany(ctx, s.db.ReadPool, r, s.ws, ids)
}

func (s recordSource) Get(ctx context.Context, r *resource.Resource, id string) ([]byte, error) {
	return s.e.Get(ctx, r, s.ws, id, "")
}

func (s recordSource) Children(ctx context.Context, r *resource.Resource, parentID string) ([]byte, error) {
	return s.e.List(ctx, r, s.ws, records.Page{Limit: MaxLimit, ParentID: parentID})
}
