package web

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bojanz/currency"
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	amounts "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
)

// CompanyPath is where the Settings page's company profile form posts.
const CompanyPath = Base + "/w/:ws/settings/company"

// CompanyBodyLimit is the largest body CompanyPath takes: a logo of
// resource.LogoMaxBytes and the other fields. The server must allow it
// (rest.Server.AllowBody), as its own limit is smaller.
const CompanyBodyLimit = resource.LogoMaxBytes + 64<<10

// companyForm is the company profile as people type it: the VAT rate as a
// percentage, the terms in days; Logo is the current logo (a data URL)
// for its preview.
type companyForm struct {
	LegalName, Address, Country, VatNumber, RegistrationNumber string
	Email, Phone, Website                                      string
	Currency, VatRate, TermsDays, Language                     string
	PaymentInstructions, Footer                                string
	Logo                                                       string
	ErrParam, ErrMsg                                           string
}

// companyInputs maps the API's fields to the form's inputs where they differ.
var companyInputs = map[string]string{"default_vat_rate_bp": "default_vat_rate"}

// errorFor is the refusal's message when it names the input.
func (f companyForm) errorFor(input string) string {
	p := f.ErrParam
	if in, ok := companyInputs[p]; ok {
		p = in
	}
	if p == input {
		return f.ErrMsg
	}
	return ""
}

func companyFormOf(p *ent.Company) companyForm {
	f := companyForm{LegalName: p.LegalName, Address: p.Address, Country: p.Country, VatNumber: p.VatNumber,
		RegistrationNumber: p.RegistrationNumber, Email: p.Email, Phone: p.Phone, Website: p.Website,
		Currency: p.DefaultCurrency, Language: p.DefaultLanguage, PaymentInstructions: p.PaymentInstructions, Footer: p.Footer}
	if p.DefaultVatRateBp != nil {
		f.VatRate = amounts.Decimal(int64(*p.DefaultVatRateBp), 2, "en")
	}
	if p.DefaultPaymentTermsDays != nil {
		f.TermsDays = strconv.Itoa(*p.DefaultPaymentTermsDays)
	}
	if len(p.Logo) > 0 {
		f.Logo = writes.LogoURL(p.LogoMediaType, p.Logo)
	}
	return f
}

var currencyChoices = func() []string {
	codes := currency.GetCurrencyCodes()
	slices.Sort(codes)
	return codes
}()

var languageChoices = []struct{ Value, Label string }{
	{"en", "English"}, {"fr", "French"}, {"ar", "Arabic"}, {"bilingual", "English and Arabic, side by side"},
}

// rateField is the Settings form's default VAT rate as the forms read a
// line's: a percentage ("20", "5.5", "5.5 %") into basis points, by
// parseUnit's one rule (a decimal point; "5,5" is refused, not guessed).
var rateField = resource.Field{Name: "default_vat_rate_bp", Type: resource.Integer, Unit: resource.BasisPoints,
	Min: new(int64), Max: func() *int64 { n := int64(10_000); return &n }()}

// companyBody is the PATCH /v1/company body of a sent form; an empty input
// clears its field. A value the form cannot turn into the API's unit is
// refused here, naming the input.
func (u *UI) companyBody(c *fiber.Ctx, f *companyForm) (map[string]any, *apierr.Error) {
	b := map[string]any{}
	text := func(field, v string) {
		if v == "" {
			b[field] = nil
		} else {
			b[field] = v
		}
	}
	text("legal_name", f.LegalName)
	text("address", f.Address)
	text("country", f.Country)
	text("vat_number", f.VatNumber)
	text("registration_number", f.RegistrationNumber)
	text("email", f.Email)
	text("phone", f.Phone)
	text("website", f.Website)
	text("default_currency", f.Currency)
	text("default_language", f.Language)
	text("payment_instructions", f.PaymentInstructions)
	text("footer", f.Footer)
	b["default_vat_rate_bp"] = nil
	if f.VatRate != "" {
		bp, problem := parseUnit(rateField, f.VatRate, "")
		if problem != "" {
			return nil, apierr.Invalid("default_vat_rate_bp", "the VAT rate %s", problem)
		}
		b["default_vat_rate_bp"] = bp
	}
	b["default_payment_terms_days"] = nil
	if f.TermsDays != "" {
		n, err := strconv.Atoi(f.TermsDays)
		if err != nil {
			return nil, apierr.Invalid("default_payment_terms_days", "type the payment terms as a number of days, e.g. 30")
		}
		b["default_payment_terms_days"] = n
	}
	if c.FormValue("remove_logo") == "on" {
		b["logo"] = nil
	} else if fh, err := c.FormFile("logo"); err == nil && fh.Size > 0 {
		if fh.Size > resource.LogoMaxBytes {
			return nil, apierr.Invalid("logo", "the logo is larger than 1 MiB; choose a smaller image")
		}
		file, err := fh.Open()
		if err != nil {
			return nil, apierr.Internal(err)
		}
		raw, err := io.ReadAll(io.LimitReader(file, resource.LogoMaxBytes+1))
		file.Close()
		if err != nil {
			return nil, apierr.Internal(err)
		}
		// The API trusts the content, not the type named: any will do.
		b["logo"] = writes.LogoURL("application/octet-stream", raw)
	}
	return b, nil
}

func (u *UI) saveCompany(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	f := companyForm{
		LegalName: strings.TrimSpace(c.FormValue("legal_name")), Address: strings.TrimSpace(c.FormValue("address")),
		Country: strings.ToUpper(strings.TrimSpace(c.FormValue("country"))), VatNumber: strings.TrimSpace(c.FormValue("vat_number")),
		RegistrationNumber: strings.TrimSpace(c.FormValue("registration_number")), Email: strings.TrimSpace(c.FormValue("email")),
		Phone: strings.TrimSpace(c.FormValue("phone")), Website: strings.TrimSpace(c.FormValue("website")),
		Currency: c.FormValue("default_currency"), VatRate: strings.TrimSpace(c.FormValue("default_vat_rate")),
		TermsDays: strings.TrimSpace(c.FormValue("default_payment_terms_days")), Language: c.FormValue("default_language"),
		PaymentInstructions: strings.TrimSpace(c.FormValue("payment_instructions")), Footer: strings.TrimSpace(c.FormValue("footer")),
	}
	body, e := u.companyBody(c, &f)
	if e == nil {
		b, _ := json.Marshal(body)
		rt, _ := api.FindRoute(resource.Company, resource.Update, "")
		// The form's token as the key: sent twice, it saves once.
		_, e = u.write(c, rt, "", "", b, c.FormValue(idemName))
	}
	if e != nil {
		if e.Status >= 500 {
			return u.internal(c, e)
		}
		if e.Status != http.StatusBadRequest || e.Param == "" {
			return u.onceFailed(c, e)
		}
		// The logo shown stays the saved one: a refused upload is not kept.
		p, err := u.core.Company(c.UserContext(), ws.ID)
		if err != nil {
			return u.internal(c, err)
		}
		f.Logo = companyFormOf(p).Logo
		f.ErrParam, f.ErrMsg = e.Param, capitalize(e.Message)+"."
		d := u.settingsData(c, f)
		d.Error = "The company profile was not saved: " + f.ErrMsg
		return render(c, http.StatusUnprocessableEntity, settingsView(d))
	}
	return redirect(c, wsURL(ws, "settings")+"?company=saved#company")
}
