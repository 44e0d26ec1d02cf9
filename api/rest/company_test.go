package rest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/company"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
)

// testImage encodes a small picture with enc (png.Encode, a JPEG encoder).
func testImage(t *testing.T, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 4))
	for x := range 8 {
		img.Set(x, x%4, color.RGBA{R: 200, G: 30, B: 60, A: 255})
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}

const testSVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="#c33"/></svg>`

// The profile: every key reads it (a zero profile before the first save),
// only the admin role changes it; the fields sent are set, null clears,
// the logo is sniffed; a change is a company.updated event.
func TestCompanyProfileReadAndWrite(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	ws.Role(t, "clerk", "invoices:write,clients:read")
	clerk := ws.NewKey(t, access.KeySpec{Role: "clerk"})

	zero := env.Get(t, "/v1/company", ws.Key).WantStatus(t, http.StatusOK).JSON(t)
	for _, f := range []string{"legal_name", "address", "country", "logo", "default_currency", "default_vat_rate_bp", "default_language", "footer", "updated_at"} {
		if v, ok := zero[f]; !ok || v != nil {
			t.Fatalf("a profile never saved: %s is %v (%v)", f, v, zero)
		}
	}
	for _, key := range []string{viewer, clerk} {
		env.Get(t, "/v1/company", key).WantStatus(t, http.StatusOK)
		e := env.Do(t, "PATCH", "/v1/company", key, obj{"legal_name": "Not allowed"}).WantError(t, http.StatusForbidden, "permission_denied")
		if m, _ := e["message"].(string); !bytes.Contains([]byte(m), []byte("admin")) {
			t.Errorf("the 403 does not say the admin role may: %q", m)
		}
	}
	if n, _ := env.DB.Writer.Company.Query().Where(company.WorkspaceID(ws.ID)).Count(t.Context()); n != 0 {
		t.Fatalf("refused writes saved a profile (%d rows)", n)
	}

	pngLogo := testImage(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	full := obj{
		"legal_name": "Atelier Martin SARL", "address": "12 rue des Lilas\n75011 Paris", "country": "FR",
		"vat_number": "FR40303265045", "registration_number": "RCS Paris 303 265 045", "email": "billing@martin.example",
		"phone": "+33 1 23 45 67 89", "website": "https://martin.example",
		// Said to be an SVG, but the content is a PNG: the content wins.
		"logo":             dataURL("image/svg+xml", pngLogo),
		"default_currency": "EUR", "default_vat_rate_bp": 2000, "default_payment_terms_days": 30, "default_language": "fr",
		"payment_instructions": "IBAN FR76 3000 6000 0112 3456 7890 189\nBIC AGRIFRPP", "footer": "Merci de votre confiance.",
	}
	got := env.Do(t, "PATCH", "/v1/company", ws.Key, full).WantStatus(t, http.StatusOK).JSON(t)
	for k, v := range full {
		want := v
		if k == "logo" {
			want = dataURL("image/png", pngLogo)
		}
		if n, ok := v.(int); ok {
			want = float64(n)
		}
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if got["updated_at"] == nil {
		t.Error("a saved profile has no updated_at")
	}
	read := env.Get(t, "/v1/company", viewer).WantStatus(t, http.StatusOK).JSON(t)
	if !sameJSON(read, got) {
		t.Fatalf("GET reads %v\nPATCH answered %v", read, got)
	}

	// The fields sent change, the others stay; null clears.
	part := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"phone": nil, "logo": nil, "default_vat_rate_bp": 550,
		"default_payment_terms_days": nil}).WantStatus(t, http.StatusOK).JSON(t)
	if part["phone"] != nil || part["logo"] != nil || part["default_vat_rate_bp"] != float64(550) || part["default_payment_terms_days"] != nil ||
		part["legal_name"] != "Atelier Martin SARL" || part["country"] != "FR" || part["default_language"] != "fr" {
		t.Fatalf("partial update: %v", part)
	}
	svg := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"logo": dataURL("image/png", []byte(testSVG))}).WantStatus(t, http.StatusOK).JSON(t)
	if svg["logo"] != dataURL("image/svg+xml", []byte(testSVG)) {
		t.Fatalf("an SVG logo reads %v", svg["logo"])
	}
	jpg := testImage(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) })
	if l := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"logo": dataURL("image/jpeg", jpg)}).WantStatus(t, http.StatusOK).JSON(t)["logo"]; l != dataURL("image/jpeg", jpg) {
		t.Fatalf("a JPEG logo reads %v", l)
	}
	saved, err := env.DB.Writer.Company.Query().Where(company.WorkspaceID(ws.ID)).Only(t.Context())
	if err != nil || saved.LogoMediaType != "image/jpeg" || !bytes.Equal(saved.Logo, jpg) {
		t.Fatalf("the logo is not kept as its bytes: %v %v", err, saved)
	}
	// Another workspace's profile is its own.
	other := env.Workspace(t, "starter", false, false)
	if p := env.Get(t, "/v1/company", other.Key).WantStatus(t, http.StatusOK).JSON(t); p["legal_name"] != nil || p["updated_at"] != nil {
		t.Fatalf("another workspace reads %v", p)
	}
	core, err := env.Server.Company(t.Context(), ws.ID)
	if err != nil || core.LegalName != "Atelier Martin SARL" || core.DefaultLanguage != "fr" || *core.DefaultVatRateBp != 550 {
		t.Fatalf("Core.Company: %v %+v", err, core)
	}

	// The event carries the profile as GET shows it, and what changed.
	var events struct {
		Data []struct {
			Type string
			Data struct {
				Object             map[string]any `json:"object"`
				PreviousAttributes map[string]any `json:"previous_attributes"`
			}
		}
	}
	env.Get(t, "/v1/events?type=company.updated", viewer).WantStatus(t, http.StatusOK).Decode(t, &events)
	if len(events.Data) != 4 {
		t.Fatalf("%d company.updated events, want 4", len(events.Data))
	}
	last := events.Data[0].Data
	if !sameJSON(last.Object, env.Get(t, "/v1/company", ws.Key).JSON(t)) || last.PreviousAttributes["logo"] != svg["logo"] {
		t.Fatalf("the newest event: %+v", last)
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Bad fields are a 400 naming the field, and write nothing.
func TestCompanyProfileRefusesBadFields(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	before := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"legal_name": "Kept SA", "country": "BE", "email": "a@kept.example"}).
		WantStatus(t, http.StatusOK).JSON(t)
	big := make([]byte, resource.LogoMaxBytes+1)
	copy(big, testImage(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }))
	for _, c := range []struct {
		field string
		value any
	}{
		{"country", "XX"},
		{"country", "fr"},
		{"country", "UK"},
		{"default_currency", "ZZZ"},
		{"default_currency", "eur"},
		{"email", "not an address"},
		{"email", "Jean <jean@example.com>"},
		{"default_language", "de"},
		{"default_vat_rate_bp", 10001},
		{"default_payment_terms_days", -1},
		{"logo", dataURL("image/png", []byte("GIF89a, or just text"))},
		{"logo", dataURL("image/svg+xml", []byte(`<html><svg/></html>`))},
		{"logo", dataURL("image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>`))},
		{"logo", "https://example.com/logo.png"},
		{"logo", dataURL("image/png", big)},
		{"unknown_field", "x"},
	} {
		body := obj{"legal_name": "Changed SA", c.field: c.value}
		e := env.Do(t, "PATCH", "/v1/company", ws.Key, body).WantError(t, http.StatusBadRequest, "invalid_request")
		if e["param"] != c.field {
			t.Errorf("%s %.60v: param %v (%v)", c.field, c.value, e["param"], e["message"])
		}
	}
	if after := env.Get(t, "/v1/company", ws.Key).JSON(t); !sameJSON(after, before) {
		t.Fatalf("a refused write changed the profile: %v", after)
	}
	var events struct{ Data []any }
	env.Get(t, "/v1/events?type=company.updated", ws.Key).Decode(t, &events)
	if len(events.Data) != 1 {
		t.Fatalf("%d company.updated events, want the first save's only", len(events.Data))
	}
}

