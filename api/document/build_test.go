package document_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/document"
)

func TestMain(m *testing.M) { apitest.Main(m) }

type obj = map[string]any

func principal(t *testing.T, env *apitest.Env, key string) *access.Principal {
	t.Helper()
	p, err := env.Server.Auth.AuthenticateAt(context.Background(), "Bearer "+key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func id(m map[string]any) string { return m["id"].(string) }

// An invoice's document is the record as stored: the client's name and
// default billing address, each line's item in the client's language, the
// amounts GET answers, a VAT summary that adds up to the totals, what was
// paid and credited, the quote it follows.
func TestInvoiceDocumentIsTheRecordInTheClientsLanguage(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	ctx := context.Background()
	p := principal(t, env, ws.Key)
	cli := id(env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Boulangerie Dupont", "address": "1 rue Old", "preferred_language": "fr",
		"email": "compta@dupont.example"}).WantStatus(t, 201).JSON(t))
	env.Do(t, "POST", "/v1/clients/"+cli+"/addresses", ws.Key, obj{"name": "Siège", "address": "12 rue de la Paix\n75002 Paris",
		"default_billing": true}).WantStatus(t, 201)
	item := id(env.Do(t, "POST", "/v1/items", ws.Key, obj{"name": "Consulting", "number": "SKU-CONSULT", "unit_price_cents": 48000,
		"translations": obj{"fr": obj{"name": "Conseil"}, "ar": obj{"name": "استشارة"}}}).WantStatus(t, 201).JSON(t))
	lines := []obj{
		{"item_id": item, "description": "Consulting", "qty_milli": 2500, "unit_price_cents": 48000, "vat_rate_bp": 2000},
		{"description": "Travel costs", "qty_milli": 1000, "unit_price_cents": 13550, "vat_rate_bp": 550, "discount_bp": 1000},
		{"description": "Books", "qty_milli": 3000, "unit_price_cents": 1999, "vat_rate_bp": 550},
	}
	quo := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_id": cli, "lines": lines}).WantStatus(t, 201).JSON(t)
	for _, a := range []string{"send", "accept", "invoice"} {
		env.Do(t, "POST", "/v1/quotes/"+id(quo)+"/"+a, ws.Key, nil).WantStatus(t, 200)
	}
	inv := env.Get(t, "/v1/quotes/"+id(quo), ws.Key).WantStatus(t, 200).JSON(t)["invoice_id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, obj{"id": "bank-1", "number": "RCPT-1", "status": "completed", "date": "2026-11-10", "amount_incl_vat_cents": 30000}).WantStatus(t, 201)
	got := env.Get(t, "/v1/invoices/"+inv, ws.Key).WantStatus(t, 200).JSON(t)
	cents := func(m map[string]any, k string) int64 { return int64(m[k].(float64)) }

	d, err := env.Server.Document(ctx, p, "invoices", inv, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != document.Invoice || d.Lang != "fr" || d.Number != got["number"] || d.Currency != "EUR" || d.Reference != quo["number"] {
		t.Errorf("kind %s lang %s number %s currency %s reference %s; want invoice fr %v EUR %v", d.Kind, d.Lang, d.Number, d.Currency, d.Reference, got["number"], quo["number"])
	}
	if d.Buyer.Name != "Boulangerie Dupont" || d.Buyer.Address != "12 rue de la Paix\n75002 Paris" || d.Buyer.Email != "compta@dupont.example" {
		t.Errorf("buyer %+v: want the client's name and its default billing address", d.Buyer)
	}
	if d.Seller.Name == "" {
		t.Error("no seller")
	}
	stored := got["lines"].([]any)
	if len(d.Lines) != 3 {
		t.Fatalf("%d lines", len(d.Lines))
	}
	for i, want := range []string{"Conseil", "Travel costs", "Books"} {
		l, s := d.Lines[i], stored[i].(map[string]any)
		if l.Description != want || l.QtyMilli != cents(s, "qty_milli") || l.UnitPriceCents != cents(s, "unit_price_cents") ||
			l.DiscountBP != cents(s, "discount_bp") || l.VATRateBP != cents(s, "vat_rate_bp") || l.AmountCents != cents(s, "amount_excl_vat_cents") {
			t.Errorf("line %d: %+v, want %q and %v", i, l, want, s)
		}
	}
	if d.SubtotalCents != cents(got, "amount_excl_vat_cents") || d.VATCents != cents(got, "vat_amount_cents") || d.TotalCents != cents(got, "amount_incl_vat_cents") {
		t.Errorf("totals %d %d %d, want %v", d.SubtotalCents, d.VATCents, d.TotalCents, got)
	}
	if d.PaidCents != 30000 || d.RemainingCents != cents(got, "remaining_cents") || d.CreditedCents != 0 {
		t.Errorf("paid %d credited %d remaining %d; want %v", d.PaidCents, d.CreditedCents, d.RemainingCents, got)
	}
	// Two rates, lowest first; each is the sum of its lines' stored amounts.
	l0, l1, l2 := stored[0].(map[string]any), stored[1].(map[string]any), stored[2].(map[string]any)
	want := []document.VATRate{
		{RateBP: 550, BaseCents: cents(l1, "amount_excl_vat_cents") + cents(l2, "amount_excl_vat_cents"), VATCents: cents(l1, "vat_amount_cents") + cents(l2, "vat_amount_cents")},
		{RateBP: 2000, BaseCents: cents(l0, "amount_excl_vat_cents"), VATCents: cents(l0, "vat_amount_cents")},
	}
	if len(d.VATSummary) != 2 || d.VATSummary[0] != want[0] || d.VATSummary[1] != want[1] {
		t.Errorf("VAT summary %+v, want %+v", d.VATSummary, want)
	}
	var base, vat int64
	for _, r := range d.VATSummary {
		base, vat = base+r.BaseCents, vat+r.VATCents
	}
	if base != d.SubtotalCents || vat != d.VATCents {
		t.Errorf("the VAT summary adds up to %d + %d, not the totals %d + %d", base, vat, d.SubtotalCents, d.VATCents)
	}

	// lang overrides the client's; bilingual keeps the line's words and adds the Arabic name.
	d, err = env.Server.Document(ctx, p, "invoices", inv, "bilingual")
	if err != nil {
		t.Fatal(err)
	}
	if d.Lang != "bilingual" || d.Lines[0].Description != "Consulting / استشارة" || d.Lines[1].Description != "Travel costs" {
		t.Errorf("bilingual: %s %q %q", d.Lang, d.Lines[0].Description, d.Lines[1].Description)
	}
	d, err = env.Server.Document(ctx, p, "invoices", inv, "en")
	if err != nil || d.Lines[0].Description != "Consulting" {
		t.Errorf("en: %v %+v", err, d)
	}

	// An unknown language is a 400 naming lang; another workspace's record a 404.
	_, err = env.Server.Document(ctx, p, "invoices", inv, "de")
	if e, ok := apierr.As(err); !ok || e.Status != 400 || e.Param != "lang" {
		t.Errorf("lang=de: %v", err)
	}
	other := env.Workspace(t, "growth", false, false)
	_, err = env.Server.Document(ctx, principal(t, env, other.Key), "invoices", inv, "")
	if e, ok := apierr.As(err); !ok || e.Status != 404 {
		t.Errorf("another workspace's invoice: %v", err)
	}
	// A key whose role may not read invoices is refused as a GET is.
	ws.Role(t, "clerk", "clients:read")
	clerk := ws.NewKey(t, access.KeySpec{Role: "clerk"})
	_, err = env.Server.Document(ctx, principal(t, env, clerk), "invoices", inv, "")
	if e, ok := apierr.As(err); !ok || e.Status != 403 {
		t.Errorf("a clerk's read of an invoice document: %v", err)
	}
}

// A credit note refers to the invoice it credits; a client without a
// language, in a workspace without one, reads English; a client's own
// address stands when it has no default billing address.
func TestCreditNoteAndDefaults(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	p := principal(t, env, ws.Key)
	cli := id(env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Acme Ltd", "address": "1 Main St", "currency_code": "JPY"}).WantStatus(t, 201).JSON(t))
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_id": cli,
		"lines": []obj{{"description": "Widget", "qty_milli": 1000, "unit_price_cents": 1200}}}).WantStatus(t, 201).JSON(t)
	crn := id(env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": id(inv),
		"lines": []obj{{"description": "Goodwill", "qty_milli": 1000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t))
	d, err := env.Server.Document(context.Background(), p, "credit-notes", crn, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != document.CreditNote || d.Reference != inv["number"] || d.Lang != "en" || d.Currency != "JPY" ||
		d.Buyer.Address != "1 Main St" || d.TotalCents != 100 || len(d.Lines) != 1 || !strings.HasPrefix(d.Number, "CRN-") {
		t.Errorf("credit note document: %+v", d)
	}
	if _, err := env.Server.Document(context.Background(), p, "bills", crn, ""); err == nil {
		t.Error("a bill is not a document one sends")
	}
}

// An order confirmation shows the order's lines and totals; a packing
// slip the quantities shipped, where they ship, and no prices.
func TestOrderConfirmationAndPackingSlip(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	p := principal(t, env, ws.Key)
	cli := id(env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "شركة النور", "preferred_language": "ar", "address": "Dubai"}).WantStatus(t, 201).JSON(t))
	so := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_id": cli, "currency_code": "KWD", "shipping_address": "Warehouse 4, Kuwait City",
		"lines": []obj{{"description": "Dates, 1 kg", "qty_milli": 4000, "unit_price_cents": 2500, "vat_rate_bp": 500},
			{"description": "Coffee", "qty_milli": 1500, "unit_price_cents": 12345}}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/sales-orders/"+id(so)+"/confirm", ws.Key, nil).WantStatus(t, 200)
	so = env.Get(t, "/v1/sales-orders/"+id(so), ws.Key).WantStatus(t, 200).JSON(t)
	d, err := env.Server.Document(context.Background(), p, "sales-orders", id(so), "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != document.SalesOrder || d.Lang != "ar" || d.Currency != "KWD" || len(d.Lines) != 2 || d.Lines[1].QtyMilli != 1500 ||
		d.TotalCents != int64(so["amount_incl_vat_cents"].(float64)) || len(d.VATSummary) != 2 {
		t.Errorf("order confirmation: %+v", d)
	}
	ol := so["lines"].([]any)[0].(map[string]any)
	shp := id(env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": id(so),
		"lines": []obj{{"order_line_id": ol["id"], "qty_milli": 2000}}}).WantStatus(t, 201).JSON(t))
	d, err = env.Server.Document(context.Background(), p, "shipments", shp, "fr")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != document.Shipment || d.Lang != "fr" || d.Reference != so["number"] || d.Buyer.Name != "شركة النور" ||
		d.Buyer.Address != "Warehouse 4, Kuwait City" || len(d.Lines) != 1 || d.Lines[0].Description != "Dates, 1 kg" ||
		d.Lines[0].QtyMilli != 2000 || d.Lines[0].AmountCents != 0 || d.TotalCents != 0 || d.VATSummary != nil || d.Date.IsZero() {
		t.Errorf("packing slip: %+v", d)
	}
}

