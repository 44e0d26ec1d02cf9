package rest_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
)

// sentInvoice creates an invoice of one line of cents (0 % VAT) for the
// client and sends it.
func sentInvoice(t *testing.T, env *apitest.Env, key string, body obj, cents int64) string {
	t.Helper()
	body["lines"] = []obj{line("Work", 1000, cents, 0)}
	id := env.Do(t, "POST", "/v1/invoices", key, body).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+id+"/send", key, nil).WantStatus(t, 200)
	return id
}

// invoiceMoney reads an invoice's status and money, and checks
// remaining = incl - paid - credited.
func invoiceMoney(t *testing.T, env *apitest.Env, key, id string) (status string, paid, credited, remaining int64) {
	t.Helper()
	var d struct {
		Status    string
		Incl      int64 `json:"amount_incl_vat_cents"`
		Paid      int64 `json:"paid_cents"`
		Credited  int64 `json:"credited_cents"`
		Remaining int64 `json:"remaining_cents"`
	}
	env.Get(t, "/v1/invoices/"+id, key).WantStatus(t, 200).Decode(t, &d)
	if d.Remaining != d.Incl-d.Paid-d.Credited {
		t.Fatalf("remaining %d != incl %d - paid %d - credited %d", d.Remaining, d.Incl, d.Paid, d.Credited)
	}
	return d.Status, d.Paid, d.Credited, d.Remaining
}

func countCreditNotes(t *testing.T, env *apitest.Env, ws string) int {
	t.Helper()
	return env.DB.Writer.CreditNote.Query().Where(creditnote.WorkspaceID(ws)).CountX(t.Context())
}

