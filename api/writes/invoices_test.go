package writes_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

type obj = map[string]any

// docLine is a line as an invoice reads it.
type docLine struct {
	QtyMilli       int64 `json:"qty_milli"`
	UnitPriceCents int64 `json:"unit_price_cents"`
	VATRateBP      int64 `json:"vat_rate_bp"`
	DiscountBP     int64 `json:"discount_bp"`
	Excl           int64 `json:"amount_excl_vat_cents"`
	VAT            int64 `json:"vat_amount_cents"`
	Incl           int64 `json:"amount_incl_vat_cents"`
}

type invoiceRead struct {
	ID, Number, Status string
	ClientName         string  `json:"client_name"`
	ClientID           *string `json:"client_id"`
	Currency           string  `json:"currency_code"`
	Notes              string
	DueDate            *string   `json:"due_date"`
	Lines              []docLine `json:"lines"`
	Excl               int64     `json:"amount_excl_vat_cents"`
	VAT                int64     `json:"vat_amount_cents"`
	Incl               int64     `json:"amount_incl_vat_cents"`
	Paid               int64     `json:"paid_cents"`
	Credited           int64     `json:"credited_cents"`
	Remaining          int64     `json:"remaining_cents"`
}

func readInvoice(t *testing.T, r *apitest.Response) invoiceRead {
	t.Helper()
	var inv invoiceRead
	r.Decode(t, &inv)
	return inv
}

func line(desc string, qty, price, vat int64) obj {
	return obj{"description": desc, "qty_milli": qty, "unit_price_cents": price, "vat_rate_bp": vat}
}