// The seller is the company profile, every field of it; a client without
// a language reads the company's default_language.
func TestSellerIsTheCompanyProfile(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	p := principal(t, env, ws.Key)
	inv := id(env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Walk-in",
		"lines": []obj{{"description": "Widget", "qty_milli": 1000, "unit_price_cents": 1200}}}).WantStatus(t, 201).JSON(t))
	// Before a profile is saved, the workspace's name sells.
	d, err := env.Server.Document(context.Background(), p, "invoices", inv, "")
	if err != nil || d.Seller.Name != p.Workspace.Name || d.Lang != "en" || d.Logo != nil {
		t.Fatalf("without a profile: %v %+v %s", err, d.Seller, d.Lang)
	}
	// The command line's principal knows the workspace by id only.
	if d, err := env.Server.Document(context.Background(), access.System(ws.ID), "invoices", inv, ""); err != nil || d.Seller.Name != p.Workspace.Name {
		t.Fatalf("as the command line: %v %+v", err, d)
	}
	png := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"legal_name": "Atelier Lumière SARL", "address": "8 rue des Arts\n69001 Lyon", "country": "FR",
		"vat_number": "FR12345678901", "registration_number": "RCS Lyon 123 456 789", "email": "factures@lumiere.example", "phone": "+33 4 00 00 00 00",
		"website": "https://lumiere.example", "logo": png, "default_language": "fr", "payment_instructions": "IBAN FR76 3000 6000 0112 3456 7890 189",
		"footer": "SARL au capital de 10 000 €"}).WantStatus(t, 200)
	d, err = env.Server.Document(context.Background(), p, "invoices", inv, "")
	if err != nil {
		t.Fatal(err)
	}
	want := document.Party{Name: "Atelier Lumière SARL", Address: "8 rue des Arts\n69001 Lyon", Country: "FR", VATNumber: "FR12345678901",
		RegistrationNumber: "RCS Lyon 123 456 789", Email: "factures@lumiere.example", Phone: "+33 4 00 00 00 00", Website: "https://lumiere.example"}
	if d.Seller != want || d.Lang != "fr" || d.PaymentInstructions != "IBAN FR76 3000 6000 0112 3456 7890 189" || d.Footer != "SARL au capital de 10 000 €" {
		t.Errorf("seller %+v lang %s instructions %q footer %q", d.Seller, d.Lang, d.PaymentInstructions, d.Footer)
	}
	if d.Logo == nil || d.Logo.MediaType != "image/png" || len(d.Logo.Data) == 0 || string(d.Logo.Data[1:4]) != "PNG" {
		t.Errorf("logo %+v", d.Logo)
	}
}
