package writes_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/clock"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

type eventRead struct {
	ID, Type  string
	RequestID string `json:"request_id"`
	Data      struct {
		Object             json.RawMessage `json:"object"`
		PreviousAttributes map[string]any  `json:"previous_attributes"`
	}
	Actor struct{ Type, ID string }
}

type eventPage struct {
	Data []eventRead
	Meta struct {
		Total   int
		HasMore bool `json:"has_more"`
	}
}

func events(t *testing.T, env *apitest.Env, key, query string) eventPage {
	t.Helper()
	var p eventPage
	env.Get(t, "/v1/events"+query, key).WantStatus(t, http.StatusOK).Decode(t, &p)
	return p
}

// Each write appends exactly one event of its declared type (and a move
// of the parent, such as a payment paying the invoice, one more), whose
// object is the record as GET shows it after the change; a replayed
// Idempotency-Key and a repeated payment id append none.
func TestEveryWriteAppendsItsEvents(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := readInvoice(t, env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Ev", "lines": []obj{line("x", 1000, 1000, 0)}},
		"Idempotency-Key", "ev-1").WantStatus(t, 201)).ID
	env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Ev", "lines": []obj{line("x", 1000, 1000, 0)}},
		"Idempotency-Key", "ev-1").WantStatus(t, 201) // replayed: no event
	path := "/v1/invoices/" + inv
	env.Do(t, "PATCH", path, ws.Key, obj{"notes": "Net 30"}).WantStatus(t, 200)
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", path+"/send", ws.Key, nil).WantError(t, 409, "invalid_state_transition") // refused: no event
	env.Do(t, "POST", path+"/payments", ws.Key, payment("e1", 400)).WantStatus(t, 201)
	env.Do(t, "POST", path+"/payments", ws.Key, payment("e1", 400)).WantStatus(t, 200) // the same payment: no event
	env.Do(t, "POST", path+"/payments", ws.Key, payment("e2", 600)).WantStatus(t, 201)

	p := events(t, env, ws.Key, "?limit=100")
	var types []string
	for i := len(p.Data) - 1; i >= 0; i-- {
		types = append(types, p.Data[i].Type)
	}
	want := []string{"invoice.created", "invoice.updated", "invoice.sent", "invoice_payment.created", "invoice.partially_paid",
		"invoice_payment.created", "invoice.paid"}
	if fmt.Sprint(types) != fmt.Sprint(want) || p.Meta.Total != len(want) {
		t.Fatalf("events (oldest first) %v, total %d; want %v", types, p.Meta.Total, want)
	}
	newest := p.Data[0]
	if got := env.Get(t, path, ws.Key).WantStatus(t, 200).Body; !sameJSON(newest.Data.Object, got) {
		t.Fatalf("invoice.paid object:\n%s\nGET:\n%s", newest.Data.Object, got)
	}
	if upd := p.Data[len(p.Data)-2]; upd.Data.PreviousAttributes["notes"] != "" || upd.Actor.Type != "api_key" || upd.Actor.ID == "" || upd.RequestID == "" {
		t.Fatalf("invoice.updated: %+v", upd)
	}
	one := env.Get(t, "/v1/events/"+newest.ID, ws.Key).WantStatus(t, 200).JSON(t)
	if one["id"] != newest.ID || one["type"] != "invoice.paid" || one["object"] != "event" {
		t.Fatalf("GET /v1/events/{id}: %v", one)
	}
	if got := events(t, env, ws.Key, "?type=invoice_payment.created"); len(got.Data) != 2 {
		t.Fatalf("?type=invoice_payment.created: %d", len(got.Data))
	}
	if got := events(t, env, ws.Key, "?type=invoice.*"); len(got.Data) != 5 {
		t.Fatalf("?type=invoice.*: %d", len(got.Data))
	}
	env.Get(t, "/v1/events?type=", ws.Key).WantError(t, 400, "invalid_request")
	env.Get(t, "/v1/events?starting_after=evt_nope", ws.Key).WantError(t, 400, "invalid_request")
	env.Get(t, "/v1/events?created[gte]=yesterday", ws.Key).WantError(t, 400, "invalid_request")

	// What a key may not read, it does not see; another workspace sees nothing.
	ws.Role(t, "vendors-only", "vendors:read")
	unlimited := 0
	vk := ws.NewKey(t, access.KeySpec{Role: "vendors-only", RateLimit: &unlimited})
	if got := events(t, env, vk, ""); len(got.Data) != 0 || got.Meta.Total != 0 {
		t.Fatalf("a key without invoices:read sees %d events", len(got.Data))
	}
	env.Get(t, "/v1/events/"+newest.ID, vk).WantError(t, 404, "not_found")
	other := env.Workspace(t, "starter", false, false)
	env.Get(t, "/v1/events/"+newest.ID, other.Key).WantError(t, 404, "not_found")
}