// roundHalfAway is n/d rounded half away from zero, as exact rationals.
func roundHalfAway(n, d *big.Int) int64 {
	r := new(big.Rat).SetFrac(n, d)
	f, _ := new(big.Float).SetRat(r).Float64()
	q := new(big.Int).Quo(n, d)
	rem := new(big.Rat).Sub(r, new(big.Rat).SetInt(q))
	if rem.Abs(rem).Cmp(big.NewRat(1, 2)) >= 0 {
		if f < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// wantLine checks a line's amounts against the rule written in the docs,
// computed here independently with exact rationals.
func wantLine(t *testing.T, l docLine) {
	t.Helper()
	n := new(big.Int).Mul(big.NewInt(l.QtyMilli), big.NewInt(l.UnitPriceCents))
	n.Mul(n, big.NewInt(10_000-l.DiscountBP))
	excl := roundHalfAway(n, big.NewInt(10_000_000))
	vat := roundHalfAway(new(big.Int).Mul(big.NewInt(excl), big.NewInt(l.VATRateBP)), big.NewInt(10_000))
	if l.Excl != excl || l.VAT != vat || l.Incl != excl+vat {
		t.Fatalf("line %+v: want excl %d, vat %d, incl %d", l, excl, vat, excl+vat)
	}
}

// wantTotals checks a document's totals are its lines' sums and its
// balance adds up.
func wantTotals(t *testing.T, inv invoiceRead) {
	t.Helper()
	var e, v, i int64
	for _, l := range inv.Lines {
		wantLine(t, l)
		e, v, i = e+l.Excl, v+l.VAT, i+l.Incl
	}
	if inv.Excl != e || inv.VAT != v || inv.Incl != i || inv.Incl != inv.Excl+inv.VAT {
		t.Fatalf("totals %d + %d = %d, lines sum to %d + %d = %d", inv.Excl, inv.VAT, inv.Incl, e, v, i)
	}
	if inv.Status != "void" && inv.Remaining != inv.Incl-inv.Paid-inv.Credited {
		t.Fatalf("remaining %d, want incl %d - paid %d - credited %d", inv.Remaining, inv.Incl, inv.Paid, inv.Credited)
	}
}

// An invoice goes through its whole life over /v1: created with two lines,
// edited while draft, sent, refused what a sent invoice may not do, paid in
// two payments, and read back by id, by status and by number.
func TestInvoiceLifeCycle(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{
		"client_name": "Acme", "currency_code": "USD", "date": "2026-11-01", "due_date": "2026-12-01",
		"lines": []obj{line("Consulting", 1500, 10_000, 2000), line("Travel", 333, 1001, 550)},
	}).WantStatus(t, http.StatusCreated))
	if inv.Status != "draft" || inv.Currency != "USD" || inv.ClientName != "Acme" || len(inv.Lines) != 2 || inv.Number == "" {
		t.Fatalf("created %+v", inv)
	}
	wantTotals(t, inv)
	if inv.Excl != 15_333 || inv.VAT != 3018 || inv.Incl != 18_351 || inv.Remaining != 18_351 {
		t.Fatalf("totals %+v", inv)
	}
	path := "/v1/invoices/" + inv.ID

	// While draft, the lines are replaced whole and the totals follow.
	inv = readInvoice(t, env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("Consulting", 2000, 10_000, 2000)}, "notes": "Net 30"}).
		WantStatus(t, http.StatusOK))
	if len(inv.Lines) != 1 || inv.Incl != 24_000 || inv.Notes != "Net 30" {
		t.Fatalf("edited %+v", inv)
	}
	if got := readInvoice(t, env.Get(t, path, ws.Key).WantStatus(t, 200)); got.Incl != 24_000 || got.Remaining != 24_000 {
		t.Fatalf("read back %+v", got)
	}
	// A draft takes no payment.
	env.Do(t, "POST", path+"/payments", ws.Key, payment("early", 100)).WantError(t, http.StatusConflict, "invalid_state_transition")

	inv = readInvoice(t, env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, http.StatusOK))
	if inv.Status != "sent" {
		t.Fatalf("sent: %+v", inv)
	}
	// What a sent invoice refuses.
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantError(t, http.StatusConflict, "invalid_state_transition")
	env.Do(t, "PATCH", path, ws.Key, obj{"lines": []obj{line("More", 1000, 1, 0)}}).WantError(t, http.StatusConflict, "invalid_state_transition")
	env.Do(t, "DELETE", path, ws.Key, nil).WantError(t, http.StatusConflict, "invalid_state_transition")
	// Notes and the due date still change.
	inv = readInvoice(t, env.Do(t, "PATCH", path, ws.Key, obj{"notes": "Thanks", "due_date": "2026-12-15"}).WantStatus(t, 200))
	if inv.Notes != "Thanks" || inv.DueDate == nil || *inv.DueDate != "2026-12-15" || inv.Incl != 24_000 {
		t.Fatalf("late edit %+v", inv)
	}

	env.Do(t, "POST", path+"/payments", ws.Key, payment("p1", 10_000)).WantStatus(t, http.StatusCreated)
	if st, paid, rem := balanceOf(t, env, path, ws.Key); st != "partially_paid" || paid != 10_000 || rem != 14_000 {
		t.Fatalf("after the first payment: %s %d %d", st, paid, rem)
	}
	env.Do(t, "POST", path+"/void", ws.Key, nil).WantError(t, http.StatusConflict, "invalid_state_transition")
	env.Do(t, "POST", path+"/payments", ws.Key, payment("p2", 14_000)).WantStatus(t, http.StatusCreated)
	inv = readInvoice(t, env.Get(t, path, ws.Key).WantStatus(t, 200))
	if inv.Status != "paid" || inv.Remaining != 0 || inv.Paid != 24_000 {
		t.Fatalf("paid: %+v", inv)
	}
	wantTotals(t, inv)

	// Found by status and by its number.
	var page struct{ Data []invoiceRead }
	env.Get(t, "/v1/invoices?status=paid", ws.Key).WantStatus(t, 200).Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != inv.ID {
		t.Fatalf("?status=paid: %+v", page.Data)
	}
	env.Get(t, "/v1/invoices?q="+inv.Number, ws.Key).WantStatus(t, 200).Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != inv.ID {
		t.Fatalf("?q=%s: %+v", inv.Number, page.Data)
	}
}

