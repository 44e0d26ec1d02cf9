package writes

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image"
	_ "image/jpeg" // a JPEG logo must decode
	_ "image/png"  // a PNG logo must decode
	"io"
	"net/http"
	"net/mail"
	"strings"

	"github.com/bojanz/currency"
	"golang.org/x/text/language"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/jsonout"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/company"
)

// updateCompany sets the fields the body sends on the workspace's company
// profile, making it on the first save; null (or "") clears a field.
func updateCompany(q *Request) (Result, error) {
	logo, logoType, err := checkCompany(q.Body)
	if err != nil {
		return Result{}, err
	}
	var changes []Change
	var after []byte
	return q.inTx(func(tx *ent.Tx) error {
		ws := q.Workspace().ID
		cur, err := forUpdate(q, tx.Company.Query().Where(company.WorkspaceID(ws))).Only(q.Ctx)
		switch {
		case ent.IsNotFound(err):
			cur = &ent.Company{WorkspaceID: ws}
		case err != nil:
			return err
		}
		before := CompanyJSON(cur)
		var m *ent.CompanyMutation
		var save func() (*ent.Company, error)
		if cur.ID == "" {
			c := tx.Company.Create().SetWorkspaceID(ws)
			m, save = c.Mutation(), func() (*ent.Company, error) { return c.Save(q.Ctx) }
		} else {
			u := tx.Company.UpdateOne(cur)
			m, save = u.Mutation(), func() (*ent.Company, error) { return u.Save(q.Ctx) }
		}
		setCompany(m, q.Op.Body, q.Body, logo, logoType)
		saved, err := save()
		if err != nil {
			return err
		}
		after = CompanyJSON(saved)
		if cur.ID == "" {
			before = nil // nothing to compare: every field is new
		}
		changes = []Change{{Type: q.Resource.EventType(q.Op, false), Resource: q.Resource, ID: saved.ID, Object: after,
			Previous: previousAttributes(before, after)}}
		return nil
	}, func() Answer { return Answer{Status: http.StatusOK, Body: after, Changes: changes} })
}

// setCompany puts the body's fields on m: a string, or "" for null; a
// number, or cleared for null.
func setCompany(m *ent.CompanyMutation, fields []resource.Field, v Values, logo []byte, logoType string) {
	for _, f := range fields {
		if !v.Has(f.Name) {
			continue
		}
		switch f.Name {
		case "logo":
			if logo == nil {
				m.ClearLogo()
			} else {
				m.SetLogo(logo)
			}
			m.SetLogoMediaType(logoType) // "" with no logo
		case company.FieldDefaultVatRateBp, company.FieldDefaultPaymentTermsDays:
			if n, ok := v.Int(f.Name); ok {
				_ = m.SetField(f.Name, int(n))
			} else {
				_ = m.ClearField(f.Name)
			}
		default:
			// Lines end in \n, as a browser's \r\n would not print alike.
			s, _ := v.String(f.Name)
			_ = m.SetField(f.Name, strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")))
		}
	}
}

// checkCompany checks what the declaration cannot say: codes that exist,
// an email address, a logo that is an image. It answers the logo decoded
// with its media type (nil when the body clears it or does not send it).
func checkCompany(v Values) ([]byte, string, error) {
	if s, ok := v.String("country"); ok {
		r, err := language.ParseRegion(s)
		if err != nil || !r.IsCountry() || r.Canonicalize().String() != s {
			return nil, "", apierr.Invalid("country", "country %q is not an ISO 3166-1 alpha-2 country code, e.g. FR", s)
		}
	}
	if s, ok := v.String("default_currency"); ok && !currency.IsValid(s) {
		return nil, "", apierr.Invalid("default_currency", "default_currency %q is not an ISO 4217 currency code, e.g. EUR", s)
	}
	if s, ok := v.String("email"); ok && strings.TrimSpace(s) != "" {
		if a, err := mail.ParseAddress(s); err != nil || a.Name != "" || a.Address != strings.TrimSpace(s) || !strings.Contains(a.Address[strings.LastIndexByte(a.Address, '@')+1:], ".") {
			return nil, "", apierr.Invalid("email", "email %q is not an email address, e.g. billing@example.com", s)
		}
	}
	s, ok := v.String("logo")
	if !ok {
		return nil, "", nil
	}
	return readLogo(s)
}

// readLogo reads a logo data URL (data:image/png;base64,...): at most
// resource.LogoMaxBytes decoded, and a PNG or JPEG that decodes or an SVG
// document, whatever media type the URL names. It answers the bytes and
// the media type the content has.
func readLogo(dataURL string) ([]byte, string, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(dataURL, "data:"), ",")
	if !strings.HasPrefix(dataURL, "data:") || !ok || !strings.HasSuffix(meta, ";base64") {
		return nil, "", apierr.Invalid("logo", "logo must be a data URL with base64 content, e.g. data:image/png;base64,iVBORw0...")
	}
	if base64.StdEncoding.DecodedLen(len(data)) > resource.LogoMaxBytes+2 {
		return nil, "", logoTooLarge()
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, "", apierr.Invalid("logo", "logo's content is not valid base64")
	}
	if len(raw) > resource.LogoMaxBytes {
		return nil, "", logoTooLarge()
	}
	mt := sniffLogo(raw)
	if mt == "" {
		return nil, "", apierr.Invalid("logo", "logo must be a PNG, JPEG or SVG image; its content is none of them")
	}
	return raw, mt, nil
}

