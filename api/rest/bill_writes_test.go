package rest_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/billpayment"
)

func countBills(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	n, err := env.DB.Writer.Bill.Query().Where(bill.WorkspaceID(ws)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newVendor(t *testing.T, env *apitest.Env, key, name string) string {
	t.Helper()
	return env.Do(t, "POST", "/v1/vendors", key, obj{"name": name, "currency_code": "GBP"}).WantStatus(t, 201).JSON(t)["id"].(string)
}

// wantMoney checks a document's totals (and, when given, paid and remaining).
func wantMoney(t *testing.T, doc obj, excl, vat, incl float64, paidRemaining ...float64) {
	t.Helper()
	if doc["amount_excl_vat_cents"] != excl || doc["vat_amount_cents"] != vat || doc["amount_incl_vat_cents"] != incl {
		t.Fatalf("totals %v / %v / %v, want %v / %v / %v", doc["amount_excl_vat_cents"], doc["vat_amount_cents"], doc["amount_incl_vat_cents"], excl, vat, incl)
	}
	if len(paidRemaining) == 2 && (doc["paid_cents"] != paidRemaining[0] || doc["remaining_cents"] != paidRemaining[1]) {
		t.Fatalf("paid %v remaining %v, want %v %v", doc["paid_cents"], doc["remaining_cents"], paidRemaining[0], paidRemaining[1])
	}
}

// awkwardLines price to 2832 + 418 VAT = 3250: a third of a unit at
// 5.5 % (333 + 18.315), a 20 % line whose VAT is 399.8, and 1.5 × 333 =
// 499.5 at 0 %, each rounded half away from zero on its own line.
var awkwardLines = []obj{
	{"description": "A third", "qty_milli": 333, "unit_price_cents": 1000, "vat_rate_bp": 550},
	{"description": "Twenty percent", "qty_milli": 1000, "unit_price_cents": 1999, "vat_rate_bp": 2000},
	{"description": "Half a cent", "qty_milli": 1500, "unit_price_cents": 333},
}

func TestBillLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	ven := newVendor(t, env, ws.Key, "Paper Supplies")

	b := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven, "date": "2026-02-01", "due_date": "2026-03-01",
		"lines": awkwardLines, "notes": "Q1 paper"}).WantStatus(t, 201).JSON(t)
	id := b["id"].(string)
	if b["number"] != "BILL-000001" || b["status"] != "draft" || b["vendor_name"] != "Paper Supplies" || b["currency_code"] != "GBP" ||
		b["vendor_id"] != ven || b["due_date"] != "2026-03-01" {
		t.Fatalf("created bill: %v", b)
	}
	wantMoney(t, b, 2832, 418, 3250, 0, 3250)
	lines := b["lines"].([]any)
	if l := lines[0].(obj); l["amount_excl_vat_cents"] != 333.0 || l["vat_amount_cents"] != 18.0 || l["amount_incl_vat_cents"] != 351.0 {
		t.Fatalf("line 0: %v", l)
	}
	if l := lines[2].(obj); l["amount_excl_vat_cents"] != 500.0 || l["vat_amount_cents"] != 0.0 {
		t.Fatalf("line 2: %v", l)
	}

	// A draft takes no payment.
	env.Do(t, "POST", "/v1/bills/"+id+"/payments", ws.Key, obj{"id": "p0", "amount_incl_vat_cents": 1}).WantError(t, 409, "invalid_state_transition")

	// Edit while draft: lines replaced whole, totals recomputed.
	e := env.Do(t, "PATCH", "/v1/bills/"+id, ws.Key, obj{"lines": []obj{{"description": "Reams", "qty_milli": 4000, "unit_price_cents": 2500, "vat_rate_bp": 2000}},
		"number": "V-778", "vendor_name": "Paper Supplies Ltd"}).WantStatus(t, 200).JSON(t)
	if e["number"] != "V-778" || e["vendor_name"] != "Paper Supplies Ltd" || len(e["lines"].([]any)) != 1 || e["notes"] != "Q1 paper" {
		t.Fatalf("edited: %v", e)
	}
	wantMoney(t, e, 10000, 2000, 12000, 0, 12000)

	// open: the total becomes owed and payments apply.
	o := env.Do(t, "POST", "/v1/bills/"+id+"/open", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if o["status"] != "open" {
		t.Fatalf("opened: %v", o)
	}
	wantMoney(t, o, 10000, 2000, 12000, 0, 12000)
	env.Do(t, "POST", "/v1/bills/"+id+"/open", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	pe := env.Do(t, "PATCH", "/v1/bills/"+id, ws.Key, obj{"lines": awkwardLines}).WantError(t, 409, "invalid_state_transition")
	if pe["message"] == "" {
		t.Fatal("no message")
	}
	env.Do(t, "PATCH", "/v1/bills/"+id, ws.Key, obj{"notes": "paid by transfer", "due_date": "2026-03-15"}).WantStatus(t, 200)
	env.Do(t, "DELETE", "/v1/bills/"+id, ws.Key, nil).WantError(t, 409, "invalid_state_transition")

	env.Do(t, "POST", "/v1/bills/"+id+"/payments", ws.Key, obj{"id": "p1", "amount_incl_vat_cents": 5000}).WantStatus(t, 201)
	g := env.Get(t, "/v1/bills/"+id, ws.Key).WantStatus(t, 200).JSON(t)
	if g["status"] != "partially_paid" || g["notes"] != "paid by transfer" || g["due_date"] != "2026-03-15" {
		t.Fatalf("after a payment: %v", g)
	}
	wantMoney(t, g, 10000, 2000, 12000, 5000, 7000)
	// Money moved: void is refused (partially paid is not a state it leaves).
	env.Do(t, "POST", "/v1/bills/"+id+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/bills/"+id+"/payments", ws.Key, obj{"id": "p2", "amount_incl_vat_cents": 7000}).WantStatus(t, 201)
	if g := env.Get(t, "/v1/bills/"+id, ws.Key).JSON(t); g["status"] != "paid" || g["remaining_cents"] != 0.0 {
		t.Fatalf("after paying all: %v", g)
	}
	env.Do(t, "POST", "/v1/bills/"+id+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")

	// An open bill with a completed payment of nothing is still open, and
	// still refused a void by the payments rule invoices have.
	b2 := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_name": "Courier", "lines": awkwardLines}).WantStatus(t, 201).JSON(t)
	id2 := b2["id"].(string)
	if b2["number"] != "BILL-000002" || b2["currency_code"] != "EUR" || b2["vendor_id"] != nil {
		t.Fatalf("second bill: %v", b2)
	}
	env.Do(t, "POST", "/v1/bills/"+id2+"/open", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/bills/"+id2+"/payments", ws.Key, obj{"id": "p3", "amount_incl_vat_cents": 0}).WantStatus(t, 201)
	ve := env.Do(t, "POST", "/v1/bills/"+id2+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	if ve["message"] != "a bill with a completed payment cannot be voided" {
		t.Fatalf("void refusal: %v", ve)
	}
	// A pending payment moves no money: the third bill voids, owing nothing.
	b3 := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven, "lines": awkwardLines}).WantStatus(t, 201).JSON(t)
	id3 := b3["id"].(string)
	env.Do(t, "POST", "/v1/bills/"+id3+"/open", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/bills/"+id3+"/payments", ws.Key, obj{"id": "p4", "amount_incl_vat_cents": 100, "status": "pending"}).WantStatus(t, 201)
	v := env.Do(t, "POST", "/v1/bills/"+id3+"/void", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if v["status"] != "void" || v["remaining_cents"] != 0.0 {
		t.Fatalf("voided: %v", v)
	}
	env.Do(t, "POST", "/v1/bills/"+id3+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/bills/"+id3+"/open", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/bills/"+id3, ws.Key, obj{"notes": "x"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/bills/"+id3+"/payments", ws.Key, obj{"id": "p5", "amount_incl_vat_cents": 1}).WantError(t, 409, "invalid_state_transition")

	// A draft voids too, and a draft deletes.
	b4 := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven, "number": "OWN-1", "lines": []obj{}}).WantStatus(t, 201).JSON(t)
	if b4["number"] != "OWN-1" {
		t.Fatalf("own number: %v", b4)
	}
	env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven, "number": "OWN-1"}).WantError(t, 409, "duplicate")
	env.Do(t, "POST", "/v1/bills/"+b4["id"].(string)+"/void", ws.Key, nil).WantStatus(t, 200)
	b5 := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven}).WantStatus(t, 201).JSON(t)
	d := env.Do(t, "DELETE", "/v1/bills/"+b5["id"].(string), ws.Key, nil).WantStatus(t, 200).JSON(t)
	if d["deleted"] != true || d["object"] != "bill" {
		t.Fatalf("delete: %v", d)
	}
	env.Get(t, "/v1/bills/"+b5["id"].(string), ws.Key).WantError(t, 404, "not_found")

	// Lists: status and vendor filters, q by number.
	wantIDs := func(path string, ids ...string) {
		t.Helper()
		l := env.Get(t, path, ws.Key).WantStatus(t, 200).JSON(t)
		data := l["data"].([]any)
		if len(data) != len(ids) {
			t.Fatalf("%s: %d records, want %d: %s", path, len(data), len(ids), data)
		}
		for i, want := range ids {
			if got := data[i].(obj)["id"]; got != want {
				t.Fatalf("%s: [%d] is %v, want %s", path, i, got, want)
			}
		}
	}
	wantIDs("/v1/bills?status=paid", id)
	wantIDs("/v1/bills?status=open", id2)
	wantIDs("/v1/bills?status=void", b4["id"].(string), id3) // newest first
	wantIDs("/v1/bills?status=void&vendor_id="+ven, b4["id"].(string), id3)
	wantIDs("/v1/bills?q=V-778", id)
	wantIDs("/v1/bills?q=BILL-000002", id2)
	wantIDs("/v1/bills?vendor_id=" + ven + "&status=draft")
}

func TestBillWritesRefuse(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "starter", false, false)
	ven := newVendor(t, env, ws.Key, "Mine")
	foreignVen := newVendor(t, env, other.Key, "Theirs")
	foreignItem := env.Do(t, "POST", "/v1/items", other.Key, obj{"name": "Their item"}).WantStatus(t, 201).JSON(t)["id"].(string)
	foreignBill := env.Do(t, "POST", "/v1/bills", other.Key, obj{"vendor_id": foreignVen, "lines": awkwardLines}).WantStatus(t, 201).JSON(t)["id"].(string)
	line := func(extra obj) []obj {
		l := obj{"description": "x", "qty_milli": 1000, "unit_price_cents": 100}
		for k, v := range extra {
			l[k] = v
		}
		return []obj{l}
	}
	cases := []struct {
		body  obj
		param string
	}{
		{obj{"vendor_id": foreignVen}, "vendor_id"},
		{obj{"vendor_id": ven, "lines": line(obj{"item_id": foreignItem})}, "lines[0].item_id"},
		{obj{"lines": line(nil)}, "vendor_id"},
		{obj{"vendor_id": ven, "colour": "red"}, "colour"},
		{obj{"vendor_id": ven, "lines": line(obj{"qty_milli": -1000})}, "lines[0].qty_milli"},
		{obj{"vendor_id": ven, "lines": line(obj{"qty_milli": "2"})}, "lines[0].qty_milli"},
		{obj{"vendor_id": ven, "amount_incl_vat_cents": 100}, "amount_incl_vat_cents"},
		{obj{"vendor_id": ven, "remaining_cents": 0}, "remaining_cents"},
		{obj{"vendor_id": ven, "lines": line(obj{"amount_excl_vat_cents": 5})}, "lines[0].amount_excl_vat_cents"},
		{obj{"vendor_id": ven, "lines": line(obj{"vat_rate_bp": 10001})}, "lines[0].vat_rate_bp"},
		{obj{"vendor_id": ven, "lines": line(obj{"qty_milli": int64(1) << 62, "unit_price_cents": 1 << 40})}, "lines[0].qty_milli"},
		{obj{"vendor_id": ven, "status": "open"}, "status"},
	}
	for _, c := range cases {
		e := env.Do(t, "POST", "/v1/bills", ws.Key, c.body).WantError(t, 400, "invalid_request")
		wantParam(t, e, c.param)
	}
	if n := countBills(t, env, ws.ID); n != 0 {
		t.Fatalf("refused creates wrote %d bills", n)
	}

	// Another workspace's bill is not found, whatever the operation.
	for _, p := range []struct{ method, path string }{
		{"GET", "/v1/bills/" + foreignBill}, {"PATCH", "/v1/bills/" + foreignBill}, {"DELETE", "/v1/bills/" + foreignBill},
		{"POST", "/v1/bills/" + foreignBill + "/open"}, {"POST", "/v1/bills/" + foreignBill + "/void"},
	} {
		var body any
		if p.method == "PATCH" {
			body = obj{"notes": "mine now"}
		}
		env.Do(t, p.method, p.path, ws.Key, body).WantError(t, 404, "not_found")
	}
	if b, _ := env.DB.Writer.Bill.Get(t.Context(), foreignBill); b.Status != bill.StatusDraft || b.Notes != "" {
		t.Fatalf("another workspace's bill changed: %v", b)
	}

	// A viewer, and a custom role that reads bills, cannot write them.
	mine := env.Do(t, "POST", "/v1/bills", ws.Key, obj{"vendor_id": ven, "lines": awkwardLines}).WantStatus(t, 201).JSON(t)["id"].(string)
	ws.Role(t, "bookkeeper", "bills:read,vendors:write")
	for _, key := range []string{ws.NewKey(t, access.KeySpec{Role: access.RoleViewer}), ws.NewKey(t, access.KeySpec{Role: "bookkeeper"})} {
		env.Do(t, "POST", "/v1/bills", key, obj{"vendor_id": ven}).WantError(t, 403, "permission_denied")
		env.Do(t, "PATCH", "/v1/bills/"+mine, key, obj{"notes": "x"}).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", "/v1/bills/"+mine+"/open", key, nil).WantError(t, 403, "permission_denied")
		env.Do(t, "DELETE", "/v1/bills/"+mine, key, nil).WantError(t, 403, "permission_denied")
		env.Get(t, "/v1/bills/"+mine, key).WantStatus(t, 200)
	}
	if n := countBills(t, env, ws.ID); n != 1 {
		t.Fatalf("%d bills", n)
	}
	// An edit that fails writes nothing either.
	e := env.Do(t, "PATCH", "/v1/bills/"+mine, ws.Key, obj{"notes": "changed", "lines": line(obj{"item_id": foreignItem})}).WantError(t, 400, "invalid_request")
	wantParam(t, e, "lines[0].item_id")
	if b := env.Get(t, "/v1/bills/"+mine, ws.Key).JSON(t); b["notes"] != "" || len(b["lines"].([]any)) != 3 {
		t.Fatalf("a refused edit changed the bill: %v", b)
	}
}