// A consumer that catches up with ending_before while events keep being
// written sees every event once, in order.
func TestEventCursorsLoseAndRepeatNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "first"}).WantStatus(t, 201)
	start := events(t, env, ws.Key, "?limit=1").Data[0].ID
	const writers, each = 4, 15
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": fmt.Sprintf("c%d-%d", w, i)}).WantStatus(t, 201)
			}
		}()
	}
	seen := map[string]bool{start: true}
	var order []string
	cursor := start
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		for {
			p := events(t, env, ws.Key, "?limit=5&ending_before="+cursor)
			// newest first: walk the page from its oldest
			for i := len(p.Data) - 1; i >= 0; i-- {
				id := p.Data[i].ID
				if seen[id] {
					t.Fatalf("event %s seen twice", id)
				}
				seen[id] = true
				order = append(order, id)
				cursor = id
			}
			if !p.Meta.HasMore {
				break
			}
		}
		if finished {
			break
		}
	}
	if len(order) != writers*each {
		t.Fatalf("caught up with %d events, want %d", len(order), writers*each)
	}
	// The same events, newest first, by starting_after from the newest.
	all := events(t, env, ws.Key, "?limit=100")
	if all.Meta.Total != writers*each+1 || all.Data[0].ID != order[len(order)-1] {
		t.Fatalf("total %d, newest %s; caught up to %s", all.Meta.Total, all.Data[0].ID, order[len(order)-1])
	}
	older := events(t, env, ws.Key, "?limit=100&starting_after="+order[len(order)-1])
	if len(older.Data) != writers*each || older.Data[0].ID != order[len(order)-2] {
		t.Fatalf("starting_after the newest: %d events", len(older.Data))
	}
}