func TestCreditNoteFromDraftToApplied(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key, "Acme", "EUR")
	inv := sentInvoice(t, env, ws.Key, obj{"client_id": cli, "currency_code": "USD"}, 10000)

	// Against an invoice: the invoice's client and currency are the defaults
	// (the client's own currency is EUR).
	n := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv, "notes": "Returned",
		"lines": []obj{line("Third back", 333, 1000, 550)}}).WantStatus(t, 201).JSON(t)
	id := n["id"].(string)
	if n["number"] != "CRN-000001" || n["status"] != "draft" || n["invoice_id"] != inv || n["client_id"] != cli ||
		n["client_name"] != "Acme" || n["currency_code"] != "USD" {
		t.Fatalf("created %v", n)
	}
	wantTotals(t, n, 333, 18, 351)
	path := "/v1/credit-notes/" + id
	n = env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("Back", 1000, 2500, 2000)}}).WantStatus(t, 200).JSON(t)
	wantTotals(t, n, 2500, 500, 3000)

	env.Do(t, "POST", path+"/apply", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	n = env.Do(t, "POST", path+"/issue", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if n["status"] != "issued" {
		t.Fatalf("issued %v", n)
	}
	env.Do(t, "POST", path+"/issue", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("X", 1000, 1, 0)}}).WantError(t, 409, "invalid_state_transition")
	if s, paid, credited, rem := invoiceMoney(t, env, ws.Key, inv); s != "sent" || paid != 0 || credited != 0 || rem != 10000 {
		t.Fatalf("an issued note moved money: %s %d %d %d", s, paid, credited, rem)
	}

	n = env.Do(t, "POST", path+"/apply", ws.Key, nil).WantStatus(t, 200).JSON(t)
	if n["status"] != "applied" || n["invoice_id"] != inv {
		t.Fatalf("applied %v", n)
	}
	if s, paid, credited, rem := invoiceMoney(t, env, ws.Key, inv); s != "partially_paid" || paid != 0 || credited != 3000 || rem != 7000 {
		t.Fatalf("after the credit: %s paid %d credited %d remaining %d", s, paid, credited, rem)
	}
	for _, a := range []string{"apply", "issue", "void"} {
		env.Do(t, "POST", path+"/"+a, ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	}
	// A credited invoice is not voided: the note would credit nothing.
	env.Do(t, "POST", "/v1/invoices/"+inv+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")

	// Payments see the credited balance: the rest pays it.
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, obj{"id": "p1", "number": "P1", "status": "completed", "date": "2026-02-02",
		"amount_incl_vat_cents": 7001, "currency_code": "USD"}).WantError(t, 409, "amount_exceeds_balance")
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, obj{"id": "p1", "number": "P1", "status": "completed", "date": "2026-02-02",
		"amount_incl_vat_cents": 7000, "currency_code": "USD"}).WantStatus(t, 201)
	if s, paid, credited, rem := invoiceMoney(t, env, ws.Key, inv); s != "paid" || paid != 7000 || credited != 3000 || rem != 0 {
		t.Fatalf("after the payment: %s paid %d credited %d remaining %d", s, paid, credited, rem)
	}

	// A note made without an invoice names it when applied; a paid invoice
	// has nothing left to credit.
	late := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"client_id": cli, "currency_code": "USD",
		"lines": []obj{line("Goodwill", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)
	lp := "/v1/credit-notes/" + late["id"].(string)
	if late["number"] != "CRN-000002" || late["invoice_id"] != nil {
		t.Fatalf("second note %v", late)
	}
	env.Do(t, "POST", lp+"/issue", ws.Key, nil).WantStatus(t, 200)
	wantParam(t, env.Do(t, "POST", lp+"/apply", ws.Key, nil).WantError(t, 400, "invalid_request"), "invoice_id")
	env.Do(t, "POST", lp+"/apply", ws.Key, obj{"invoice_id": inv}).WantError(t, 409, "amount_exceeds_balance")
	second := sentInvoice(t, env, ws.Key, obj{"client_id": cli, "currency_code": "USD"}, 500)
	n = env.Do(t, "POST", lp+"/apply", ws.Key, obj{"invoice_id": second}).WantStatus(t, 200).JSON(t)
	if n["invoice_id"] != second || n["status"] != "applied" {
		t.Fatalf("applied by body %v", n)
	}
	if s, _, credited, rem := invoiceMoney(t, env, ws.Key, second); s != "partially_paid" || credited != 100 || rem != 400 {
		t.Fatalf("second invoice: %s credited %d remaining %d", s, credited, rem)
	}

	// Void from draft and from issued.
	for i, issue := range []bool{false, true} {
		v := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"client_name": "Walk-in", "lines": []obj{line("V", 1000, 1, 0)}}).WantStatus(t, 201).JSON(t)
		vp := "/v1/credit-notes/" + v["id"].(string)
		if issue {
			env.Do(t, "POST", vp+"/issue", ws.Key, nil).WantStatus(t, 200)
		}
		if got := env.Do(t, "POST", vp+"/void", ws.Key, nil).WantStatus(t, 200).JSON(t); got["status"] != "void" {
			t.Fatalf("void %d: %v", i, got)
		}
		for _, a := range []string{"issue", "apply", "void"} {
			env.Do(t, "POST", vp+"/"+a, ws.Key, obj{}).WantError(t, 409, "invalid_state_transition")
		}
		env.Do(t, "PATCH", vp, ws.Key, obj{"notes": "x"}).WantError(t, 409, "invalid_state_transition")
	}

	if ids, total := listIDs(t, env, "/v1/credit-notes?status=applied", ws.Key); total != 2 || !(ids[0] == id || ids[1] == id) {
		t.Fatalf("applied list %v", ids)
	}
	if _, total := listIDs(t, env, "/v1/credit-notes?status=void", ws.Key); total != 2 {
		t.Fatalf("%d void", total)
	}
	if ids, total := listIDs(t, env, "/v1/credit-notes?q=CRN-000001", ws.Key); total != 1 || ids[0] != id {
		t.Fatalf("q by number %v", ids)
	}
}