// A logo of 1 MiB fits PATCH /v1/company, whose body then exceeds the
// server's 1 MiB limit; every other route keeps that limit.
func TestCompanyLogoOfOneMiB(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	// Noise does not compress: 500×500 RGBA is a PNG of about 1,000,000 bytes.
	img := image.NewNRGBA(image.Rect(0, 0, 500, 500))
	seed := uint32(1)
	for i := range img.Pix {
		seed = seed*1664525 + 1013904223
		img.Pix[i] = byte(seed >> 24)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if b.Len() > resource.LogoMaxBytes || b.Len() < 900_000 {
		t.Fatalf("the test logo is %d bytes", b.Len())
	}
	// Exactly 1 MiB: a PNG reader stops at its end, the rest is padding.
	b.Write(make([]byte, resource.LogoMaxBytes-b.Len()))
	logo := dataURL("image/png", b.Bytes())
	if len(logo) <= 1<<20 {
		t.Fatalf("the body would fit the server's limit anyway (%d)", len(logo))
	}
	got := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"logo": logo}).WantStatus(t, http.StatusOK).JSON(t)
	if got["logo"] != logo {
		t.Fatal("the logo read back differs")
	}
	env.Do(t, "POST", "/v1/vendors", ws.Key, obj{"name": "Big", "notes": logo}).WantError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
}

