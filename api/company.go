package api

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/company"
)

// Company is the workspace's company profile as saved, or a zero profile
// (no id, every field unset) when it never was: never nil, never not found.
func (c *Core) Company(ctx context.Context, workspaceID string) (*ent.Company, error) {
	p, err := c.DB.Reader.Company.Query().Where(company.WorkspaceID(workspaceID)).Only(ctx)
	if ent.IsNotFound(err) {
		return &ent.Company{WorkspaceID: workspaceID}, nil
	}
	if err != nil {
		return nil, apierr.Internal(err)
	}
	return p, nil
}

// Singleton answers the one record of a singleton resource (the company
// profile) as /v1 shows it, for a principal its gate lets read it.
func (c *Core) Singleton(ctx context.Context, r *resource.Resource, workspaceID string) ([]byte, error) {
	if r != resource.Company {
		return nil, apierr.NotFound(r.Singular)
	}
	p, err := c.Company(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return writes.CompanyJSON(p), nil
}
