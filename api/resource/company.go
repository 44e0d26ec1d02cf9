package resource

import "encoding/base64"

// LogoMaxBytes bounds a company logo, decoded.
const LogoMaxBytes = 1 << 20

// LogoMaxLen is the longest logo data URL: LogoMaxBytes in base64 after
// a prefix of up to 128 characters (the media type it names is not
// trusted, so any is taken: application/octet-stream from a file upload).
var LogoMaxLen = 128 + base64.StdEncoding.EncodedLen(LogoMaxBytes)

// CountryCode is an ISO 3166-1 alpha-2 code's shape; api/writes checks the
// code is assigned.
var CountryCode = &Format{
	Pattern: "^[A-Z]{2}$",
	Says:    "an ISO 3166-1 alpha-2 code of two capital letters, e.g. FR",
	Match:   func(s string) bool { return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z' },
}

func withUnit(f Field, u Unit) Field { f.Unit = u; return f }

func bounded(name, doc string, lo, hi int64) Field {
	return Field{Name: name, Type: Integer, Min: &lo, Max: &hi, Doc: doc}
}

// companyBody is the profile: every field optional, null clears it.
var companyBody = []Field{
	null(str("legal_name", "The company's legal name, as documents show it.")),
	null(Field{Name: "address", Type: String, MaxLen: 1000, Doc: "Postal address, one line per line (\\n between them)."}),
	null(Field{Name: "country", Type: String, Format: CountryCode, MaxLen: 2, Doc: "ISO 3166-1 alpha-2 country code, e.g. FR."}),
	null(str("vat_number", "VAT or tax number.")),
	null(str("registration_number", "Company registration number.")),
	null(Field{Name: "email", Type: String, MaxLen: 254, Doc: "Email address, e.g. billing@example.com."}),
	null(str("phone", "Phone number, free text.")),
	null(str("website", "Website address.")),
	null(Field{Name: "logo", Type: String, MaxLen: LogoMaxLen,
		Doc: "The logo as a data URL (data:image/png;base64,...): PNG, JPEG or SVG, at most 1 MiB decoded; the content is checked, not the media type said. null removes it."}),
	null(Field{Name: "default_currency", Type: String, Format: CurrencyCode, MaxLen: 3, Doc: "Default ISO 4217 currency code, e.g. EUR."}),
	null(withUnit(bounded("default_vat_rate_bp", "Default VAT rate in basis points, 0 to 10000 (2000 = 20 %).", 0, 10000), BasisPoints)),
	null(bounded("default_payment_terms_days", "Default payment terms in days, 0 to 365.", 0, 365)),
	null(enum("default_language", "Default language of documents when the client has no preferred_language.", Languages...)),
	null(str("payment_instructions", "How to pay: bank, IBAN, BIC or free text, printed on invoices.")),
	null(str("footer", "Footer printed on every document.")),
}

// Company is the workspace's company profile, the seller on every document.
var Company = &Resource{Name: "company", Singular: "company", Plan: Starter, Toolset: "sales", Singleton: true,
	Doc: "The seller printed on every document: legal name, address, VAT number, logo, payment instructions and the workspace's defaults. " +
		"Any key reads it; only the admin role changes it. Fields never set are null.",
	Ops: []Op{
		{Kind: Get, Summary: "Get the workspace's company profile."},
		{Kind: Update, Body: companyBody, MaxBody: LogoMaxLen + 64<<10, Summary: "Change the company profile."},
	}}