// company.updated reaches the webhook endpoints that listen for it, with
// the profile as GET shows it. Not parallel, like the webhook tests: its
// delivery is settled before another test's worker could take it.
func TestCompanyUpdatedIsPushedToWebhooks(t *testing.T) {
	env := apitest.Start(t, withWebhooks(webhooks.Settings{Resolver: testResolver}))
	ws := env.Workspace(t, "starter", false, false)
	ep := env.Do(t, "POST", "/v1/webhook-endpoints", ws.Key, map[string]any{
		"url": "https://public.test/hooks", "enabled_events": []string{"company.updated"}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/vendors", ws.Key, obj{"name": "Not listened for"}).WantStatus(t, 201)
	env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"legal_name": "Pushed SA"}).WantStatus(t, 200)
	ds, err := env.DB.Writer.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(ep["id"].(string))).All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer env.DB.Writer.WebhookDelivery.Update().Where(webhookdelivery.EndpointID(ep["id"].(string))).
		SetStatus(webhookdelivery.StatusFailed).ExecX(t.Context())
	if len(ds) != 1 || ds[0].EventType != "company.updated" {
		t.Fatalf("deliveries: %v", ds)
	}
	var ev struct {
		Data struct {
			Object map[string]any `json:"object"`
		}
	}
	env.Get(t, "/v1/events/"+ds[0].EventID, ws.Key).WantStatus(t, 200).Decode(t, &ev)
	if !sameJSON(ev.Data.Object, env.Get(t, "/v1/company", ws.Key).JSON(t)) {
		t.Fatalf("the pushed event's profile: %v", ev.Data.Object)
	}
}

// Saves racing to make a workspace's first profile make one row: the
// loser's transaction runs again and updates the winner's.
func TestCompanyFirstSavesRaceToOneProfile(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	const n = 8
	status := make(chan int, n)
	for i := range n {
		go func() {
			r := env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"phone": strconv.Itoa(i)})
			status <- r.Status
		}()
	}
	for range n {
		if st := <-status; st != http.StatusOK {
			t.Fatalf("a racing save answered %d", st)
		}
	}
	if c, err := env.DB.Writer.Company.Query().Where(company.WorkspaceID(ws.ID)).Count(t.Context()); err != nil || c != 1 {
		t.Fatalf("%d profiles (%v), want 1", c, err)
	}
	var events struct{ Data []any }
	env.Get(t, "/v1/events?type=company.updated", ws.Key).Decode(t, &events)
	if len(events.Data) != n {
		t.Fatalf("%d company.updated events, want %d", len(events.Data), n)
	}
}
