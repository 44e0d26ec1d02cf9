package openapi_test

import (
	"slices"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/openapi"
)

// Each document's PDF is documented as the route serves it: a GET
// answering application/pdf (binary), with lang and its four values, and
// the errors a read answers plus 400.
func TestDocumentPDFOperations(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []string{"invoices", "quotes", "credit-notes", "sales-orders", "shipments"} {
		path := "/v1/" + res + "/{id}/pdf"
		item := doc.Paths.Find(path)
		if item == nil || item.Get == nil {
			t.Errorf("%s is not documented", path)
			continue
		}
		op := item.Get
		ok := op.Responses.Value("200")
		if ok == nil || ok.Value.Content.Get("application/pdf") == nil || ok.Value.Content.Get("application/pdf").Schema.Value.Format != "binary" ||
			len(ok.Value.Content) != 1 || ok.Value.Headers["Content-Disposition"] == nil {
			t.Errorf("%s: 200 is not a binary application/pdf with its Content-Disposition", path)
		}
		lang := op.Parameters.GetByInAndName("query", "lang")
		if lang == nil || lang.Required || !slices.Equal(lang.Schema.Value.Enum, []any{"en", "fr", "ar", "bilingual"}) {
			t.Errorf("%s: lang is not the optional enum of the four languages: %+v", path, lang)
		}
		for _, st := range []string{"400", "401", "403", "404"} {
			if op.Responses.Value(st) == nil {
				t.Errorf("%s: %s is not documented", path, st)
			}
		}
	}
	if doc.Paths.Find("/v1/bills/{id}/pdf") != nil {
		t.Error("bills have no PDF")
	}
}

// An order's invoice is documented as the quote's: a POST answering the
// order, 409 among its answers, and the links both ways among the fields.
func TestOrderInvoiceOperation(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	item := doc.Paths.Find("/v1/sales-orders/{id}/invoice")
	if item == nil || item.Post == nil || item.Post.Responses.Value("200") == nil || item.Post.Responses.Value("409") == nil {
		t.Fatalf("POST /v1/sales-orders/{id}/invoice is not documented with 200 and 409: %+v", item)
	}
	for schema, field := range map[string]string{"SalesOrder": "invoice_id", "Invoice": "sales_order_id"} {
		s := doc.Components.Schemas[schema]
		if s == nil || s.Value.Properties[field] == nil {
			t.Errorf("%s has no %s", schema, field)
		}
	}
}
