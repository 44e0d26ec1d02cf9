package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// A document's record page offers its PDF and print view; the print view
// is the document alone (no sidebar, no buttons), in the client's language
// with the catalogue's labels, right to left in Arabic, English and Arabic
// side by side when bilingual, amounts in the currency's own decimals.
func TestPrintViewIsTheDocumentInItsLanguage(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	cli := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Al Noor Trading", "currency_code": "KWD", "preferred_language": "ar",
		"address": "Block 3, Kuwait City"}).WantStatus(t, 201).JSON(t)["id"].(string)
	item := env.Do(t, "POST", "/v1/items", key, map[string]any{"name": "Dates box", "number": "DATES-1",
		"translations": map[string]any{"ar": map[string]any{"name": "علبة تمر"}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli, "date": "2026-11-02", "due_date": "2026-12-02",
		"lines": []map[string]any{
			{"item_id": item, "description": "Dates box", "qty_milli": 1500, "unit_price_cents": 12345, "vat_rate_bp": 550},
			{"description": "Delivery", "qty_milli": 1000, "unit_price_cents": 2000},
		}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	env.Do(t, "PATCH", "/v1/company", key, map[string]any{"legal_name": "Gulf Foods W.L.L.", "vat_number": "KW-998877",
		"address": "Sharq, Kuwait City", "footer": "Thank you for your business"}).WantStatus(t, 200)

	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	page := c.Get(w + "/records/invoices/" + id)
	for _, s := range []string{`href="` + w + `/records/invoices/` + id + `/pdf">Download PDF</a>`,
		`href="` + w + `/records/invoices/` + id + `/print">Print</a>`, `<option value="bilingual">`, `<option value="fr">`} {
		if !strings.Contains(page.Body, s) {
			t.Errorf("the invoice page does not offer %s", s)
		}
	}

	p := c.Get(w + "/records/invoices/" + id + "/print")
	if p.Status != 200 {
		t.Fatalf("print view: %d\n%s", p.Status, p.Body)
	}
	read := text(p.Body)
	if !strings.Contains(p.Body, `<html lang="ar" dir="rtl">`) || !strings.Contains(p.Body, `/admin/assets/print.css`) {
		t.Error("the Arabic print view is not a right-to-left page with the print stylesheet")
	}
	if strings.Contains(p.Body, "Sign out") || strings.Contains(p.Body, `class="sidebar`) || strings.Contains(p.Body, "<button") {
		t.Error("the print view shows the admin's chrome")
	}
	for _, s := range []string{"Gulf Foods W.L.L.", "Sharq, Kuwait City", "الرقم الضريبي", "KW-998877", "Thank you for your business",
		"فاتورة", number, "Al Noor Trading", "Block 3, Kuwait City", "فاتورة إلى", "علبة تمر", "Delivery",
		"1.5", "12.345 KWD", "18.518 KWD", "2.000 KWD", "21.536 KWD", "5.5 %", "ملخص ضريبة القيمة المضافة", "2026-12-02", "تاريخ الاستحقاق"} {
		if !strings.Contains(read, s) {
			t.Errorf("the Arabic print view does not read %q:\n%s", s, read)
		}
	}

	p = c.Get(w + "/records/invoices/" + id + "/print?lang=bilingual")
	read = text(p.Body)
	if p.Status != 200 || !strings.Contains(p.Body, `dir="ltr"`) || !strings.Contains(read, "Invoice · فاتورة") ||
		!strings.Contains(read, "Bill to · فاتورة إلى") || !strings.Contains(read, "Dates box / علبة تمر") {
		t.Errorf("bilingual print view: %d\n%s", p.Status, read)
	}
	p = c.Get(w + "/records/invoices/" + id + "/print?lang=fr")
	if read = text(p.Body); !strings.Contains(read, "Facture Numéro "+number) || !strings.Contains(read, "Facturé à Al Noor Trading") ||
		!strings.Contains(read, "Dates box 1,5") || !strings.Contains(read, "Total TTC") || !strings.Contains(read, "N° de TVA : KW-998877") ||
		!strings.Contains(read, "Échéance 02/12/2026") {
		t.Errorf("French print view:\n%s", read)
	}

	// An unknown language names lang; another workspace's record is not found.
	if p = c.Get(w + "/records/invoices/" + id + "/print?lang=de"); p.Status != 400 || !strings.Contains(text(p.Body), "ang must be one of en, fr, ar, bilingual") {
		t.Errorf("lang=de: %d %s", p.Status, text(p.Body))
	}
	other := env.Workspace(t, "business", true, true)
	if p = c.Get("/admin/w/" + other.ID + "/records/invoices/" + id + "/print"); p.Status != 404 {
		t.Errorf("another workspace's invoice: %d", p.Status)
	}
	if p = c.Get("/admin/w/" + other.ID + "/records/invoices/" + id + "/pdf"); p.Status != 404 {
		t.Errorf("another workspace's invoice PDF: %d", p.Status)
	}
	if p = c.Get(w + "/records/bills/" + id + "/print"); p.Status != 404 {
		t.Errorf("a bill has no print view: %d", p.Status)
	}
}

// A packing slip shows what ships and where, and no prices.
func TestPackingSlipPrintViewHasNoPrices(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	so := env.Do(t, "POST", "/v1/sales-orders", key, map[string]any{"client_name": "Contoso", "shipping_address": "4 Quai des Brumes, Lyon",
		"lines": []map[string]any{{"description": "Desk lamp", "qty_milli": 3000, "unit_price_cents": 4500}}}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/sales-orders/"+so["id"].(string)+"/confirm", key, nil).WantStatus(t, 200)
	shp := env.Do(t, "POST", "/v1/shipments", key, map[string]any{"sales_order_id": so["id"]}).WantStatus(t, 201).JSON(t)
	env.Do(t, "PATCH", "/v1/company", key, map[string]any{"payment_instructions": "IBAN FR76 0000"}).WantStatus(t, 200)
	c := webtest.SignedIn(t, env)
	p := c.Get("/admin/w/" + ws.ID + "/records/shipments/" + shp["id"].(string) + "/print?lang=en")
	read := text(p.Body)
	if p.Status != 200 || !strings.Contains(read, "Packing slip "+shp["number"].(string)) || !strings.Contains(read, "Reference "+so["number"].(string)) ||
		!strings.Contains(read, "Desk lamp 3") || !strings.Contains(read, "Ship to Contoso 4 Quai des Brumes, Lyon") {
		t.Errorf("packing slip: %d\n%s", p.Status, read)
	}
	if strings.Contains(read, "Unit price") || strings.Contains(read, "45.00") || strings.Contains(read, "Total") || strings.Contains(read, "IBAN") {
		t.Errorf("the packing slip shows prices:\n%s", read)
	}
}

// pdfText is what pdftotext reads in a PDF.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no pdftotext on PATH (apt-get install poppler-utils)")
		}
		t.Skip("no pdftotext on PATH: apt-get install poppler-utils")
	}
	file := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// The admin's Download PDF is the document /v1 answers, in the document's
// language or the one chosen.
func TestAdminPDFIsTheAPIsDocument(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Boulangerie Dupont", "preferred_language": "fr"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/quotes", ws.Key, map[string]any{"client_id": cli,
		"lines": []map[string]any{{"description": "Croissants", "qty_milli": 12000, "unit_price_cents": 120, "vat_rate_bp": 550}}}).WantStatus(t, 201).JSON(t)
	id := inv["id"].(string)
	c := webtest.SignedIn(t, env)
	for _, lang := range []string{"", "?lang=ar"} {
		p := c.Get("/admin/w/" + ws.ID + "/records/quotes/" + id + "/pdf" + lang)
		if p.Status != 200 || p.Header.Get("Content-Type") != "application/pdf" ||
			p.Header.Get("Content-Disposition") != `inline; filename="`+inv["number"].(string)+`.pdf"` {
			t.Fatalf("admin PDF%s: %d %v", lang, p.Status, p.Header)
		}
		api := env.Get(t, "/v1/quotes/"+id+"/pdf"+lang, ws.Key).WantStatus(t, 200)
		got, want := pdfText(t, []byte(p.Body)), pdfText(t, api.Body)
		if got != want || !strings.Contains(got, "Croissants") {
			t.Errorf("admin PDF%s reads\n%s\n/v1 reads\n%s", lang, got, want)
		}
		if lang == "" && !strings.Contains(got, "Devis") {
			t.Errorf("the default PDF is not in the client's French:\n%s", got)
		}
	}
}