func TestCreditNoteInvoiceMustBeTheClientsOwn(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	foreign := env.Workspace(t, "growth", false, false)
	acme := newClient(t, env, ws.Key, "Acme", "EUR")
	globex := newClient(t, env, ws.Key, "Globex", "EUR")
	inv := sentInvoice(t, env, ws.Key, obj{"client_id": acme}, 1000)
	named := sentInvoice(t, env, ws.Key, obj{"client_name": "Walk-in"}, 1000)
	draft := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_id": acme, "lines": []obj{line("W", 1000, 1000, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	theirs := sentInvoice(t, env, foreign.Key, obj{"client_name": "Theirs"}, 1000)
	ok := []obj{line("A", 1000, 100, 0)}

	cases := []struct {
		body  obj
		param string
	}{
		{obj{"invoice_id": inv, "client_id": globex, "lines": ok}, "invoice_id"},
		{obj{"invoice_id": inv, "currency_code": "USD", "lines": ok}, "invoice_id"},
		{obj{"invoice_id": named, "client_name": "Someone else", "lines": ok}, "invoice_id"},
		{obj{"invoice_id": theirs, "lines": ok}, "invoice_id"},
		{obj{"invoice_id": "inv_missing", "lines": ok}, "invoice_id"},
		{obj{"invoice_id": inv, "lines": ok, "credited_cents": 5}, "credited_cents"},
		{obj{"invoice_id": inv, "lines": []obj{line("A", -1000, 100, 0)}}, "lines[0].qty_milli"},
		{obj{"invoice_id": 7, "lines": ok}, "invoice_id"},
	}
	for _, c := range cases {
		wantParam(t, env.Do(t, "POST", "/v1/credit-notes", ws.Key, c.body).WantError(t, 400, "invalid_request"), c.param)
	}
	if n := countCreditNotes(t, env, ws.ID); n != 0 {
		t.Fatalf("refused creates wrote %d notes", n)
	}
	// A client-name invoice takes a note of that name.
	env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": named, "lines": ok}).WantStatus(t, 201)

	// Editing a note off its invoice's client is refused, naming the field changed.
	n := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv, "lines": ok}).WantStatus(t, 201).JSON(t)
	path := "/v1/credit-notes/" + n["id"].(string)
	wantParam(t, env.Do(t, "PATCH", path, ws.Key, obj{"client_id": globex}).WantError(t, 400, "invalid_request"), "client_id")
	wantParam(t, env.Do(t, "PATCH", path, ws.Key, obj{"currency_code": "GBP"}).WantError(t, 400, "invalid_request"), "currency_code")
	wantParam(t, env.Do(t, "PATCH", path, ws.Key, obj{"invoice_id": theirs}).WantError(t, 400, "invalid_request"), "invoice_id")
	if got := env.Get(t, path, ws.Key).JSON(t); got["client_id"] != acme || got["currency_code"] != "EUR" || got["invoice_id"] != inv {
		t.Fatalf("refused edits changed the note: %v", got)
	}
	// Moving it to another client and off the invoice at once is fine.
	env.Do(t, "PATCH", path, ws.Key, obj{"client_id": globex, "invoice_id": nil}).WantStatus(t, 200)
	env.Do(t, "PATCH", path, ws.Key, obj{"client_id": acme, "invoice_id": draft}).WantStatus(t, 200)

	// Applying: only to its own invoice, which must be open.
	env.Do(t, "POST", path+"/issue", ws.Key, nil).WantStatus(t, 200)
	wantParam(t, env.Do(t, "POST", path+"/apply", ws.Key, obj{"invoice_id": inv}).WantError(t, 400, "invalid_request"), "invoice_id")
	wantParam(t, env.Do(t, "POST", path+"/apply", ws.Key, obj{"amount": 1}).WantError(t, 400, "invalid_request"), "amount")
	env.Do(t, "POST", path+"/apply", ws.Key, nil).WantError(t, 409, "invalid_state_transition") // a draft invoice takes no credit

	free := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"client_id": acme, "lines": []obj{line("Big", 1000, 1001, 0)}}).WantStatus(t, 201).JSON(t)
	fp := "/v1/credit-notes/" + free["id"].(string)
	env.Do(t, "POST", fp+"/issue", ws.Key, nil).WantStatus(t, 200)
	wantParam(t, env.Do(t, "POST", fp+"/apply", ws.Key, obj{"invoice_id": theirs}).WantError(t, 400, "invalid_request"), "invoice_id")
	wantParam(t, env.Do(t, "POST", fp+"/apply", ws.Key, obj{"invoice_id": named}).WantError(t, 400, "invalid_request"), "invoice_id")
	env.Do(t, "POST", fp+"/apply", ws.Key, obj{"invoice_id": inv}).WantError(t, 409, "amount_exceeds_balance")
	if got := env.Get(t, fp, ws.Key).JSON(t); got["status"] != "issued" || got["invoice_id"] != nil {
		t.Fatalf("refused apply changed the note: %v", got)
	}
	for _, id := range []string{inv, named} {
		if s, _, credited, rem := invoiceMoney(t, env, ws.Key, id); s != "sent" || credited != 0 || rem != 1000 {
			t.Fatalf("refused applies changed %s: %s %d %d", id, s, credited, rem)
		}
	}
	if s, _, credited, _ := invoiceMoney(t, env, foreign.Key, theirs); s != "sent" || credited != 0 {
		t.Fatalf("another workspace's invoice changed: %s %d", s, credited)
	}

	// Another workspace's note is not found.
	env.Get(t, fp, foreign.Key).WantError(t, 404, "not_found")
	env.Do(t, "POST", fp+"/apply", foreign.Key, obj{"invoice_id": theirs}).WantError(t, 404, "not_found")

	// Keys that may not write credit notes, or the invoice a note credits, get 403.
	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	ws.Role(t, "crediter", "credit-notes:write,invoices:read,clients:read")
	crediter := ws.NewKey(t, access.KeySpec{Role: "crediter"})
	env.Do(t, "POST", "/v1/credit-notes", viewer, obj{"client_name": "A", "lines": ok}).WantError(t, 403, "permission_denied")
	env.Do(t, "POST", fp+"/void", viewer, nil).WantError(t, 403, "permission_denied")
	env.Do(t, "POST", fp+"/apply", crediter, obj{"invoice_id": named}).WantError(t, 403, "permission_denied")
	small := env.Do(t, "POST", "/v1/credit-notes", crediter, obj{"client_id": acme, "lines": ok}).WantStatus(t, 201).JSON(t)
	env.Do(t, "POST", "/v1/credit-notes/"+small["id"].(string)+"/issue", crediter, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/credit-notes/"+small["id"].(string)+"/apply", crediter, obj{"invoice_id": inv}).WantError(t, 403, "permission_denied")
	if s, _, credited, _ := invoiceMoney(t, env, ws.Key, inv); s != "sent" || credited != 0 {
		t.Fatalf("a refused key credited the invoice: %s %d", s, credited)
	}
}

