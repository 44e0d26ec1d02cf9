package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
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
	endpoints := append(resource.Endpoints(), resource.EventEndpoints()...)
	if len(tools) != len(endpoints) {
		t.Fatalf("%d tools for %d endpoints", len(tools), len(endpoints))
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
	for args, want := range map[string]string{
		`{}`:          "id is required: the invoice's id (inv_...)",
		`{"id":null}`: "id is required: the invoice's id (inv_...)",
		`{"id":7}`:    "id must be a string: the invoice's id (inv_...)",
		`{"id":" "}`:  "id must not be empty: the invoice's id (inv_...)",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(args), &m)
		_, _, _, err := toolNamed(t, "get_invoice").request(m)
		var ae *argError
		if !errors.As(err, &ae) || ae.param != "id" || ae.msg != want {
			t.Errorf("get_invoice %s: %v, want %q about id", args, err, want)
		}
	}
	_, _, _, err = toolNamed(t, "list_addresses").request(map[string]any{})
	if err == nil || err.Error() != "client_id is required: the client's id (cli_...)" {
		t.Errorf("list_addresses {}: %v", err)
	}
}

// Names pair: the list of a record type and the get of one of them use the
// same noun (list_online_payments, get_online_payment), so a model that
// found one guesses the other.
func TestListAndGetToolsPair(t *testing.T) {
	t.Parallel()
	for _, r := range resource.All {
		if r == resource.Me {
			continue
		}
		_, hasList := r.Op(resource.List)
		_, hasGet := r.Op(resource.Get)
		if !hasList || !hasGet {
			continue
		}
		list, get := toolName(resource.Endpoint{Resource: r, Op: resource.Op{Kind: resource.List}}),
			toolName(resource.Endpoint{Resource: r, Op: resource.Op{Kind: resource.Get}})
		noun := strings.TrimPrefix(get, "get_")
		plurals := []string{noun + "s", noun + "es", strings.TrimSuffix(noun, "y") + "ies"}
		if !slices.Contains(plurals, strings.TrimPrefix(list, "list_")) {
			t.Errorf("%s does not pair with %s: set the resource's Plural", list, get)
		}
	}
}

// Fields declared UpdateOnly (a shipment's status) are offered by the
// update tools only.
func TestUpdateOnlyFieldsOnlyOnUpdates(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, tl := range Tools() {
		for _, f := range tl.Endpoint.Op.Body {
			if !f.UpdateOnly {
				continue
			}
			seen++
			raw, _ := json.Marshal(tl.Schema)
			var s struct{ Properties map[string]any }
			_ = json.Unmarshal(raw, &s)
			if _, offered := s.Properties[f.Name]; offered != (tl.Endpoint.Op.Kind == resource.Update) {
				t.Errorf("%s (%s) offers the update-only field %s: %v", tl.Name, tl.Endpoint.Op.Kind, f.Name, offered)
			}
		}
	}
	if seen < 2 {
		t.Fatalf("no update-only field declared on both a create and an update (shipment status): %d", seen)
	}
}
