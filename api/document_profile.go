package api

import (
	"cmp"
	"context"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/document"
	"github.com/ledgerbase/ledgerbase/ent"
)

// companyProfile is what the workspace's company profile puts on every
// document: the seller, its logo, default language, payment instructions
// and footer. A profile never saved leaves the workspace's name as the seller.
func (c *Core) companyProfile(ctx context.Context, ws access.Workspace) (document.Profile, error) {
	co, err := c.Company(ctx, ws.ID)
	if err != nil {
		return document.Profile{}, err
	}
	if co.LegalName == "" && ws.Name == "" { // a principal that knows only the id (the command line's)
		w, err := c.DB.Reader.Workspace.Get(ctx, ws.ID)
		if err != nil && !ent.IsNotFound(err) {
			return document.Profile{}, apierr.Internal(err)
		}
		if w != nil {
			ws.Name = w.Name
		}
	}
	p := document.Profile{
		Seller: document.Party{Name: cmp.Or(co.LegalName, ws.Name), Address: co.Address, Country: co.Country,
			VATNumber: co.VatNumber, RegistrationNumber: co.RegistrationNumber, Email: co.Email, Phone: co.Phone, Website: co.Website},
		Lang:                document.Lang(co.DefaultLanguage),
		PaymentInstructions: co.PaymentInstructions,
		Footer:              co.Footer,
	}
	if len(co.Logo) > 0 {
		p.Logo = &document.Logo{MediaType: co.LogoMediaType, Data: co.Logo}
	}
	return p, nil
}
