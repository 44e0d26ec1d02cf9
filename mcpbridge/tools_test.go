package mcpbridge

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Every endpoint of the declarations is one tool with a unique name a
// client accepts, and every input schema compiles (mcp-go silently skips
// validating a tool whose schema does not).
func TestEveryEndpointIsOneToolWithAValidSchema(t *testing.T) {
	t.Parallel()
	tools := Tools()
	if len(tools) != len(resource.Endpoints()) {
		t.Fatalf("%d tools for %d endpoints", len(tools), len(resource.Endpoints()))
	}
	valid := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	seen := map[string]bool{}
	for _, tl := range tools {
		if !valid.MatchString(tl.Name) || seen[tl.Name] {
			t.Errorf("tool name %q is invalid or repeated", tl.Name)
		}
		seen[tl.Name] = true
		if tl.Description == "" || tl.Title == "" {
			t.Errorf("%s has no description or title", tl.Name)
		}
		raw, err := json.Marshal(tl.Schema)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(tl.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(tl.Name + ".json"); err != nil {
			t.Errorf("%s: schema does not compile: %v\n%s", tl.Name, err, raw)
		}
	}
}

func toolNamed(t *testing.T, name string) Tool {
	t.Helper()
	for _, tl := range Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return Tool{}
}

// Arguments become the endpoint's path, query and body.
func TestArgumentsBecomeTheRequest(t *testing.T) {
	t.Parallel()
	pay := toolNamed(t, "add_invoice_payment")
	path, q, body, err := pay.request(map[string]any{"invoice_id": "inv_1/x", "id": "p-1", "number": "R1"})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/invoices/inv_1%2Fx/payments" || q != nil || body["id"] != "p-1" || body["invoice_id"] != nil {
		t.Fatalf("path %s query %v body %v", path, q, body)
	}
	adr := toolNamed(t, "update_address")
	if path, _, _, _ = adr.request(map[string]any{"client_id": "cli_1", "address_id": "adr_2", "name": "HQ"}); path != "/v1/clients/cli_1/addresses/adr_2" {
		t.Fatalf("address path %s", path)
	}
	so := toolNamed(t, "list_sales_orders")
	path, q, body, err = so.request(map[string]any{"online": true, "limit": float64(5), "payment_status": "paid"})
	if err != nil || path != "/v1/sales-orders" || body != nil || q.Encode() != "limit=5&online=true&payment_status=paid" {
		t.Fatalf("path %s query %s body %v err %v", path, q.Encode(), body, err)
	}
	if _, _, _, err := toolNamed(t, "get_invoice").request(map[string]any{}); err == nil {
		t.Fatal("a missing id must be refused before any call")
	}
}
