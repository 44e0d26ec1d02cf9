package openapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/openapi"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// The served document loads and validates as OpenAPI 3.1.
func TestServedDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	r := env.Get(t, "/v1/openapi.json", "").WantStatus(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	doc, err := openapi3.NewLoader().LoadFromData(r.Body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "v1" {
		t.Fatalf("openapi %q version %q", doc.OpenAPI, doc.Info.Version)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid document: %v", err)
	}
	if doc.Components.SecuritySchemes["bearer"].Value.Scheme != "bearer" || len(doc.Security) != 1 {
		t.Fatal("no bearer security scheme")
	}
}

// Every route the server answers is in the document, with its method.
func TestDocumentHasEveryRoute(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range api.Routes() {
		p := strings.NewReplacer(":id", "{id}", ":address_id", "{address_id}").Replace(rt.Path)
		item := doc.Paths.Find(p)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("%s %s is not documented", rt.Method, p)
		}
	}
}

func TestDocumentDescribesBodiesRecordsAndFilters(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas
	body := s["ClientBody"].Value
	if len(body.Required) != 1 || body.Required[0] != "name" || body.AdditionalProperties.Has == nil || *body.AdditionalProperties.Has {
		t.Fatalf("client body: required %v, additionalProperties %v", body.Required, body.AdditionalProperties.Has)
	}
	lang := body.Properties["preferred_language"].Value
	if !lang.Type.Includes("null") || len(lang.Enum) != 5 {
		t.Fatalf("preferred_language %v %v", lang.Type, lang.Enum)
	}
	if m := s["InvoicePaymentBody"].Value.Properties["amount_incl_vat_cents"].Value; m.Min == nil || *m.Min != 0 {
		t.Fatal("money may be negative in the document")
	}
	client := s["Client"].Value
	for _, f := range []string{"id", "name", "created_at", "external_ref", "preferred_language"} {
		if client.Properties[f] == nil {
			t.Errorf("Client has no %s", f)
		}
	}
	if client.Properties["ext_key"] != nil || client.Properties["workspace_id"] != nil {
		t.Error("Client shows hidden columns")
	}
	item := s["Item"].Value
	for _, req := range item.Required {
		if req == "brand" || req == "variants" {
			t.Errorf("commerce field %s is required on items", req)
		}
	}
	if item.Properties["brand"] == nil || item.Properties["variants"] == nil {
		t.Error("items do not document their commerce fields")
	}
	list := doc.Paths.Find("/v1/sales-orders").Get
	for _, p := range []string{"limit", "offset", "q", "status", "client_id", "channel_id", "online"} {
		if list.Parameters.GetByInAndName("query", p) == nil {
			t.Errorf("sales-orders list has no %s parameter", p)
		}
	}
	if doc.Paths.Find("/v1/openapi.json").Get.Security == nil || len(*doc.Paths.Find("/v1/openapi.json").Get.Security) != 0 {
		t.Error("the document itself should need no key")
	}
	if doc.Paths.Find("/v1/clients").Post.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
		t.Error("POST does not document Idempotency-Key")
	}
}