func TestBillCreateIsIdempotentAndConcurrentMovesWinOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	ven := newVendor(t, env, ws.Key, "Vendor")
	body := obj{"vendor_id": ven, "lines": awkwardLines}
	first := env.Do(t, "POST", "/v1/bills", ws.Key, body, "Idempotency-Key", "bill-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/bills", ws.Key, body, "Idempotency-Key", "bill-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry was not a replay: %s", again.Body)
	}
	if n := countBills(t, env, ws.ID); n != 1 {
		t.Fatalf("a retried create made %d bills", n)
	}
	id := first.JSON(t)["id"].(string)

	// Ten concurrent opens, then ten concurrent voids: one of each wins.
	for _, action := range []string{"open", "void"} {
		const n = 10
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { codes[i] = env.Do(t, "POST", "/v1/bills/"+id+"/"+action, ws.Key, nil).Status })
		}
		wg.Wait()
		if won := tally(t, codes, http.StatusOK, http.StatusConflict); won != 1 {
			t.Fatalf("%s: %d winners: %v", action, won, codes)
		}
	}
	b, err := env.DB.Writer.Bill.Get(t.Context(), id)
	if err != nil || b.Status != bill.StatusVoid || b.RemainingCents != 0 {
		t.Fatalf("final bill: %v %v", b, err)
	}
	if n, _ := env.DB.Writer.BillPayment.Query().Where(billpayment.BillID(id)).Count(t.Context()); n != 0 {
		t.Fatalf("%d payments", n)
	}
}
