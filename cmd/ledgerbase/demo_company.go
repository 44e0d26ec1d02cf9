package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
)

// demoLogo is the demo company's logo: a small SVG, written here rather
// than fetched.
const demoLogo = `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="64" viewBox="0 0 240 64">
  <rect x="4" y="8" width="48" height="48" rx="10" fill="#1f4e79"/>
  <path d="M16 44 L28 20 L40 44 Z" fill="#ffffff"/>
  <text x="64" y="42" font-family="Helvetica, Arial, sans-serif" font-size="24" font-weight="700" fill="#1f4e79">Demo Company</text>
</svg>
`

// demoCompanyProfile is the demo workspace's company profile.
var demoCompanyProfile = map[string]any{
	"legal_name":                 "Demo Company SAS",
	"address":                    "18 rue des Ateliers\n75011 Paris",
	"country":                    "FR",
	"vat_number":                 "FR40303265045",
	"registration_number":        "RCS Paris 303 265 045",
	"email":                      "billing@demo-company.example",
	"phone":                      "+33 1 84 00 00 00",
	"website":                    "https://demo-company.example",
	"logo":                       writes.LogoURL("image/svg+xml", []byte(demoLogo)),
	"default_currency":           "EUR",
	"default_vat_rate_bp":        2000,
	"default_payment_terms_days": 30,
	"default_language":           "en",
	"payment_instructions":       "Bank transfer to Banque Démo, Paris\nIBAN FR76 3000 6000 0112 3456 7890 189\nBIC AGRIFRPP",
	"footer":                     "Demo Company SAS, capital 10,000 EUR. Thank you for your business.",
}

// demoCompany fills workspace ws's company profile through Core.Write, as
// the admin UI would.
func demoCompany(ctx context.Context, core *api.Core, ws string) error {
	rt, ok := api.FindRoute(resource.Company, resource.Update, "")
	if !ok {
		return fmt.Errorf("demo company: no update of the company profile is declared")
	}
	b, err := json.Marshal(demoCompanyProfile)
	if err != nil {
		return err
	}
	if _, e := core.Write(ctx, api.WriteRequest{Principal: access.System(ws), Route: rt, Body: b, ContentType: api.JSON}); e != nil {
		return fmt.Errorf("demo company: %w", e)
	}
	return nil
}
