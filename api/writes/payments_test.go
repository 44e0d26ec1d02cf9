package writes_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// newInvoice stores an invoice of amount cents (no endpoint creates one).
func newInvoice(t *testing.T, env *apitest.Env, ws *apitest.Workspace, status invoice.Status, amount int64) string {
	t.Helper()
	inv, err := env.DB.Writer.Invoice.Create().SetWorkspaceID(ws.ID).SetNumber("INV-1").SetDate("2026-01-05").
		SetStatus(status).SetCurrencyCode("EUR").SetClientName("Acme").
		SetAmountInclVatCents(amount).SetRemainingCents(amount).Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return inv.ID
}

func newBill(t *testing.T, env *apitest.Env, ws *apitest.Workspace, status bill.Status, amount int64) string {
	t.Helper()
	b, err := env.DB.Writer.Bill.Create().SetWorkspaceID(ws.ID).SetNumber("B-1").SetDate("2026-01-05").
		SetStatus(status).SetCurrencyCode("EUR").SetVendorName("Paper Co").
		SetAmountInclVatCents(amount).SetRemainingCents(amount).Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

func payment(id string, cents int64) map[string]any {
	return map[string]any{"id": id, "number": "PAY-" + id, "status": "completed", "date": "2026-01-10", "amount_incl_vat_cents": cents}
}

// balanceOf reads a document's status, paid_cents and remaining_cents.
func balanceOf(t *testing.T, env *apitest.Env, path, key string) (string, int64, int64) {
	t.Helper()
	var d struct {
		Status         string
		PaidCents      int64 `json:"paid_cents"`
		RemainingCents int64 `json:"remaining_cents"`
	}
	env.Get(t, path, key).WantStatus(t, http.StatusOK).Decode(t, &d)
	return d.Status, d.PaidCents, d.RemainingCents
}

func TestPartialThenFinalInvoicePayment(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 10000)
	path := "/v1/invoices/" + inv

	p1 := env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-1", 4000)).WantStatus(t, http.StatusCreated).JSON(t)
	if id, _ := p1["id"].(string); !strings.HasPrefix(id, "ipay_") || p1["external_id"] != "bank-1" || p1["invoice_id"] != inv ||
		p1["amount_incl_vat_cents"] != 4000.0 || p1["remaining_cents"] != 6000.0 || p1["currency_code"] != "EUR" ||
		p1["client_name"] != "Acme" || p1["status"] != "completed" || p1["date"] != "2026-01-10" {
		t.Fatalf("payment %v", p1)
	}
	if s, paid, rem := balanceOf(t, env, path, ws.Key); s != "partially_paid" || paid != 4000 || rem != 6000 {
		t.Fatalf("after partial: %s paid %d remaining %d", s, paid, rem)
	}
	// The same id again is the same payment (200), applied once.
	again := env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-1", 4000)).WantStatus(t, http.StatusOK).JSON(t)
	if again["id"] != p1["id"] {
		t.Fatalf("repeated id recorded %v, want %v", again["id"], p1["id"])
	}
	// More than the open balance is refused and changes nothing.
	env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-2", 6001)).WantError(t, http.StatusConflict, "amount_exceeds_balance")
	// A pending payment is recorded without being applied.
	env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "bank-p", "number": "P", "status": "pending", "date": "2026-01-11", "amount_incl_vat_cents": 6000}).
		WantStatus(t, http.StatusCreated)
	if s, paid, rem := balanceOf(t, env, path, ws.Key); s != "partially_paid" || paid != 4000 || rem != 6000 {
		t.Fatalf("after refused and pending: %s paid %d remaining %d", s, paid, rem)
	}
	final := env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-3", 6000)).WantStatus(t, http.StatusCreated).JSON(t)
	if final["remaining_cents"] != 0.0 {
		t.Fatalf("final payment %v", final)
	}
	if s, paid, rem := balanceOf(t, env, path, ws.Key); s != "paid" || paid != 10000 || rem != 0 {
		t.Fatalf("after final: %s paid %d remaining %d", s, paid, rem)
	}
	// A repeat of the first payment after the invoice is paid is still a 200, not a 409.
	env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-1", 4000)).WantStatus(t, http.StatusOK)
	env.Do(t, "POST", path+"/payments", ws.Key, payment("bank-4", 1)).WantError(t, http.StatusConflict, "amount_exceeds_balance")
	if n := total(t, env, path+"/payments", ws.Key); n != 3 {
		t.Fatalf("%d payments, want 3", n)
	}
}

func TestInvoicePaymentRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	sent := newInvoice(t, env, ws, invoice.StatusSent, 5000)
	draft := newInvoice(t, env, ws, invoice.StatusDraft, 5000)
	void := newInvoice(t, env, ws, invoice.StatusVoid, 5000)
	other := newInvoice(t, env, ws, invoice.StatusSent, 5000)
	env.Do(t, "POST", "/v1/invoices/"+other+"/payments", ws.Key, payment("taken", 1)).WantStatus(t, http.StatusCreated)

	with := func(extra map[string]any) map[string]any {
		p := payment("p1", 100)
		for k, v := range extra {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return p
	}
	cases := []struct {
		name, invoice string
		body          map[string]any
		status        int
		code, param   string
	}{
		{"draft invoice", draft, with(nil), 409, "invalid_state_transition", ""},
		{"void invoice", void, with(nil), 409, "invalid_state_transition", ""},
		{"another currency", sent, with(map[string]any{"currency_code": "USD"}), 400, "invalid_request", "currency_code"},
		{"id used on another invoice", sent, payment("taken", 1), 409, "duplicate", ""},
		{"negative amount", sent, with(map[string]any{"amount_incl_vat_cents": -1}), 400, "invalid_request", "amount_incl_vat_cents"},
		{"fractional amount", sent, with(map[string]any{"amount_incl_vat_cents": 1.5}), 400, "invalid_request", "amount_incl_vat_cents"},
		{"amount as a string", sent, with(map[string]any{"amount_incl_vat_cents": "100"}), 400, "invalid_request", "amount_incl_vat_cents"},
		{"malformed date", sent, with(map[string]any{"date": "10/01/2026"}), 400, "invalid_request", "date"},
		{"impossible date", sent, with(map[string]any{"date": "2026-02-30"}), 400, "invalid_request", "date"},
		{"missing id", sent, with(map[string]any{"id": nil}), 400, "invalid_request", "id"},
		{"missing number", sent, with(map[string]any{"number": nil}), 400, "invalid_request", "number"},
		{"unknown status", sent, with(map[string]any{"status": "done"}), 400, "invalid_request", "status"},
		{"unknown client", sent, with(map[string]any{"client_id": "cli_nope"}), 400, "invalid_request", "client_id"},
		{"unknown invoice", "inv_nope", with(nil), 404, "not_found", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := env.Do(t, "POST", "/v1/invoices/"+c.invoice+"/payments", ws.Key, c.body).WantError(t, c.status, c.code)
			if c.param != "" && e["param"] != c.param {
				t.Fatalf("param %v, want %s", e["param"], c.param)
			}
		})
	}
	for _, inv := range []string{sent, draft, void} {
		if n := total(t, env, "/v1/invoices/"+inv+"/payments", ws.Key); n != 0 {
			t.Fatalf("refused payments recorded %d on %s", n, inv)
		}
	}
	if s, paid, rem := balanceOf(t, env, "/v1/invoices/"+sent, ws.Key); s != "sent" || paid != 0 || rem != 5000 {
		t.Fatalf("refused payments changed the invoice: %s %d %d", s, paid, rem)
	}
	// Another workspace can neither see nor pay the invoice.
	ws2 := env.Workspace(t, "starter", false, false)
	env.Do(t, "POST", "/v1/invoices/"+sent+"/payments", ws2.Key, payment("x", 1)).WantError(t, 404, "not_found")
}