// sameJSON compares JSON by value (PostgreSQL spaces a jsonb column's text
// its own way).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// A write that changes other records tells of them too: a quote turned
// into an invoice, a credit note applied to an invoice.
func TestWritesTellOfTheOtherRecordsTheyChange(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	qu := env.Do(t, "POST", "/v1/quotes", ws.Key, obj{"client_name": "Q", "lines": []obj{line("x", 1000, 1000, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/quotes/"+qu+"/send", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/quotes/"+qu+"/accept", ws.Key, nil).WantStatus(t, 200)
	inv := env.Do(t, "POST", "/v1/quotes/"+qu+"/invoice", ws.Key, nil).WantStatus(t, 200).JSON(t)["invoice_id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	cn := env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv, "lines": []obj{line("y", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/credit-notes/"+cn+"/issue", ws.Key, nil).WantStatus(t, 200)
	env.Do(t, "POST", "/v1/credit-notes/"+cn+"/apply", ws.Key, nil).WantStatus(t, 200)
	p := events(t, env, ws.Key, "?limit=100")
	var got []string
	for i := len(p.Data) - 1; i >= 0; i-- {
		got = append(got, p.Data[i].Type)
	}
	want := []string{"quote.created", "quote.sent", "quote.accepted", "quote.invoiced", "invoice.created", "invoice.sent",
		"credit_note.created", "credit_note.issued", "credit_note.applied", "invoice.partially_paid"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v\nwant %v", got, want)
	}
	if !sameJSON(p.Data[0].Data.Object, env.Get(t, "/v1/invoices/"+inv, ws.Key).WantStatus(t, 200).Body) {
		t.Fatal("invoice.partially_paid does not show the invoice as GET does")
	}
}

// Events older than the retention are deleted; newer ones stay.
func TestOldEventsArePruned(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	for _, n := range []string{"old", "new"} {
		env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": n}).WantStatus(t, 201)
	}
	p := events(t, env, ws.Key, "")
	// The older event becomes one made 31 days ago: its id carries its
	// time (ids.At), which retention reads.
	longAgo := time.Now().UTC().Add(-31 * 24 * time.Hour)
	oldID := ids.At("evt", longAgo)
	if _, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind("UPDATE events SET created_at = ?, id = ? WHERE id = ?"),
		longAgo, oldID, p.Data[1].ID); err != nil {
		t.Fatal(err)
	}
	n, err := clock.PruneEvents(t.Context(), env.DB, time.Now().Add(-30*24*time.Hour))
	if err != nil || n < 1 {
		t.Fatalf("pruned %d (%v)", n, err)
	}
	env.Get(t, "/v1/events/"+oldID, ws.Key).WantError(t, 404, "not_found")
	if got := events(t, env, ws.Key, ""); len(got.Data) != 1 || got.Data[0].ID != p.Data[0].ID {
		t.Fatalf("after pruning: %+v", got.Data)
	}
}

// systemEvents are the events of workspace ws whose actor is the system.
func systemEvents(t *testing.T, env *apitest.Env, key string) []eventRead {
	t.Helper()
	var out []eventRead
	for _, e := range events(t, env, key, "?limit=100").Data {
		if e.Actor.Type == "system" {
			out = append(out, e)
		}
	}
	return out
}

// declared reports whether typ is one of the published event types.
func declared(typ string) bool {
	for _, t := range resource.EventTypes() {
		if t == typ {
			return true
		}
	}
	return false
}

// The overdue sweep is a write: each invoice it moves gets one
// invoice.overdue event by the system, with the invoice as GET shows it
// and its status before; a second sweep moves and tells nothing. Not
// parallel: the sweep covers every workspace of the package's database,
// and the parallel tests' invoices must not move under them.
func TestOverdueSweepAppendsEvents(t *testing.T) {
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "starter", false, false)
	mk := func(w *apitest.Workspace, due string, pay int64) string {
		id := readInvoice(t, env.Do(t, "POST", "/v1/invoices", w.Key, obj{"client_name": "Late", "due_date": due,
			"lines": []obj{line("x", 1000, 1000, 0)}}).WantStatus(t, 201)).ID
		env.Do(t, "POST", "/v1/invoices/"+id+"/send", w.Key, nil).WantStatus(t, 200)
		if pay > 0 {
			env.Do(t, "POST", "/v1/invoices/"+id+"/payments", w.Key, payment(id+"-p", pay)).WantStatus(t, 201)
		}
		return id
	}
	late, partly, onTime := mk(ws, "2026-01-10", 0), mk(ws, "2026-01-20", 300), mk(ws, "2099-01-01", 0)
	theirs := mk(other, "2026-01-15", 0)
	before := events(t, env, ws.Key, "").Meta.Total
	now := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	n, err := env.Server.Clock.Tick(t.Context(), now, resource.Invoices)
	if err != nil || n < 3 {
		t.Fatalf("sweep moved %d (%v), want at least these 3", n, err)
	}
	sys := systemEvents(t, env, ws.Key)
	if len(sys) != 2 || events(t, env, ws.Key, "").Meta.Total != before+2 {
		t.Fatalf("%d system events in the workspace, want 2", len(sys))
	}
	prev := map[string]string{late: "sent", partly: "partially_paid"}
	for _, e := range sys {
		var obj struct{ ID, Status string }
		if err := json.Unmarshal(e.Data.Object, &obj); err != nil {
			t.Fatal(err)
		}
		if e.Type != "invoice.overdue" || !declared(e.Type) || e.Actor.ID != "overdue_sweep" || obj.Status != "overdue" {
			t.Fatalf("sweep event: %+v", e)
		}
		if want, ok := prev[obj.ID]; !ok || e.Data.PreviousAttributes["status"] != want {
			t.Fatalf("event of %s, previous %v", obj.ID, e.Data.PreviousAttributes)
		}
		delete(prev, obj.ID)
		if got := env.Get(t, "/v1/invoices/"+obj.ID, ws.Key).WantStatus(t, 200).Body; !sameJSON(e.Data.Object, got) {
			t.Fatalf("invoice.overdue object:\n%s\nGET:\n%s", e.Data.Object, got)
		}
		one := env.Get(t, "/v1/events/"+e.ID, ws.Key).WantStatus(t, 200).JSON(t)
		if actor, _ := one["actor"].(map[string]any); actor["type"] != "system" {
			t.Fatalf("GET /v1/events/{id}: %v", one)
		}
		env.Get(t, "/v1/events/"+e.ID, other.Key).WantError(t, 404, "not_found")
	}
	if got := events(t, env, other.Key, "?type=invoice.overdue"); len(got.Data) != 1 || !strings.Contains(string(got.Data[0].Data.Object), theirs) {
		t.Fatalf("the other workspace's overdue events: %+v", got.Data)
	}
	if st := readInvoice(t, env.Get(t, "/v1/invoices/"+onTime, ws.Key)).Status; st != "sent" {
		t.Fatalf("an invoice not yet due is %s", st)
	}
	if n, err := env.Server.Clock.Tick(t.Context(), now, resource.Invoices); err != nil || n != 0 {
		t.Fatalf("second sweep moved %d (%v)", n, err)
	}
	if got := len(systemEvents(t, env, ws.Key)); got != 2 {
		t.Fatalf("second sweep: %d system events", got)
	}
}

// Promotions' date-driven moves are writes too: the reads that find a
// promotion the clock overtook move it once, however many run at once,
// with one promotion.active or promotion.expired event by the system.
func TestPromotionClockMovesAppendEvents(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	now := time.Now().UTC()
	rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	soon := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Flash", "discount_value": 1000,
		"starts_at": rfc(now.Add(time.Hour)), "ends_at": rfc(now.Add(2 * time.Hour))}).WantStatus(t, 201).JSON(t)["id"].(string)
	ending := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Ending", "discount_value": 1000,
		"ends_at": rfc(now.Add(time.Hour))}).WantStatus(t, 201).JSON(t)["id"].(string)
	// The clock overtakes both: their dates move, their rows' versions do not.
	for id, d := range map[string][2]time.Time{soon: {now.Add(-time.Minute), now.Add(time.Hour)}, ending: {now.Add(-time.Hour), now.Add(-time.Second)}} {
		if _, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind("UPDATE promotions SET starts_at = ?, ends_at = ? WHERE id = ?"),
			d[0].UTC(), d[1].UTC(), id); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env.Get(t, "/v1/promotions", ws.Key).WantStatus(t, 200)
		}()
	}
	wg.Wait()
	sys := systemEvents(t, env, ws.Key)
	if len(sys) != 2 {
		t.Fatalf("%d system events, want 2: %+v", len(sys), sys)
	}
	want := map[string]string{soon: "promotion.active", ending: "promotion.expired"}
	for _, e := range sys {
		var obj struct{ ID string }
		if err := json.Unmarshal(e.Data.Object, &obj); err != nil {
			t.Fatal(err)
		}
		if e.Type != want[obj.ID] || !declared(e.Type) || e.Actor.ID != "promotion_dates" {
			t.Fatalf("event of %s: %s by %+v", obj.ID, e.Type, e.Actor)
		}
		if e.Data.PreviousAttributes["status"] == nil {
			t.Fatalf("no previous status: %+v", e.Data.PreviousAttributes)
		}
		if got := env.Get(t, "/v1/promotions/"+obj.ID, ws.Key).WantStatus(t, 200).Body; !sameJSON(e.Data.Object, got) {
			t.Fatalf("%s object:\n%s\nGET:\n%s", e.Type, e.Data.Object, got)
		}
	}
	env.Get(t, "/v1/promotions", ws.Key).WantStatus(t, 200)
	if got := len(systemEvents(t, env, ws.Key)); got != 2 {
		t.Fatalf("reading again: %d system events", got)
	}
}

