package writes_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// On PostgreSQL watch must read the parent's state under the parent's
// lock: read before the write locks it (forUpdate in do), a change another
// transaction commits in between is credited to this write. A pending
// payment, which leaves the invoice as it is, then appends invoice.updated
// (the other writer's own event is its own business).
func TestAPendingPaymentRacingAnotherInvoiceChangeAppendsNoInvoiceEvent(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("PostgreSQL: SQLite runs watch and the lock in one serialized transaction")
	}
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 1000)

	st := whileHeld(t, env, "invoices", inv, func() int {
		p := payment("pend-1", 400)
		p["status"] = "pending"
		return env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, p).Status
	})
	if st != http.StatusCreated {
		t.Fatalf("payment: %d", st)
	}
	var types []string
	for _, e := range events(t, env, ws.Key, "?limit=100").Data {
		types = append(types, e.Type)
	}
	if len(types) != 1 || types[0] != "invoice_payment.created" {
		t.Fatalf("events of a pending payment: %v, want [invoice_payment.created]", types)
	}
}

// On PostgreSQL watch must read the record an update changes under the
// record's lock: read before the update's own statements lock it, a change
// another transaction commits in between shows in this update's
// previous_attributes.
func TestAnUpdateRacingAnotherChangeShowsOnlyItsOwnPreviousAttributes(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("PostgreSQL: SQLite runs watch and the update in one serialized transaction")
	}
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key)

	st := whileHeld(t, env, "clients", cli, func() int {
		return env.Do(t, "PATCH", "/v1/clients/"+cli, ws.Key, map[string]any{"name": "Renamed"}).Status
	})
	if st != http.StatusOK {
		t.Fatalf("update: %d", st)
	}
	evs := events(t, env, ws.Key, "?type=client.updated").Data
	if len(evs) != 1 {
		t.Fatalf("client.updated events: %d, want 1", len(evs))
	}
	prev := evs[0].Data.PreviousAttributes
	if _, ok := prev["name"]; !ok || len(prev) != 1 {
		t.Fatalf("previous_attributes %v, want only name", prev)
	}
}

// whileHeld runs write while another transaction holds a change to the row id
// of table, and commits that change once write has read its "before" and
// waits for the row. It answers write's status.
func whileHeld(t *testing.T, env *apitest.Env, table, id string, write func() int) int {
	t.Helper()
	tx, err := env.DB.WritePool.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE "+table+" SET notes = 'other writer', updated_at = now() WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- write() }()
	time.Sleep(500 * time.Millisecond)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return <-done
}
