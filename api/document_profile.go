package api

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/document"
)

// companyProfile is what the workspace's company profile puts on every
// document: the seller, its logo, default language, payment instructions
// and footer. Without a profile the seller is the workspace's name.
func (c *Core) companyProfile(_ context.Context, ws access.Workspace) (document.Profile, error) {
	return document.Profile{Seller: document.Party{Name: ws.Name}}, nil
}
