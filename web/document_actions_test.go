package web_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var actionBar = regexp.MustCompile(`(?s)<div class="actions record-actions">(.*?)</div>`)

// actionsOn is the labels of a record page's action bar, in order.
func actionsOn(body string) []string {
	m := actionBar.FindStringSubmatch(body)
	if m == nil {
		return nil
	}
	var out []string
	for _, b := range regexp.MustCompile(`(?s)<(?:a|button)[^>]*>(.*?)</(?:a|button)>`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, strings.TrimSuffix(text(b[1]), "…"))
	}
	return out
}

// Each document's page offers, in each state, only what that state
// allows: Edit until void or cancelled, payments until settled, Delete on
// drafts, each action from its declared states, Invoice on an order once
// confirmed, New return once something of an online order was delivered.
// Two offers wait on the admin's action bar (web/forms.go actionsOf):
// "Credit this invoice" by resource.FollowUps (not on a draft or void
// invoice), and Invoice not on an order that has its invoice; the checks
// leave those two out.
func TestDocumentActionsFollowTheState(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID + "/records/"
	// offers is what a page offers, but the credit note and pending.
	offers := func(path string, pending ...string) []string {
		return slices.DeleteFunc(actionsOn(c.Get(w+path).Body), func(a string) bool {
			return a == "New credit note" || a == "Credit this invoice" || slices.Contains(pending, a)
		})
	}
	want := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s offers %q, want %q", what, got, want)
		}
	}
	check := func(what, path string, actions ...string) { t.Helper(); want(what, offers(path), actions...) }
	lines := []map[string]any{{"description": "A", "qty_milli": 1000, "unit_price_cents": 1000}}
	mk := func(res string, body map[string]any) string {
		return env.Do(t, "POST", "/v1/"+res, key, body).WantStatus(t, 201).JSON(t)["id"].(string)
	}
	do := func(path string, body any) { env.Do(t, "POST", "/v1/"+path, key, body).WantStatus(t, 200) }
	pay := func(inv, id string, n int) {
		env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", key, map[string]any{"id": id, "number": id, "status": "completed",
			"date": "2026-11-10", "amount_incl_vat_cents": n}).WantStatus(t, 201)
	}
	inv := mk("invoices", map[string]any{"client_name": "A", "lines": lines})
	check("a draft invoice", "invoices/"+inv, "Edit", "Delete", "Send", "Void")
	do("invoices/"+inv+"/send", `{"email":false}`)
	check("a sent invoice", "invoices/"+inv, "Edit", "Void", "Record invoice payment")
	pay(inv, "p1", 400)
	check("a partly paid invoice", "invoices/"+inv, "Edit", "Record invoice payment")
	pay(inv, "p2", 600)
	check("a paid invoice", "invoices/"+inv, "Edit")
	void := mk("invoices", map[string]any{"client_name": "A", "lines": lines})
	do("invoices/"+void+"/void", nil)
	check("a void invoice", "invoices/"+void)

	q := mk("quotes", map[string]any{"client_name": "A", "lines": lines})
	check("a draft quote", "quotes/"+q, "Edit", "Send")
	do("quotes/"+q+"/send", `{"email":false}`)
	check("a sent quote", "quotes/"+q, "Edit", "Accept", "Decline")
	do("quotes/"+q+"/accept", nil)
	check("an accepted quote", "quotes/"+q, "Edit", "Invoice")
	do("quotes/"+q+"/invoice", nil)
	check("an invoiced quote", "quotes/"+q, "Edit")

	cr := mk("credit-notes", map[string]any{"client_name": "A", "lines": lines})
	check("a draft credit note", "credit-notes/"+cr, "Edit", "Issue", "Void")
	do("credit-notes/"+cr+"/issue", `{"email":false}`)
	check("an issued credit note", "credit-notes/"+cr, "Edit", "Apply", "Void")
	do("credit-notes/"+cr+"/void", nil)
	check("a void credit note", "credit-notes/"+cr)

	b := mk("bills", map[string]any{"vendor_name": "V", "lines": lines})
	check("a draft bill", "bills/"+b, "Edit", "Delete", "Open", "Void")
	do("bills/"+b+"/open", nil)
	check("an open bill", "bills/"+b, "Edit", "Void", "Record bill payment")

	so := mk("sales-orders", map[string]any{"client_name": "A", "lines": lines})
	check("a draft order", "sales-orders/"+so, "Edit", "Confirm", "Cancel")
	do("sales-orders/"+so+"/confirm", nil)
	check("a confirmed order", "sales-orders/"+so, "Edit", "Cancel", "Invoice", "New shipment")
	do("sales-orders/"+so+"/invoice", nil)
	want("an invoiced order", offers("sales-orders/"+so, "Invoice"), "Edit", "Cancel", "New shipment")
	gone := mk("sales-orders", map[string]any{"client_name": "A", "lines": lines})
	do("sales-orders/"+gone+"/cancel", nil)
	check("a cancelled order", "sales-orders/"+gone)

	// An online order: a return once something was delivered.
	st, err := env.DB.Writer.Store.Create().SetWorkspaceID(ws.ID).SetName("Shop").SetFreeAddress("shop.example").Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	on := mk("sales-orders", map[string]any{"client_name": "A", "store_id": st.ID, "lines": lines,
		"payments": []map[string]any{{"kind": "capture", "amount_cents": 1000}}})
	check("a new online order", "sales-orders/"+on, "Edit", "Cancel", "Invoice", "New shipment")
	shp := env.Do(t, "POST", "/v1/shipments", key, map[string]any{"sales_order_id": on}).WantStatus(t, 201).JSON(t)["id"].(string)
	check("a shipped online order", "sales-orders/"+on, "Edit", "Invoice")
	env.Do(t, "PATCH", "/v1/shipments/"+shp, key, map[string]any{"sales_order_id": on, "status": "delivered"}).WantStatus(t, 200)
	check("a delivered online order", "sales-orders/"+on, "Edit", "Invoice", "New return")
}