func TestCreditNoteApplyHonoursIdempotencyKeys(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := sentInvoice(t, env, ws.Key, obj{"client_name": "Acme"}, 1000)
	body := obj{"invoice_id": inv, "lines": []obj{line("A", 1000, 100, 0)}}
	first := env.Do(t, "POST", "/v1/credit-notes", ws.Key, body, "Idempotency-Key", "cn-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/credit-notes", ws.Key, body, "Idempotency-Key", "cn-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) || countCreditNotes(t, env, ws.ID) != 1 {
		t.Fatalf("retried create was not a replay: %s", again.Body)
	}
	path := "/v1/credit-notes/" + first.JSON(t)["id"].(string)
	env.Do(t, "POST", path+"/issue", ws.Key, nil).WantStatus(t, 200)
	a1 := env.Do(t, "POST", path+"/apply", ws.Key, nil, "Idempotency-Key", "apply-1").WantStatus(t, 200)
	a2 := env.Do(t, "POST", path+"/apply", ws.Key, nil, "Idempotency-Key", "apply-1").WantStatus(t, 200)
	if a2.Header.Get("Idempotent-Replayed") != "true" || string(a2.Body) != string(a1.Body) {
		t.Fatalf("retried apply was not a replay: %s", a2.Body)
	}
	if _, _, credited, rem := invoiceMoney(t, env, ws.Key, inv); credited != 100 || rem != 900 {
		t.Fatalf("credited %d remaining %d after a retried apply", credited, rem)
	}
}

// Notes that together exceed an invoice's balance: concurrent applies
// never take more than it, on either database.
func TestConcurrentCreditNotesNeverOverCreditAnInvoice(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := sentInvoice(t, env, ws.Key, obj{"client_name": "Acme"}, 10000)
	const n = 8
	paths := make([]string, n)
	for i := range n {
		c := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv, "number": fmt.Sprint("C-", i),
			"lines": []obj{line("Part", 1000, 3000, 0)}}).WantStatus(t, 201).JSON(t)
		paths[i] = "/v1/credit-notes/" + c["id"].(string)
		env.Do(t, "POST", paths[i]+"/issue", ws.Key, nil).WantStatus(t, 200)
	}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { statuses[i] = env.Do(t, "POST", paths[i]+"/apply", ws.Key, nil).Status })
	}
	wg.Wait()
	if won := tally(t, statuses, http.StatusOK, http.StatusConflict); won != 3 {
		t.Fatalf("%d of the 3000 notes applied to 10000: %v", won, statuses)
	}
	if s, _, credited, rem := invoiceMoney(t, env, ws.Key, inv); s != "partially_paid" || credited != 9000 || rem != 1000 {
		t.Fatalf("after concurrent applies: %s credited %d remaining %d", s, credited, rem)
	}
	applied := env.DB.Writer.CreditNote.Query().Where(creditnote.WorkspaceID(ws.ID), creditnote.StatusEQ(creditnote.StatusApplied)).CountX(t.Context())
	if applied != 3 {
		t.Fatalf("%d notes applied", applied)
	}
}
