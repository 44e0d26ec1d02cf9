package writes_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// A document's edit runs from the states its update declares (From), the
// rule the admin UI offers Edit by: a void invoice, credit note or bill
// and a cancelled order change no more, by PATCH or by an upsert of their
// external_ref; every other state still takes notes.
func TestEditFromTheDeclaredStates(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	for _, r := range []*resource.Resource{resource.Invoices, resource.CreditNotes, resource.Bills, resource.SalesOrders} {
		if edit, _ := r.Op(resource.Update); len(edit.From) == 0 || edit.Allowed("void") || edit.Allowed("cancelled") || !edit.Allowed("draft") {
			t.Fatalf("%s: edit declared from %v", r.Name, edit.From)
		}
	}
	party := map[string]string{"invoices": "client_name", "credit-notes": "client_name", "bills": "vendor_name", "sales-orders": "client_name"}
	end := map[string]string{"invoices": "void", "credit-notes": "void", "bills": "void", "sales-orders": "cancel"}
	for name, verb := range end {
		body := obj{party[name]: "Acme", "lines": []obj{line("x", 1000, 1000, 0)}}
		if name == "invoices" {
			body["external_ref"] = "shop::inv-1"
		}
		id := env.Do(t, "POST", "/v1/"+name, ws.Key, body).WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
		env.Do(t, "PATCH", "/v1/"+name+"/"+id, ws.Key, obj{"notes": "draft"}).WantStatus(t, http.StatusOK)
		env.Do(t, "POST", "/v1/"+name+"/"+id+"/"+verb, ws.Key, nil).WantStatus(t, http.StatusOK)
		e := env.Do(t, "PATCH", "/v1/"+name+"/"+id, ws.Key, obj{"notes": "after"}).WantError(t, http.StatusConflict, "invalid_state_transition")
		if msg, _ := e["message"].(string); !strings.Contains(msg, "cannot be edited") {
			t.Errorf("%s: %q", name, msg)
		}
		if name == "invoices" { // the upsert edits by the same rule
			env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"external_ref": "shop::inv-1", "notes": "after"}).
				WantError(t, http.StatusConflict, "invalid_state_transition")
		}
		if n := env.Get(t, "/v1/"+name+"/"+id, ws.Key).JSON(t)["notes"]; n != "draft" {
			t.Errorf("%s: notes %v after refused edits", name, n)
		}
	}
}

// Once out of draft, a document's edit takes only its late fields
// (resource.LateFields, what the admin's Edit shows); another is refused
// naming it as param, and nothing changes.
func TestEditAfterDraftTakesTheLateFieldsOnly(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	for name, c := range map[string]struct{ party, move, late, value, says string }{
		"invoices":     {"client_name", "send", "due_date", "2026-12-31", "a sent invoice can only change notes, due_date and external_ref; lines changes only while it is a draft"},
		"credit-notes": {"client_name", "issue", "due_date", "2026-12-31", "an issued credit note can only change notes and due_date; lines changes only while it is a draft"},
		"bills":        {"vendor_name", "open", "due_date", "2026-12-31", "an open bill can only change notes and due_date; lines changes only while it is a draft"},
		"sales-orders": {"client_name", "confirm", "shipping_address", "Lyon", "a confirmed sales order can only change notes and shipping_address; lines changes only while it is a draft"},
	} {
		path := "/v1/" + name + "/" + env.Do(t, "POST", "/v1/"+name, ws.Key, obj{c.party: "Acme", "lines": []obj{line("x", 1000, 1000, 0)}}).
			WantStatus(t, http.StatusCreated).JSON(t)["id"].(string)
		env.Do(t, "POST", path+"/"+c.move, ws.Key, obj{}).WantStatus(t, http.StatusOK)
		e := env.Do(t, "PATCH", path, ws.Key, obj{"notes": "n", "lines": []obj{line("y", 2000, 1000, 0)}}).
			WantError(t, http.StatusConflict, "invalid_state_transition")
		if e["param"] != "lines" || e["message"] != c.says {
			t.Errorf("%s: param %v, %q; want lines, %q", name, e["param"], e["message"], c.says)
		}
		if got := env.Get(t, path, ws.Key).JSON(t); got["notes"] != "" || len(got["lines"].([]any)) != 1 {
			t.Errorf("%s changed by a refused edit: %v", name, got)
		}
		env.Do(t, "PATCH", path, ws.Key, obj{"notes": "n", c.late: c.value}).
			WantStatus(t, http.StatusOK)
	}
}
