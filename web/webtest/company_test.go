package webtest_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestCompanyProfileInABrowser fills the Settings page's company profile
// in a browser, a logo file included, and reads it back on /v1: the VAT
// rate typed as a percentage, a refused field shown next to it in words, the
// logo previewed and removed.
func TestCompanyProfileInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "starter", false, false)
	email := webtest.NewAdmin(t, env)
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")

	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := range 40 {
		img.Set(x, x/2, color.RGBA{R: 31, G: 78, B: 121, A: 255})
	}
	var pngBytes bytes.Buffer
	if err := png.Encode(&pngBytes, img); err != nil {
		t.Fatal(err)
	}
	logo := filepath.Join(dir, "logo.png")
	notImage := filepath.Join(dir, "fake.png")
	if os.WriteFile(logo, pngBytes.Bytes(), 0o644) != nil || os.WriteFile(notImage, []byte("not a picture at all"), 0o644) != nil {
		t.Fatal("write the files")
	}
	profile := func() map[string]any { return env.Get(t, "/v1/company", ws.Key).WantStatus(t, 200).JSON(t) }
	save := `form[action$="/settings/company"] button[type=submit]`

	b.open("/admin/w/" + ws.ID + "/settings")
	b.waitText("Company profile")
	b.fill("#company-legal_name", "Atelier Martin SARL")
	b.choose("#company-address", "12 rue des Lilas\n75011 Paris")
	b.fill("#company-country", "fr")
	b.fill("#company-vat_number", "FR40303265045")
	b.fill("#company-email", "billing@martin.example")
	b.choose("#company-default_currency", "CHF")
	b.fill("#company-default_vat_rate", "5.5")
	b.fill("#company-default_payment_terms_days", "45")
	b.choose("#company-default_language", "bilingual")
	b.choose("#company-payment_instructions", "IBAN CH93 0076 2011 6238 5295 7")
	b.do("choose the logo", chromedp.SetUploadFiles(chromedp.CSS("#company-logo"), []string{logo}))
	b.submit(save)
	b.waitText("Company profile saved.")
	p := profile()
	if p["legal_name"] != "Atelier Martin SARL" || p["address"] != "12 rue des Lilas\n75011 Paris" || p["country"] != "FR" ||
		p["default_currency"] != "CHF" || p["default_vat_rate_bp"] != float64(550) || p["default_payment_terms_days"] != float64(45) ||
		p["default_language"] != "bilingual" || p["logo"] != "data:image/png;base64,"+b64(pngBytes.Bytes()) {
		t.Fatalf("saved profile: %.300v", p)
	}
	// The form shows what was saved, in people's units, and the logo.
	if v := b.value("#company-default_vat_rate"); v != "5.5" {
		t.Errorf("the VAT rate reads %q, want 5.5", v)
	}
	b.until("the logo preview", `(document.querySelector("#company-logo-preview") || {}).naturalWidth === 40`)

	// A refusal is shown by its field, in words, and writes nothing.
	b.fill("#company-email", "not an address")
	b.submit(save)
	b.waitVisible("#company-email-error")
	if msg := b.text("#company-email-error"); !strings.Contains(msg, "not an email address") {
		t.Errorf("the email's error reads %q", msg)
	}
	b.fill("#company-email", "billing@martin.example")
	b.fill("#company-default_vat_rate", "twenty")
	b.submit(save)
	b.waitVisible("#company-default_vat_rate-error")
	if msg := b.text("#company-default_vat_rate-error"); !strings.Contains(msg, "percentage") {
		t.Errorf("the VAT rate's error reads %q", msg)
	}
	// The forms' one reading: a decimal comma is refused, and the point named.
	b.fill("#company-default_vat_rate", "5,5")
	b.submit(save)
	b.waitVisible("#company-default_vat_rate-error")
	if msg := b.text("#company-default_vat_rate-error"); !strings.Contains(msg, "with a point for decimals: 5.5") {
		t.Errorf("the VAT rate's error for 5,5 reads %q", msg)
	}
	b.fill("#company-default_vat_rate", "5.5")
	b.do("choose a file that is no image", chromedp.SetUploadFiles(chromedp.CSS("#company-logo"), []string{notImage}))
	b.submit(save)
	b.waitVisible("#company-logo-error")
	if msg := b.text("#company-logo-error"); !strings.Contains(msg, "PNG, JPEG or SVG") {
		t.Errorf("the logo's error reads %q", msg)
	}
	if got := profile(); !sameProfile(got, p) {
		t.Fatalf("refused forms changed the profile: %.300v", got)
	}

	// Removing the logo keeps the rest.
	b.click("#company-remove-logo")
	b.submit(save)
	b.waitText("Company profile saved.")
	b.waitGone("#company-logo-preview")
	if got := profile(); got["logo"] != nil || got["legal_name"] != "Atelier Martin SARL" || got["default_vat_rate_bp"] != float64(550) {
		t.Fatalf("after removing the logo: %.300v", got)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// sameProfile compares two profiles but for updated_at.
func sameProfile(a, b map[string]any) bool {
	for k, v := range a {
		if k != "updated_at" && v != b[k] {
			return false
		}
	}
	return len(a) == len(b)
}