// Walking back with starting_after while writers keep appending sees every
// older event once, newest first: new events land ahead of the walk.
func TestEventStartingAfterWhileWriting(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	const before = 30
	for i := range before {
		env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": fmt.Sprintf("old-%d", i)}).WantStatus(t, 201)
	}
	newest := events(t, env, ws.Key, "?limit=1").Data[0].ID
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": fmt.Sprintf("new-%d-%d", w, i)}).WantStatus(t, 201)
				if i == 200 {
					return
				}
			}
		}()
	}
	seen := map[string]bool{newest: true}
	walked := []string{newest}
	for cursor := newest; ; {
		p := events(t, env, ws.Key, "?limit=7&starting_after="+cursor)
		for _, e := range p.Data {
			if seen[e.ID] {
				t.Fatalf("event %s seen twice", e.ID)
			}
			seen[e.ID] = true
			walked = append(walked, e.ID)
			cursor = e.ID
		}
		if !p.Meta.HasMore {
			break
		}
	}
	close(stop)
	wg.Wait()
	if len(walked) != before {
		t.Fatalf("walked back over %d events, want %d", len(walked), before)
	}
	all := events(t, env, ws.Key, "?limit=100&starting_after="+walked[0])
	for i, e := range all.Data[:min(len(all.Data), before-1)] {
		if e.ID != walked[i+1] {
			t.Fatalf("event %d of the walk is %s, a page from the start says %s", i+1, walked[i+1], e.ID)
		}
	}
}

