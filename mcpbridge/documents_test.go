package mcpbridge_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// get_invoice_pdf answers the invoice's PDF from GET /v1/invoices/{id}/pdf
// as an embedded resource (application/pdf, the bytes as a blob) that
// pdftotext reads; a language the API refuses is a tool error naming lang.
func documentPDFIsAnEmbeddedResource(t *testing.T, f *fixture) {
	ws := f.business(t)
	inv := f.env.Do(t, "POST", "/v1/invoices", ws.Key, map[string]any{"client_name": "Fabrikam", "currency_code": "KWD",
		"lines": []map[string]any{{"description": "Survey", "qty_milli": 1000, "unit_price_cents": 1234}}}).WantStatus(t, 201).JSON(t)
	id, number := inv["id"].(string), inv["number"].(string)
	s := f.stdio(t, ws.Key)
	res, _ := s.call(t, "get_invoice_pdf", map[string]any{"id": id, "lang": "fr"})
	if res.IsError {
		t.Fatalf("get_invoice_pdf failed: %s", text(res))
	}
	var pdf *sdk.ResourceContents
	for _, c := range res.Content {
		if e, ok := c.(*sdk.EmbeddedResource); ok {
			pdf = e.Resource
		}
	}
	if pdf == nil || pdf.MIMEType != "application/pdf" || !bytes.HasPrefix(pdf.Blob, []byte("%PDF-")) ||
		!strings.HasSuffix(pdf.URI, "/v1/invoices/"+id+"/pdf") {
		t.Fatalf("get_invoice_pdf answered no PDF resource: %+v", res.Content)
	}
	if !strings.Contains(text(res), number+".pdf") {
		t.Errorf("the text does not name the file: %q", text(res))
	}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		file := filepath.Join(t.TempDir(), "inv.pdf")
		if err := os.WriteFile(file, pdf.Blob, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("pdftotext", file, "-").Output()
		read := strings.Join(strings.Fields(string(out)), " ")
		if err != nil || !strings.Contains(read, "Facture") || !strings.Contains(read, number) || !strings.Contains(read, "1,234 KWD") {
			t.Errorf("pdftotext of the tool's PDF: %v\n%s", err, read)
		}
	}
	if e := s.toolError(t, "get_invoice_pdf", map[string]any{"id": id, "lang": "de"}, "invalid_request"); e["param"] != "lang" {
		t.Errorf("lang=de names %v", e["param"])
	}
	s.toolError(t, "get_invoice_pdf", map[string]any{"id": "inv_00000000000000000000000000"}, "not_found")
}