func TestDraftInvoicesAreDeletedAndUnpaidOnesVoided(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	mk := func() string {
		return readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Walk-in",
			"lines": []obj{line("Thing", 1000, 500, 2000)}}).WantStatus(t, 201)).ID
	}
	draft := mk()
	r := env.Do(t, "DELETE", "/v1/invoices/"+draft, ws.Key, nil).WantStatus(t, 200).JSON(t)
	if r["id"] != draft || r["deleted"] != true || r["object"] != "invoice" {
		t.Fatalf("delete answered %v", r)
	}
	env.Get(t, "/v1/invoices/"+draft, ws.Key).WantError(t, 404, "not_found")
	env.Do(t, "DELETE", "/v1/invoices/"+draft, ws.Key, nil).WantError(t, 404, "not_found")

	sent := mk()
	env.Do(t, "POST", "/v1/invoices/"+sent+"/send", ws.Key, nil).WantStatus(t, 200)
	inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices/"+sent+"/void", ws.Key, nil).WantStatus(t, 200))
	if inv.Status != "void" || inv.Remaining != 0 {
		t.Fatalf("voided %+v", inv)
	}
	env.Do(t, "POST", "/v1/invoices/"+sent+"/void", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/invoices/"+sent, ws.Key, obj{"notes": "x"}).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "POST", "/v1/invoices/"+sent+"/payments", ws.Key, payment("late", 1)).WantError(t, 409, "invalid_state_transition")
}

// Awkward values round half away from zero once per line; totals are the
// lines' sums; and for random lines (a property test) incl = excl + vat and
// remaining = incl - paid always hold.
func TestInvoiceMoneyIsComputedByTheRule(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	awkward := []obj{
		line("a third", 333, 100, 2000),            // 33.3 → 33, VAT 6.6 → 7
		line("two thirds", 667, 100, 2000),         // 66.7 → 67
		line("half a cent", 500, 1, 0),             // 0.5 → 1
		line("5.5 %", 1000, 1999, 550),             // VAT 109.945 → 110
		line("zero rate", 3000, 3333, 0),           //
		line("20 %", 1000, 2499, 2000),             // VAT 499.8 → 500
		line("large", 1_000_000_000, 99_999, 2000), // a million units
		{"description": "discount", "qty_milli": 1000, "unit_price_cents": 999, "vat_rate_bp": 2000, "discount_bp": 1250},
	}
	inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Round", "lines": awkward}).WantStatus(t, 201))
	wantTotals(t, inv)
	want := []int64{33, 67, 1, 1999, 9999, 2499}
	for i, w := range want {
		if inv.Lines[i].Excl != w {
			t.Errorf("line %d excl %d, want %d", i, inv.Lines[i].Excl, w)
		}
	}
	if inv.Lines[0].VAT != 7 || inv.Lines[3].VAT != 110 || inv.Lines[5].VAT != 500 || inv.Lines[7].Excl != 874 {
		t.Errorf("awkward lines: %+v", inv.Lines)
	}

	rng := rand.New(rand.NewPCG(19, 2026))
	rates := []int64{0, 550, 1000, 2000, 2100, 777}
	for i := range 25 {
		var lines []obj
		for range 1 + rng.IntN(5) {
			lines = append(lines, obj{"description": "r", "qty_milli": rng.Int64N(5_000_000), "unit_price_cents": rng.Int64N(1_000_000),
				"vat_rate_bp": rates[rng.IntN(len(rates))], "discount_bp": rng.Int64N(3) * 500})
		}
		inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": fmt.Sprint("P", i), "lines": lines}).WantStatus(t, 201))
		wantTotals(t, inv)
		if inv.Incl > 1 {
			path := "/v1/invoices/" + inv.ID
			env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, 200)
			env.Do(t, "POST", path+"/payments", ws.Key, payment(fmt.Sprint("rp", i), 1+rng.Int64N(inv.Incl))).WantStatus(t, 201)
			wantTotals(t, readInvoice(t, env.Get(t, path, ws.Key).WantStatus(t, 200)))
		}
	}
}