// Concurrent writes share SQLite's group-commit transaction, and their
// events are written at its end, with the records they touched read there:
// still, each shipment's sales_order event shows the order as that shipment
// left it (a later shipment in the same transaction has it read first), and
// a refused shipment leaves no event.
func TestConcurrentShipmentsEachTellTheOrderTheyLeft(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	const units, extra = 24, 6
	o := env.Do(t, "POST", "/v1/sales-orders", ws.Key, obj{"client_name": "Ada",
		"lines": []obj{{"description": "A", "qty_milli": units * 1000, "unit_price_cents": 100}}}).WantStatus(t, 201).JSON(t)
	so, line := o["id"].(string), o["lines"].([]any)[0].(obj)["id"].(string)
	env.Do(t, "POST", "/v1/sales-orders/"+so+"/confirm", ws.Key, nil).WantStatus(t, 200)
	rs := concurrently(t, units+extra, func(int) *apitest.Response {
		return env.Do(t, "POST", "/v1/shipments", ws.Key, obj{"sales_order_id": so, "lines": []obj{{"order_line_id": line, "qty_milli": 1000}}})
	})
	shipped := 0
	for _, r := range rs {
		switch r.Status {
		case 201:
			shipped++
		case 409:
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	if shipped != units {
		t.Fatalf("%d shipments of %d units", shipped, units)
	}
	if n := len(events(t, env, ws.Key, "?type=shipment.created&limit=100").Data); n != units {
		t.Fatalf("%d shipment.created events for %d shipments", n, units)
	}
	p := events(t, env, ws.Key, "?type=sales_order.*&limit=100")
	var seen []string
	for i := len(p.Data) - 1; i >= 0; i-- { // oldest first
		e := p.Data[i]
		var order struct {
			Status string
			Lines  []struct {
				Shipped int `json:"shipped_qty_milli"`
			}
		}
		if err := json.Unmarshal(e.Data.Object, &order); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, fmt.Sprintf("%s:%s:%d", e.Type, order.Status, order.Lines[0].Shipped))
	}
	want := []string{"sales_order.created:draft:0", "sales_order.confirmed:confirmed:0", "sales_order.partially_shipped:partially_shipped:1000"}
	for n := 2; n < units; n++ {
		want = append(want, fmt.Sprintf("sales_order.updated:partially_shipped:%d", n*1000))
	}
	want = append(want, fmt.Sprintf("sales_order.shipped:shipped:%d", units*1000))
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("sales_order events, oldest first:\n%v\nwant\n%v", seen, want)
	}
	if !sameJSON(p.Data[0].Data.Object, env.Get(t, "/v1/sales-orders/"+so, ws.Key).WantStatus(t, 200).Body) {
		t.Fatal("the last sales_order event does not show the order as GET does")
	}
}

// A create that matches an existing record by external_ref edits it: in a
// shared transaction it too has the records of its resource whose events
// wait for the end read first. Credit notes applied to an invoice while
// POSTs with its external_ref change its notes, all at once: from one
// invoice event to the next, either the notes changed (an edit) or the
// remaining balance did (an apply), never both.
func TestConcurrentEditsByExternalRefKeepEachEventsOwnState(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	const applies, edits = 8, 16
	inv := env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"client_name": "Q", "external_ref": "erp::INV-1",
		"lines": []obj{line("x", 1000, 10000, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	cns := make([]string, applies)
	for i := range cns {
		cns[i] = env.Do(t, "POST", "/v1/credit-notes", ws.Key, obj{"invoice_id": inv, "lines": []obj{line("y", 1000, 100, 0)}}).WantStatus(t, 201).JSON(t)["id"].(string)
		env.Do(t, "POST", "/v1/credit-notes/"+cns[i]+"/issue", ws.Key, nil).WantStatus(t, 200)
	}
	for _, r := range concurrently(t, applies+edits, func(i int) *apitest.Response {
		if i < applies {
			return env.Do(t, "POST", "/v1/credit-notes/"+cns[i]+"/apply", ws.Key, nil)
		}
		return env.Do(t, "POST", "/v1/invoices", ws.Key, obj{"external_ref": "erp::INV-1", "notes": fmt.Sprintf("edit %d", i)})
	}) {
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	p := events(t, env, ws.Key, "?type=invoice.*&limit=100")
	type state struct {
		Notes     string
		Remaining int `json:"remaining_cents"`
	}
	var prev *state
	changes := 0
	for i := len(p.Data) - 1; i >= 0; i-- { // oldest first
		var s state
		if err := json.Unmarshal(p.Data[i].Data.Object, &s); err != nil {
			t.Fatal(err)
		}
		if prev != nil {
			if s.Notes != prev.Notes && s.Remaining != prev.Remaining {
				t.Fatalf("%s shows both a new note (%q after %q) and a new balance (%d after %d)", p.Data[i].Type, s.Notes, prev.Notes, s.Remaining, prev.Remaining)
			}
			changes++
		}
		prev = &s
	}
	if changes < applies+edits {
		t.Fatalf("%d invoice events after the first, want at least %d", changes, applies+edits)
	}
}
