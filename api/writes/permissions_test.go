package writes_test

import (
	"net/http"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

func TestKeysWithoutWriteAccessGet403AndChangeNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	ws.Role(t, "reader", "clients:read,invoices:read,vendors:read,bills:read")
	ws.Role(t, "clerk", "clients:write,invoices:read")
	unlimited := 0
	keys := map[string]string{
		"viewer":           ws.NewKey(t, access.KeySpec{Role: access.RoleViewer, RateLimit: &unlimited}),
		"custom read only": ws.NewKey(t, access.KeySpec{Role: "reader", RateLimit: &unlimited}),
		"write on another": ws.NewKey(t, access.KeySpec{Role: "clerk", RateLimit: &unlimited}),
	}
	cli := newClient(t, env, ws.Key)
	addr := env.Do(t, "POST", "/v1/clients/"+cli+"/addresses", ws.Key, map[string]any{"name": "HQ"}).WantStatus(t, 201).JSON(t)["id"].(string)
	ven := env.Do(t, "POST", "/v1/vendors", ws.Key, map[string]any{"name": "Paper"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 1000)
	bl := newBill(t, env, ws, bill.StatusOpen, 1000)
	writes := []struct {
		method, path string
		body         map[string]any
		needs        string
	}{
		{"POST", "/v1/clients", map[string]any{"name": "New"}, "clients"},
		{"PATCH", "/v1/clients/" + cli, map[string]any{"name": "Renamed"}, "clients"},
		{"POST", "/v1/clients/" + cli + "/addresses", map[string]any{"name": "New"}, "clients"},
		{"PATCH", "/v1/clients/" + cli + "/addresses/" + addr, map[string]any{"name": "Renamed"}, "clients"},
		{"POST", "/v1/invoices/" + inv + "/payments", payment("p", 10), "invoices"},
		{"POST", "/v1/bills/" + bl + "/payments", map[string]any{"id": "p", "amount_incl_vat_cents": 10}, "bills"},
		{"POST", "/v1/vendors", map[string]any{"name": "New"}, "vendors"},
		{"PATCH", "/v1/vendors/" + ven, map[string]any{"name": "Renamed"}, "vendors"},
	}
	for role, key := range keys {
		for _, w := range writes {
			if role == "write on another" && w.needs == "clients" {
				continue // the clerk may write clients
			}
			t.Run(role+" "+w.method+" "+w.path, func(t *testing.T) {
				env.Do(t, w.method, w.path, key, w.body).WantError(t, http.StatusForbidden, "permission_denied")
				// Reads stay allowed.
				env.Get(t, "/v1/invoices/"+inv, key).WantStatus(t, http.StatusOK)
			})
		}
	}
	if n := total(t, env, "/v1/clients", ws.Key); n != 1 {
		t.Fatalf("%d clients, want 1", n)
	}
	if n := total(t, env, "/v1/vendors", ws.Key); n != 1 {
		t.Fatalf("%d vendors, want 1", n)
	}
	if n := total(t, env, "/v1/clients/"+cli+"/addresses", ws.Key); n != 1 {
		t.Fatalf("%d addresses, want 1", n)
	}
	if got := env.Get(t, "/v1/clients/"+cli, ws.Key).JSON(t); got["name"] != "Acme" {
		t.Fatalf("client changed: %v", got)
	}
	if got := env.Get(t, "/v1/vendors/"+ven, ws.Key).JSON(t); got["name"] != "Paper" {
		t.Fatalf("vendor changed: %v", got)
	}
	if _, paid, _ := balanceOf(t, env, "/v1/invoices/"+inv, ws.Key); paid != 0 {
		t.Fatalf("invoice paid %d", paid)
	}
	if _, paid, _ := balanceOf(t, env, "/v1/bills/"+bl, ws.Key); paid != 0 {
		t.Fatalf("bill paid %d", paid)
	}
	// The clerk writes clients but not invoices.
	env.Do(t, "PATCH", "/v1/clients/"+cli, keys["write on another"], map[string]any{"name": "Acme"}).WantStatus(t, http.StatusOK)
}