// Bad input is one 400 naming the field, and writes nothing.
func TestBadInvoiceBodiesAre400AndWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "growth", false, false)
	otherClient := newClient(t, env, other.Key)
	otherItem := env.Do(t, "POST", "/v1/items", other.Key, obj{"name": "Theirs"}).WantStatus(t, 201).JSON(t)["id"].(string)
	ok := []obj{line("x", 1000, 100, 2000)}
	cases := []struct {
		body  obj
		param string
	}{
		{obj{"lines": ok}, "client_id"},
		{obj{"client_name": "A", "lines": ok, "amount_incl_vat_cents": 5}, "amount_incl_vat_cents"},
		{obj{"client_name": "A", "lines": ok, "total": 5}, "total"},
		{obj{"client_name": "A", "lines": []obj{line("x", -1, 100, 0)}}, "lines[0].qty_milli"},
		{obj{"client_name": "A", "lines": []obj{line("x", 1000, -100, 0)}}, "lines[0].unit_price_cents"},
		{obj{"client_name": "A", "lines": []obj{line("x", 1000, 100, 10_001)}}, "lines[0].vat_rate_bp"},
		{obj{"client_name": "A", "lines": []obj{{"description": "x", "qty_milli": "1", "unit_price_cents": 1}}}, "lines[0].qty_milli"},
		{obj{"client_name": "A", "lines": []obj{{"qty_milli": 1, "unit_price_cents": 1}}}, "lines[0].description"},
		{obj{"client_name": "A", "lines": []obj{line("x", 1<<62, 1<<62, 0)}}, "lines[0].qty_milli"},
		{obj{"client_name": "A", "lines": []obj{line("x", 1000, 1<<62, 0), line("y", 1000, 1<<62, 0)}}, "lines"},
		{obj{"client_name": "A", "lines": ok, "date": "2026-13-01"}, "date"},
		{obj{"client_name": "A", "lines": ok, "currency_code": "EURO"}, "currency_code"},
		{obj{"client_id": otherClient, "lines": ok}, "client_id"},
		{obj{"client_name": "A", "lines": []obj{{"item_id": otherItem, "description": "x", "qty_milli": 1, "unit_price_cents": 1}}}, "lines[0].item_id"},
	}
	for _, c := range cases {
		e := env.Do(t, "POST", "/v1/invoices", ws.Key, c.body).WantError(t, http.StatusBadRequest, "invalid_request")
		if e["param"] != c.param {
			t.Errorf("%v: param %v, want %s (%v)", c.body, e["param"], c.param, e["message"])
		}
	}
	if n := total(t, env, "/v1/invoices", ws.Key); n != 0 {
		t.Fatalf("%d invoices written by refused bodies", n)
	}
	// Another workspace's invoice is not found, whatever the verb.
	theirs := readInvoice(t, env.Do(t, "POST", "/v1/invoices", other.Key, obj{"client_name": "T", "lines": ok}).WantStatus(t, 201)).ID
	env.Do(t, "PATCH", "/v1/invoices/"+theirs, ws.Key, obj{"notes": "x"}).WantError(t, 404, "not_found")
	env.Do(t, "POST", "/v1/invoices/"+theirs+"/send", ws.Key, nil).WantError(t, 404, "not_found")
	env.Do(t, "DELETE", "/v1/invoices/"+theirs, ws.Key, nil).WantError(t, 404, "not_found")
	if got := readInvoice(t, env.Get(t, "/v1/invoices/"+theirs, other.Key)); got.Status != "draft" || got.Notes != "" {
		t.Fatalf("another workspace's invoice changed: %+v", got)
	}
}

