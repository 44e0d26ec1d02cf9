package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// The "Done when", as an integrator sees it through a real server:
// an endpoint registered over /v1 receives invoice.created, invoice.sent,
// invoice_payment.created and invoice.paid, signed, in the order of their
// created_at; a receiver that is down while more changes happen gets every
// missed event once it is back (the retry schedule shortened by the
// server's settings); and the records' state is rebuilt from GET /v1/events
// alone, the latest event of each record equal to what GET shows.
func TestIntegratorReceivesEveryChange(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	s := startServer(t, dbURL, hookFlags("100ms,200ms,300ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s")...)
	env := client(t, s.url)
	acme := env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Acme"}).WantStatus(t, 201).JSON(t)["id"].(string)
	before := allEvents(t, env, key) // made before the endpoint: not sent

	rcv := newHookReceiver(t)
	ep := subscribe(t, env, key, rcv, "*")
	line := []map[string]any{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 12000, "vat_rate_bp": 0}}
	inv := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": acme, "lines": line}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", key, map[string]any{"id": "pay-1", "number": "P-1", "status": "completed",
		"date": "2026-11-25", "amount_incl_vat_cents": 12000}).WantStatus(t, 201)

	want := []string{"invoice.created", "invoice.sent", "invoice_payment.created", "invoice.paid"}
	waitFor(t, 10*time.Second, "four events delivered", func() bool { return len(rcv.delivered()) >= len(want) })
	got := rcv.delivered()
	var types []string
	for i, c := range got {
		types = append(types, c.typ)
		if i > 0 && c.created.Before(got[i-1].created) {
			t.Errorf("%s (%v) arrived after %s (%v), created later", got[i-1].typ, got[i-1].created, c.typ, c.created)
		}
		if body := env.Get(t, "/v1/events/"+c.id, key).WantStatus(t, 200).Body; string(body) != string(c.body) {
			t.Errorf("webhook body\n%s\nis not GET /v1/events/%s\n%s", c.body, c.id, body)
		}
	}
	if !slices.Equal(types, want) {
		t.Fatalf("the receiver got %v, want %v", types, want)
	}

	// The receiver goes down; changes go on; attempts fail, and are retried.
	rcv.down()
	inv2 := env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": acme, "lines": line}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv2+"/send", key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/invoices/"+inv2+"/payments", key, map[string]any{"id": "pay-2", "number": "P-2", "status": "completed",
		"date": "2026-11-25", "amount_incl_vat_cents": 5000}).WantStatus(t, 201)
	env.Do(t, "PATCH", "/v1/clients/"+acme, key, map[string]any{"name": "Acme Ltd", "email": "ap@acme.test"}).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Bolt"}).WantStatus(t, 201)
	waitFor(t, 10*time.Second, "attempts failing while the receiver is down", func() bool {
		failed := 0
		for _, d := range deliveriesOf(t, env, key, ep).Data {
			if d.Status == "pending" && d.AttemptCount >= 2 {
				failed++
			}
		}
		return failed >= 3
	})
	rcv.up()

	events := allEvents(t, env, key)
	sent := map[string]bool{}
	for _, e := range before {
		sent[e.ID] = true
	}
	var missed []string
	for _, e := range events {
		if !sent[e.ID] {
			missed = append(missed, e.ID)
		}
	}
	waitFor(t, 20*time.Second, "every event delivered after the receiver is back", func() bool {
		have := map[string]bool{}
		for _, c := range rcv.delivered() {
			have[c.id] = true
		}
		for _, id := range missed {
			if !have[id] {
				return false
			}
		}
		return true
	})
	if n := len(rcv.delivered()); n != len(missed) {
		t.Errorf("the receiver accepted %d events, want the %d made since it subscribed", n, len(missed))
	}

	// The state, rebuilt from the events alone (newest first: the first
	// event seen of a record is its latest), is what GET shows.
	latest := map[string]json.RawMessage{}
	kind := map[string]string{}
	var order []string
	for _, e := range events {
		var o struct{ ID string }
		if err := json.Unmarshal(e.Data.Object, &o); err != nil || o.ID == "" {
			t.Fatalf("event %s carries no record: %s", e.ID, e.Data.Object)
		}
		if _, ok := latest[o.ID]; !ok {
			latest[o.ID] = e.Data.Object
			kind[o.ID] = e.Type[:strings.LastIndex(e.Type, ".")]
			order = append(order, o.ID)
		}
	}
	if len(latest) != 6 { // two clients, two invoices, two payments
		t.Errorf("the events tell of %d records, want 6", len(latest))
	}
	for _, id := range order {
		now := current(t, env, key, kind[id], latest[id])
		if !sameRecord(latest[id], now) {
			t.Errorf("record %s rebuilt from events\n%s\nbut GET shows\n%s", id, latest[id], now)
		}
	}
}

// current is a record as GET shows it now: its own URL, or, for an
// invoice payment, its row in its invoice's payments.
func current(t *testing.T, env *apitest.Env, key, kind string, rec json.RawMessage) json.RawMessage {
	t.Helper()
	var r struct {
		ID        string
		InvoiceID string `json:"invoice_id"`
	}
	_ = json.Unmarshal(rec, &r)
	switch kind {
	case "client":
		return env.Get(t, "/v1/clients/"+r.ID, key).WantStatus(t, http.StatusOK).Body
	case "invoice":
		return env.Get(t, "/v1/invoices/"+r.ID, key).WantStatus(t, http.StatusOK).Body
	case "invoice_payment":
		var l struct{ Data []json.RawMessage }
		env.Get(t, "/v1/invoices/"+r.InvoiceID+"/payments", key).WantStatus(t, http.StatusOK).Decode(t, &l)
		for _, p := range l.Data {
			var x struct{ ID string }
			if json.Unmarshal(p, &x) == nil && x.ID == r.ID {
				return p
			}
		}
		t.Fatalf("payment %s is not among its invoice %s's payments", r.ID, r.InvoiceID)
	}
	t.Fatalf("no GET for a record of %q: %s", kind, rec)
	return nil
}

func sameRecord(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