func TestBillPayments(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	b := newBill(t, env, ws, bill.StatusOpen, 3000)
	path := "/v1/bills/" + b
	// Only id is required: status defaults to completed, date to today.
	p := env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "wire-1", "amount_incl_vat_cents": 1000}).
		WantStatus(t, http.StatusCreated).JSON(t)
	if id, _ := p["id"].(string); !strings.HasPrefix(id, "bpay_") || p["status"] != "completed" || p["date"] == "" || p["vendor_name"] != "Paper Co" ||
		p["remaining_cents"] != 2000.0 || p["external_id"] != "wire-1" {
		t.Fatalf("bill payment %v", p)
	}
	if s, paid, rem := balanceOf(t, env, path, ws.Key); s != "partially_paid" || paid != 1000 || rem != 2000 {
		t.Fatalf("after partial: %s %d %d", s, paid, rem)
	}
	env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "wire-1", "amount_incl_vat_cents": 1000}).WantStatus(t, http.StatusOK)
	env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "wire-2", "amount_incl_vat_cents": 2001}).WantError(t, 409, "amount_exceeds_balance")
	env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "wire-3", "amount_incl_vat_cents": 5, "currency_code": "GBP"}).WantError(t, 400, "invalid_request")
	env.Do(t, "POST", path+"/payments", ws.Key, map[string]any{"id": "wire-4", "amount_incl_vat_cents": 2000}).WantStatus(t, http.StatusCreated)
	if s, paid, rem := balanceOf(t, env, path, ws.Key); s != "paid" || paid != 3000 || rem != 0 {
		t.Fatalf("after final: %s %d %d", s, paid, rem)
	}
	for _, st := range []bill.Status{bill.StatusDraft, bill.StatusVoid} {
		id := newBill(t, env, ws, st, 100)
		env.Do(t, "POST", "/v1/bills/"+id+"/payments", ws.Key, map[string]any{"id": fmt.Sprint("w-", st), "amount_incl_vat_cents": 1}).
			WantError(t, 409, "invalid_state_transition")
	}
	if n := total(t, env, path+"/payments", ws.Key); n != 2 {
		t.Fatalf("%d bill payments, want 2", n)
	}
}

// A refusal that quotes an amount names it in the document's currency as
// people read it, a quantity as a decimal, and carries the body field it
// concerns, so a form shows it beside that field.
func TestConflictsNameAmountsAsPeopleReadThem(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 24828)
	jpy := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Tanaka", "currency_code": "JPY",
		"lines": []obj{line("Tea", 1000, 1200, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+jpy+"/send", ws.Key, obj{"email": false}).WantStatus(t, 200)
	crn := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"client_name": "Tanaka", "currency_code": "JPY",
		"lines": []obj{line("Refund", 1000, 1500, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/credit-notes/"+crn+"/issue", ws.Key, obj{"email": false}).WantStatus(t, 200)
	so := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Ada", "status": "confirmed",
		"lines": []obj{line("Mug", 1500, 500, 0)}}).WantStatus(t, 201).JSON(t)
	lineID := so["lines"].([]any)[0].(obj)["id"].(string)
	for _, c := range []struct {
		name, path        string
		body              any
		code, param, says string
	}{
		{"payment over the balance", "/v1/invoices/" + inv + "/payments", payment("big", 30000), "amount_exceeds_balance",
			"amount_incl_vat_cents", "the payment of €300.00 exceeds the invoice's open balance of €248.28"},
		{"credit over the balance", "/v1/credit-notes/" + crn + "/apply", obj{"invoice_id": jpy}, "amount_exceeds_balance",
			"invoice_id", "the credit note of ¥1,500 exceeds the invoice's open balance of ¥1,200"},
		{"shipment over the order", "/v1/shipments", obj{"sales_order_id": so["id"], "lines": []obj{{"order_line_id": lineID, "qty_milli": 2000}}},
			"over_shipment", "lines[0].qty_milli", "line 1 (Mug) has 1.5 left to ship; 2 asked"},
	} {
		e := env.Do(t, "POST", c.path, ws.Key, c.body).WantError(t, http.StatusConflict, c.code)
		if e["param"] != c.param || e["message"] != c.says {
			t.Errorf("%s: param %v, message %q; want %s, %q", c.name, e["param"], e["message"], c.param, c.says)
		}
	}
	if _, paid, _ := balanceOf(t, env, "/v1/invoices/"+inv, ws.Key); paid != 0 {
		t.Fatalf("a refused payment paid %d", paid)
	}
}
