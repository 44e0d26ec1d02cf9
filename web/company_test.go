package web_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var idemToken = regexp.MustCompile(`action="/admin/w/[^"]+/settings/company"[\s\S]*?name="_idem" value="([^"]+)"`)

// postCompany sends the Settings page's company form as a browser does
// (multipart, with the page's tokens), the logo as a file.
func postCompany(t *testing.T, base string, c *webtest.Client, settings string, fields map[string]string, logo []byte) *webtest.Page {
	t.Helper()
	page := c.Get(settings)
	m := idemToken.FindStringSubmatch(page.Body)
	if page.Token() == "" || m == nil {
		t.Fatalf("no company form on %s", settings)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("csrf", page.Token())
	_ = w.WriteField("_idem", m[1])
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if logo != nil {
		fw, _ := w.CreateFormFile("logo", "logo.png")
		_, _ = fw.Write(logo)
	}
	_ = w.Close()
	req, _ := http.NewRequest("POST", base+settings+"/company", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return &webtest.Page{Status: res.StatusCode, Header: res.Header, Body: string(body)}
}

// A logo of 1 MiB uploads through the admin form, whose body then
// exceeds the server's 1 MiB limit; a larger file is refused by the logo
// field, in words.
func TestCompanyFormTakesALogoOfOneMiB(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	c := webtest.SignedIn(t, env)
	settings := "/admin/w/" + ws.ID + "/settings"

	img := image.NewNRGBA(image.Rect(0, 0, 500, 500))
	seed := uint32(7)
	for i := range img.Pix {
		seed = seed*1664525 + 1013904223
		img.Pix[i] = byte(seed >> 24)
	}
	var logo bytes.Buffer
	if err := png.Encode(&logo, img); err != nil {
		t.Fatal(err)
	}
	if logo.Len() < 900_000 || logo.Len() > resource.LogoMaxBytes {
		t.Fatalf("the test logo is %d bytes", logo.Len())
	}
	// Exactly 1 MiB: a PNG reader stops at its end, the rest is padding.
	logo.Write(make([]byte, resource.LogoMaxBytes-logo.Len()))
	r := postCompany(t, env.URL, c, settings, map[string]string{"legal_name": "Big Logo Ltd", "default_vat_rate": "20"}, logo.Bytes())
	if r.Status != http.StatusSeeOther {
		t.Fatalf("saving a %d-byte logo: %d\n%s", logo.Len(), r.Status, r.Body[strings.Index(r.Body, "<main"):])
	}
	p := env.Get(t, "/v1/company", ws.Key).WantStatus(t, 200).JSON(t)
	if p["logo"] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(logo.Bytes()) || p["default_vat_rate_bp"] != float64(2000) {
		t.Fatalf("the saved profile: %.200v", p)
	}

	big := append(logo.Bytes(), 0)
	r = postCompany(t, env.URL, c, settings, map[string]string{"legal_name": "Bigger Logo Ltd"}, big)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `id="company-logo-error"`) || !strings.Contains(r.Body, "larger than 1 MiB") {
		t.Fatalf("a logo over 1 MiB: %d\n%.2000s", r.Status, r.Body)
	}
	if got := env.Get(t, "/v1/company", ws.Key).JSON(t); got["legal_name"] != "Big Logo Ltd" {
		t.Fatalf("a refused form changed the profile: %.200v", got)
	}
}
