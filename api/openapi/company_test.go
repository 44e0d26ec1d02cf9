package openapi_test

import (
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/openapi"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// The company profile is a singleton: GET and PATCH at /v1/company with no
// id, its record the fields of its update (each nullable, always present)
// and updated_at, its body closed with the logo's bound stated.
func TestDocumentDescribesTheCompanySingleton(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	item := doc.Paths.Find("/v1/company")
	if item == nil || item.Get == nil || item.Patch == nil || item.Post != nil || item.Delete != nil {
		t.Fatalf("/v1/company: %+v", item)
	}
	if doc.Paths.Find("/v1/company/{id}") != nil {
		t.Fatal("the company profile has an id path")
	}
	if item.Get.OperationID != "getCompany" || item.Patch.OperationID != "updateCompany" || len(item.Get.Parameters) != 0 {
		t.Fatalf("operations %s %s, parameters %v", item.Get.OperationID, item.Patch.OperationID, item.Get.Parameters)
	}
	if !strings.Contains(item.Patch.Description, "only the admin role") {
		t.Errorf("PATCH does not say who may change it: %q", item.Patch.Description)
	}
	rec := doc.Components.Schemas["Company"].Value
	op, _ := resource.Company.Op(resource.Update)
	if len(rec.Properties) != len(op.Body)+1 || len(rec.Required) != len(rec.Properties) || rec.Properties["updated_at"] == nil {
		t.Fatalf("Company: properties %d, required %v", len(rec.Properties), rec.Required)
	}
	for _, f := range op.Body {
		if p := rec.Properties[f.Name]; p == nil || !p.Value.Type.Includes("null") {
			t.Errorf("Company.%s is missing or not nullable", f.Name)
		}
	}
	body := doc.Components.Schemas["CompanyBody"].Value
	if body.AdditionalProperties.Has == nil || *body.AdditionalProperties.Has || len(body.Required) != 0 {
		t.Fatalf("CompanyBody: additionalProperties %v, required %v", body.AdditionalProperties.Has, body.Required)
	}
	if logo := body.Properties["logo"].Value; logo.MaxLength == nil || int(*logo.MaxLength) != resource.LogoMaxLen {
		t.Errorf("logo's maxLength %v, want %d", logo.MaxLength, resource.LogoMaxLen)
	}
	if c := body.Properties["country"].Value; c.Pattern != "^[A-Z]{2}$" {
		t.Errorf("country's pattern %q", c.Pattern)
	}
}