func TestInvoiceWritesNeedWriteAccess(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	ws.Role(t, "reader", "invoices:read")
	unlimited := 0
	inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "A", "lines": []obj{line("x", 1000, 1, 0)}}).WantStatus(t, 201)).ID
	for _, key := range []string{
		ws.NewKey(t, access.KeySpec{Role: access.RoleViewer, RateLimit: &unlimited}),
		ws.NewKey(t, access.KeySpec{Role: "reader", RateLimit: &unlimited}),
	} {
		env.Do(t, "POST", "/v1/invoices", key, obj{"client_name": "A"}).WantError(t, 403, "permission_denied")
		env.Do(t, "PATCH", "/v1/invoices/"+inv, key, obj{"notes": "x"}).WantError(t, 403, "permission_denied")
		env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, nil).WantError(t, 403, "permission_denied")
		env.Do(t, "DELETE", "/v1/invoices/"+inv, key, nil).WantError(t, 403, "permission_denied")
	}
	if got := readInvoice(t, env.Get(t, "/v1/invoices/"+inv, ws.Key)); got.Status != "draft" || got.Notes != "" {
		t.Fatalf("refused writes changed the invoice: %+v", got)
	}
}

// Concurrent moves of one invoice: exactly one wins, the others get 409.
func TestConcurrentInvoiceMovesOneWins(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	for round := range 3 {
		inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "A", "lines": []obj{line("x", 1000, 100, 0)}}).WantStatus(t, 201)).ID
		var wg sync.WaitGroup
		status := make([]int, 8)
		for i := range status {
			wg.Add(1)
			go func() {
				defer wg.Done()
				verb := []string{"/send", "/void"}[i%2]
				if i == 7 {
					status[i] = env.Do(t, "DELETE", "/v1/invoices/"+inv, ws.Key, nil).Status
					return
				}
				status[i] = env.Do(t, "POST", "/v1/invoices/"+inv+verb, ws.Key, nil).Status
			}()
		}
		wg.Wait()
		wins := 0
		for _, s := range status {
			switch s {
			case 200:
				wins++
			case 409, 404: // 404: the delete won
			default:
				t.Fatalf("round %d: status %d", round, s)
			}
		}
		// send then void is a legal sequence; nothing else after a delete or a void.
		if wins < 1 || wins > 2 {
			t.Fatalf("round %d: %d moves won: %v", round, wins, status)
		}
	}
}

// A create retried with its Idempotency-Key makes one invoice and answers
// the first response.
func TestInvoiceCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	body := obj{"client_name": "Once", "lines": []obj{line("x", 1000, 100, 2000)}}
	first := env.Do(t, "POST", "/v1/invoices", ws.Key, body, "Idempotency-Key", "inv-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/invoices", ws.Key, body, "Idempotency-Key", "inv-1").WantStatus(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry: %s %s", again.Header.Get("Idempotent-Replayed"), again.Body)
	}
	id := readInvoice(t, first).ID
	sent := env.Do(t, "POST", "/v1/invoices/"+id+"/send", ws.Key, nil, "Idempotency-Key", "send-1").WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+id+"/send", ws.Key, nil, "Idempotency-Key", "send-1").WantStatus(t, 200)
	if readInvoice(t, sent).Status != "sent" {
		t.Fatal("not sent")
	}
	if n := total(t, env, "/v1/invoices", ws.Key); n != 1 {
		t.Fatalf("%d invoices", n)
	}
}

