package rest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// pdfText is what pdftotext reads in a PDF, after qpdf --check passed on it.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	for _, tool := range []string{"pdftotext", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("no %s on PATH (apt-get install poppler-utils qpdf)", tool)
			}
			t.Skipf("no %s on PATH: apt-get install poppler-utils qpdf", tool)
		}
	}
	file := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qpdf", "--check", file).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// GET /v1/invoices/{id}/pdf is the invoice as a PDF: qpdf finds it sound,
// pdftotext reads its number, client, lines and amounts; it is read as
// the record is (404 elsewhere, 403 without the right to read invoices),
// and lang is checked.
func TestInvoicePDFRoute(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Northwind Traders", "address": "1 Harbour Road, Leeds", "currency_code": "JPY"}).
		WantStatus(t, 201).JSON(t)["id"].(string)
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_id": cli, "date": "2026-11-02", "due_date": "2026-12-02",
		"lines": []obj{
			{"description": "Consulting days", "qty_milli": 2500, "unit_price_cents": 48000, "vat_rate_bp": 1000},
			{"description": "Travel costs", "qty_milli": 1000, "unit_price_cents": 13550},
		}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"legal_name": "Ledger & Co Ltd", "vat_number": "GB123456789",
		"payment_instructions": "Sort code 12-34-56, account 12345678"}).WantStatus(t, 200)

	res := env.Get(t, "/v1/invoices/"+id+"/pdf", ws.Key).WantStatus(t, 200)
	if ct := res.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := res.Header.Get("Content-Disposition"); cd != `inline; filename="`+number+`.pdf"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	read := pdfText(t, res.Body)
	for _, s := range []string{"Ledger & Co Ltd", "GB123456789", "Sort code 12-34-56, account 12345678",
		number, "Northwind Traders", "1 Harbour Road, Leeds", "Consulting days", "Travel costs",
		"¥120,000", "¥13,550", "¥145,550", "2 Dec 2026"} {
		if !strings.Contains(read, s) {
			t.Errorf("the PDF does not read %q:\n%s", s, read)
		}
	}
	if strings.Contains(read, "120,000.00") {
		t.Errorf("yen shown with decimals:\n%s", read)
	}
	fr := pdfText(t, env.Get(t, "/v1/invoices/"+id+"/pdf?lang=fr", ws.Key).WantStatus(t, 200).Body)
	if !strings.Contains(fr, "Facture") || !strings.Contains(fr, "Consulting days") {
		t.Errorf("lang=fr:\n%s", fr)
	}

	if e := env.Get(t, "/v1/invoices/"+id+"/pdf?lang=de", ws.Key).WantError(t, 400, "invalid_request"); e["param"] != "lang" {
		t.Errorf("lang=de names %v", e["param"])
	}
	if e := env.Get(t, "/v1/invoices/"+id+"/pdf?format=a5", ws.Key).WantError(t, 400, "invalid_request"); e["param"] != "format" {
		t.Errorf("an unknown parameter names %v", e["param"])
	}
	other := env.Workspace(t, "growth", false, false)
	env.Get(t, "/v1/invoices/"+id+"/pdf", other.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/invoices/inv_00000000000000000000000000/pdf", ws.Key).WantError(t, 404, "not_found")
	ws.Role(t, "address book", "clients:read")
	clerk := ws.NewKey(t, access.KeySpec{Role: "address book"})
	env.Get(t, "/v1/invoices/"+id+"/pdf", clerk).WantError(t, 403, "permission_denied")
	env.Get(t, "/v1/clients/"+cli, clerk).WantStatus(t, 200)
}

// Every document's route answers its PDF: a quote, a credit note, an order
// confirmation and a packing slip, each with its title and lines; the
// packing slip without prices.
func TestEveryDocumentHasItsPDF(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	line := []obj{{"description": "Desk lamp", "qty_milli": 3000, "unit_price_cents": 4500, "vat_rate_bp": 2000}}
	quo := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "Contoso", "lines": line}).WantStatus(t, 201).JSON(t)
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Contoso", "lines": line}).WantStatus(t, 201).JSON(t)
	crn := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv["id"], "lines": line}).WantStatus(t, 201).JSON(t)
	so := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Contoso", "shipping_address": "4 Quai des Brumes, Lyon", "lines": line}).
		WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/sales-orders/"+so["id"].(string)+"/confirm", ws.Key, nil).WantStatus(t, 200)
	shp := env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": so["id"]}).WantStatus(t, 201).JSON(t)
	for _, c := range []struct {
		path  string
		rec   map[string]any
		title string
	}{{"quotes", quo, "Quote"}, {"credit-notes", crn, "Credit note"}, {"sales-orders", so, "Order confirmation"}, {"shipments", shp, "Packing slip"}} {
		read := pdfText(t, env.Get(t, "/v1/"+c.path+"/"+c.rec["id"].(string)+"/pdf", ws.Key).WantStatus(t, 200).Body)
		if !strings.Contains(read, c.title) || !strings.Contains(read, c.rec["number"].(string)) || !strings.Contains(read, "Contoso") ||
			!strings.Contains(read, "Desk lamp") {
			t.Errorf("%s PDF:\n%s", c.path, read)
		}
		if priced := strings.Contains(read, "€135.00"); priced == (c.path == "shipments") {
			t.Errorf("%s PDF shows prices: %v\n%s", c.path, priced, read)
		}
	}
}