func logoTooLarge() error {
	return apierr.Invalid("logo", "logo is larger than 1 MiB; send a smaller image")
}

// sniffLogo is the media type of an image a logo may be (image/png,
// image/jpeg, image/svg+xml), "" for anything else.
func sniffLogo(b []byte) string {
	if _, format, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
		switch format {
		case "png":
			return "image/png"
		case "jpeg":
			return "image/jpeg"
		}
		return ""
	}
	if isSVG(b) {
		return "image/svg+xml"
	}
	return ""
}

// isSVG reports whether b is an XML document whose root element is <svg>.
func isSVG(b []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "svg" || (t.Name.Space != "" && t.Name.Space != "http://www.w3.org/2000/svg") {
				return false
			}
			// The whole document must be well-formed XML.
			for {
				if _, err := d.Token(); err != nil {
					return errors.Is(err, io.EOF)
				}
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return false
			}
		}
	}
}

// companyRecord is the company profile as /v1 shows it: each field of the
// declared body, null when unset, and when it was last saved.
type companyRecord struct {
	LegalName               *string `json:"legal_name"`
	Address                 *string `json:"address"`
	Country                 *string `json:"country"`
	VatNumber               *string `json:"vat_number"`
	RegistrationNumber      *string `json:"registration_number"`
	Email                   *string `json:"email"`
	Phone                   *string `json:"phone"`
	Website                 *string `json:"website"`
	Logo                    *string `json:"logo"`
	DefaultCurrency         *string `json:"default_currency"`
	DefaultVatRateBp        *int    `json:"default_vat_rate_bp"`
	DefaultPaymentTermsDays *int    `json:"default_payment_terms_days"`
	DefaultLanguage         *string `json:"default_language"`
	PaymentInstructions     *string `json:"payment_instructions"`
	Footer                  *string `json:"footer"`
	UpdatedAt               *string `json:"updated_at"`
}

func set(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CompanyJSON is c as /v1 shows it (a zero c is the profile never saved).
func CompanyJSON(c *ent.Company) []byte {
	r := companyRecord{
		LegalName: set(c.LegalName), Address: set(c.Address), Country: set(c.Country), VatNumber: set(c.VatNumber),
		RegistrationNumber: set(c.RegistrationNumber), Email: set(c.Email), Phone: set(c.Phone), Website: set(c.Website),
		DefaultCurrency: set(c.DefaultCurrency), DefaultVatRateBp: c.DefaultVatRateBp, DefaultPaymentTermsDays: c.DefaultPaymentTermsDays,
		DefaultLanguage: set(c.DefaultLanguage), PaymentInstructions: set(c.PaymentInstructions), Footer: set(c.Footer),
	}
	if len(c.Logo) > 0 && c.LogoMediaType != "" {
		r.Logo = set(LogoURL(c.LogoMediaType, c.Logo))
	}
	if c.ID != "" {
		r.UpdatedAt = set(c.UpdatedAt.UTC().Format(jsonout.TimeFormat))
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // strings, numbers and a time always encode
	}
	return b
}

// LogoURL is a logo as a data URL.
func LogoURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}