// An invoice past its due date with money open becomes overdue by itself,
// stays overdue while a payment leaves money open, and is paid when none is.
func TestInvoicesBecomeOverdueByThemselves(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	mk := func(due string) string {
		id := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Late", "due_date": due,
			"lines": []obj{line("x", 1000, 1000, 0)}}).WantStatus(t, 201)).ID
		env.Do(t, "POST", "/v1/invoices/"+id+"/send", ws.Key, nil).WantStatus(t, 200)
		return id
	}
	late, onTime := mk("2026-01-31"), mk("2099-01-01")
	draft := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Draft", "due_date": "2026-01-01",
		"lines": []obj{line("x", 1000, 1000, 0)}}).WantStatus(t, 201)).ID
	now := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	if _, err := env.Server.Clock.Tick(t.Context(), now, resource.Invoices); err != nil {
		t.Fatal(err)
	}
	status := func(id string) string { return readInvoice(t, env.Get(t, "/v1/invoices/"+id, ws.Key)).Status }
	if status(late) != "overdue" || status(onTime) != "sent" || status(draft) != "draft" {
		t.Fatalf("after the sweep: late %s, on time %s, draft %s", status(late), status(onTime), status(draft))
	}
	var page struct{ Data []invoiceRead }
	env.Get(t, "/v1/invoices?status=overdue", ws.Key).WantStatus(t, 200).Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != late {
		t.Fatalf("?status=overdue: %+v", page.Data)
	}
	env.Do(t, "POST", "/v1/invoices/"+late+"/payments", ws.Key, payment("late-1", 400)).WantStatus(t, 201)
	if s := status(late); s != "overdue" {
		t.Fatalf("a partial payment moved an overdue invoice to %s", s)
	}
	env.Do(t, "POST", "/v1/invoices/"+late+"/payments", ws.Key, payment("late-2", 600)).WantStatus(t, 201)
	if s := status(late); s != "paid" {
		t.Fatalf("fully paid overdue invoice is %s", s)
	}
	// A second sweep changes nothing more.
	if n, err := env.Server.Clock.Tick(t.Context(), now, resource.Invoices); err != nil || n != 0 {
		t.Fatalf("second sweep moved %d (%v)", n, err)
	}
}

// external_ref makes POST /v1/invoices an upsert, as it does for clients:
// a billing system pushes its invoices again and again, and each stays one.
func TestInvoiceExternalRefUpserts(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	body := obj{"client_name": "Shop", "external_ref": "stripe:acct_1:in_42", "lines": []obj{line("x", 1000, 1000, 0)}}
	first := env.Do(t, "POST", "/v1/invoices", ws.Key, body).WantStatus(t, http.StatusCreated).JSON(t)
	ref, _ := first["external_ref"].(map[string]any)
	if ref["system"] != "stripe" || ref["connection_id"] != "acct_1" || ref["external_id"] != "in_42" {
		t.Fatalf("external_ref read back as %v", first["external_ref"])
	}
	body["notes"] = "pushed again"
	body["external_ref"] = obj{"system": "stripe", "connection_id": "acct_1", "external_id": "in_42"} // the same key, object form
	again := env.Do(t, "POST", "/v1/invoices", ws.Key, body).WantStatus(t, http.StatusOK).JSON(t)
	if again["id"] != first["id"] || again["notes"] != "pushed again" {
		t.Fatalf("upsert answered %v", again)
	}
	id := first["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+id+"/send", ws.Key, nil).WantStatus(t, 200)
	// A sent invoice keeps its lines; its notes still change.
	env.Do(t, "POST", "/v1/invoices", ws.Key, body).WantError(t, http.StatusConflict, "invalid_state_transition")
	env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"external_ref": "stripe:acct_1:in_42", "notes": "paid soon"}).WantStatus(t, http.StatusOK)
	// Another invoice cannot take the ref.
	other := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "B", "lines": []obj{line("y", 1000, 1, 0)}}).WantStatus(t, 201)).ID
	e := env.Do(t, "PATCH", "/v1/invoices/"+other, ws.Key, obj{"external_ref": "stripe:acct_1:in_42"}).WantError(t, http.StatusConflict, "duplicate")
	if e["param"] != "external_ref" {
		t.Fatalf("param %v", e["param"])
	}
	if n := total(t, env, "/v1/invoices", ws.Key); n != 2 {
		t.Fatalf("%d invoices, want 2", n)
	}
	// Concurrent pushes of one new ref make one invoice.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "C", "external_ref": "shop::order-7", "lines": []obj{line("z", 1000, 5, 0)}})
			if r.Status != 201 && r.Status != 200 {
				t.Errorf("concurrent push: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if n := total(t, env, "/v1/invoices", ws.Key); n != 3 {
		t.Fatalf("%d invoices after 8 concurrent pushes of one ref, want 3", n)
	}
}
