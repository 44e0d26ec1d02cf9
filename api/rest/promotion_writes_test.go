package rest_test

import (
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/promotion"
)

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func TestPromotionCreateEditAndStatusByDates(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	now := time.Now().UTC().Truncate(time.Second)

	active := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Spring sale", "discount_value": 1500}).WantStatus(t, 201).JSON(t)
	if active["status"] != "active" || active["kind"] != "code" || active["discount_type"] != "percentage" || active["discount_value"] != 1500.0 ||
		active["starts_at"] != nil || active["ends_at"] != nil || active["currency_code"] != "EUR" {
		t.Fatalf("created promotion: %v", active)
	}
	scheduled := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Summer shipping", "kind": "automatic", "discount_type": "free_shipping",
		"starts_at": rfc(now.Add(time.Hour)), "ends_at": rfc(now.Add(48 * time.Hour))}).WantStatus(t, 201).JSON(t)
	if scheduled["status"] != "scheduled" || scheduled["kind"] != "automatic" || scheduled["discount_value"] != 0.0 ||
		scheduled["starts_at"] != rfc(now.Add(time.Hour)) {
		t.Fatalf("scheduled promotion: %v", scheduled)
	}
	expired := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Winter 5 EUR", "discount_type": "fixed_amount", "discount_value": 500,
		"currency_code": "CHF", "starts_at": "2020-01-01T00:00:00+01:00", "ends_at": "2020-02-01T00:00:00Z"}).WantStatus(t, 201).JSON(t)
	if expired["status"] != "expired" || expired["starts_at"] != "2019-12-31T23:00:00Z" || expired["currency_code"] != "CHF" {
		t.Fatalf("expired promotion: %v", expired)
	}
	aid, sid, eid := active["id"].(string), scheduled["id"].(string), expired["id"].(string)

	if l := getList(t, env, "/v1/promotions", ws.Key); l.Meta.Total != 3 {
		t.Fatalf("list: %+v", l)
	}
	for st, want := range map[string]string{"active": aid, "scheduled": sid, "expired": eid} {
		if l := getList(t, env, "/v1/promotions?status="+st, ws.Key); l.Meta.Total != 1 || l.Data[0]["id"] != want {
			t.Fatalf("status=%s: %+v", st, l)
		}
	}
	if l := getList(t, env, "/v1/promotions?q=Summer", ws.Key); l.Meta.Total != 1 || l.Data[0]["id"] != sid {
		t.Fatalf("q=Summer: %+v", l)
	}

	// Edits: the status follows the new dates; omitted fields stay.
	got := env.Do(t, "PATCH", "/v1/promotions/"+sid, ws.Key, obj{"name": "Summer shipping", "starts_at": rfc(now.Add(-time.Hour))}).WantStatus(t, 200).JSON(t)
	if got["status"] != "active" || got["ends_at"] != rfc(now.Add(48*time.Hour)) || got["discount_type"] != "free_shipping" {
		t.Fatalf("started: %v", got)
	}
	got = env.Do(t, "PATCH", "/v1/promotions/"+eid, ws.Key, obj{"name": "Winter 5 EUR", "ends_at": nil}).WantStatus(t, 200).JSON(t)
	if got["status"] != "active" || got["ends_at"] != nil || got["discount_value"] != 500.0 {
		t.Fatalf("reopened: %v", got)
	}
	got = env.Do(t, "PATCH", "/v1/promotions/"+aid, ws.Key, obj{"name": "Spring sale 20", "discount_value": 2000, "ends_at": rfc(now.Add(-time.Minute))}).
		WantStatus(t, 200).JSON(t)
	if got["status"] != "expired" || got["discount_value"] != 2000.0 || got["name"] != "Spring sale 20" || got["kind"] != "code" {
		t.Fatalf("ended: %v", got)
	}
	// A new type without a value: free shipping drops the old value, a
	// percentage keeps the stored one when it fits.
	got = env.Do(t, "PATCH", "/v1/promotions/"+aid, ws.Key, obj{"name": "Spring sale 20", "discount_type": "free_shipping"}).WantStatus(t, 200).JSON(t)
	if got["discount_value"] != 0.0 {
		t.Fatalf("free shipping: %v", got)
	}
	env.Do(t, "PATCH", "/v1/promotions/"+aid, ws.Key, obj{"name": "Spring sale 20", "discount_type": "percentage"}).WantError(t, 400, "invalid_request")
	read := env.Get(t, "/v1/promotions/"+eid, ws.Key).WantStatus(t, 200).JSON(t)
	if read["status"] != "active" || read["ends_at"] != nil {
		t.Fatalf("GET after edit: %v", read)
	}

	// A retried create with its Idempotency-Key makes one promotion.
	body := obj{"name": "Retry", "discount_value": 100}
	first := env.Do(t, "POST", "/v1/promotions", ws.Key, body, "Idempotency-Key", "promo-1").WantStatus(t, 201)
	again := env.Do(t, "POST", "/v1/promotions", ws.Key, body, "Idempotency-Key", "promo-1").WantStatus(t, 201)
	if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("idempotent retry: %s / %s", first.Body, again.Body)
	}
	if l := getList(t, env, "/v1/promotions", ws.Key); l.Meta.Total != 4 {
		t.Fatalf("after retry: %+v", l)
	}
}

// The clock moves statuses without a write: a row whose dates the clock
// has overtaken (simulated by moving its dates without touching the row's
// version, as time would) reads, filters and counts by the dates, also
// when its rendering was cached.
func TestPromotionStatusFollowsTheClock(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	now := time.Now().UTC()
	soon := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Flash", "discount_value": 1000,
		"starts_at": rfc(now.Add(time.Hour)), "ends_at": rfc(now.Add(2 * time.Hour))}).WantStatus(t, 201).JSON(t)["id"].(string)
	ending := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Ending", "discount_value": 1000,
		"ends_at": rfc(now.Add(time.Hour))}).WantStatus(t, 201).JSON(t)["id"].(string)
	for i := 0; i < 2; i++ { // the second read is answered from the render cache
		if env.Get(t, "/v1/promotions/"+soon, ws.Key).JSON(t)["status"] != "scheduled" ||
			env.Get(t, "/v1/promotions/"+ending, ws.Key).JSON(t)["status"] != "active" {
			t.Fatal("statuses before the clock moved")
		}
		if l := getList(t, env, "/v1/promotions?status=active", ws.Key); l.Meta.Total != 1 {
			t.Fatalf("active before: %+v", l)
		}
	}
	shift := func(id string, starts, ends time.Time) {
		t.Helper()
		if _, err := env.DB.WritePool.ExecContext(t.Context(), env.DB.Rebind("UPDATE promotions SET starts_at = ?, ends_at = ? WHERE id = ?"),
			starts.UTC(), ends.UTC(), id); err != nil {
			t.Fatal(err)
		}
	}
	shift(soon, now.Add(-time.Minute), now.Add(time.Hour))
	shift(ending, now.Add(-time.Hour), now.Add(-time.Second))
	if l := getList(t, env, "/v1/promotions?status=active", ws.Key); l.Meta.Total != 1 || l.Data[0]["id"] != soon {
		t.Fatalf("active after: %+v", l)
	}
	if l := getList(t, env, "/v1/promotions?status=expired", ws.Key); l.Meta.Total != 1 || l.Data[0]["id"] != ending {
		t.Fatalf("expired after: %+v", l)
	}
	if st := env.Get(t, "/v1/promotions/"+soon, ws.Key).JSON(t)["status"]; st != "active" {
		t.Fatalf("started promotion reads %v", st)
	}
	if st := env.Get(t, "/v1/promotions/"+ending, ws.Key).JSON(t)["status"]; st != "expired" {
		t.Fatalf("ended promotion reads %v", st)
	}
	// An archived promotion is not moved by its dates.
	env.Do(t, "POST", "/v1/promotions/"+soon+"/archive", ws.Key, nil).WantStatus(t, 200)
	shift(soon, now.Add(-2*time.Hour), now.Add(-time.Hour))
	env.Get(t, "/v1/promotions", ws.Key).WantStatus(t, 200)
	p, err := env.DB.Writer.Promotion.Get(t.Context(), soon)
	if err != nil || p.Status != promotion.StatusArchived {
		t.Fatalf("archived promotion moved: %v %v", p, err)
	}
}

func TestPromotionArchive(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	id := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Old", "discount_value": 1000}).WantStatus(t, 201).JSON(t)["id"].(string)
	keep := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Kept", "discount_value": 1000}).WantStatus(t, 201).JSON(t)["id"].(string)
	env.Do(t, "POST", "/v1/promotions/"+id+"/codes", ws.Key, obj{"code": "OLD10"}).WantStatus(t, 201)

	// A code promotion with codes cannot become automatic.
	env.Do(t, "PATCH", "/v1/promotions/"+id, ws.Key, obj{"name": "Old", "kind": "automatic"}).WantError(t, 409, "has_codes")
	if got := env.Do(t, "PATCH", "/v1/promotions/"+keep, ws.Key, obj{"name": "Kept", "kind": "automatic"}).WantStatus(t, 200).JSON(t); got["kind"] != "automatic" {
		t.Fatalf("kind change: %v", got)
	}

	// The archive answer is the archived promotion; a retry with the same
	// key replays it instead of refusing.
	a := env.Do(t, "POST", "/v1/promotions/"+id+"/archive", ws.Key, nil, "Idempotency-Key", "archive-1").WantStatus(t, 200)
	got := a.JSON(t)
	if got["id"] != id || got["status"] != "archived" || got["name"] != "Old" {
		t.Fatalf("archive answer: %v", got)
	}
	again := env.Do(t, "POST", "/v1/promotions/"+id+"/archive", ws.Key, nil, "Idempotency-Key", "archive-1").WantStatus(t, 200)
	if string(again.Body) != string(a.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replayed archive: %s", again.Body)
	}

	// It leaves lists and, as every archived promotion does, reads.
	l := getList(t, env, "/v1/promotions", ws.Key)
	if l.Meta.Total != 1 || l.Data[0]["id"] != keep {
		t.Fatalf("list after archive: %+v", l)
	}
	env.Get(t, "/v1/promotions/"+id, ws.Key).WantError(t, 404, "not_found")
	env.Get(t, "/v1/promotions/"+id+"/codes", ws.Key).WantError(t, 404, "not_found")
	// Adding a code keeps its answer of before: an archived promotion is not found.
	env.Do(t, "POST", "/v1/promotions/"+id+"/codes", ws.Key, obj{"code": "OLD20"}).WantError(t, 404, "not_found")
	// Archived is final: no second archive, no edit.
	env.Do(t, "POST", "/v1/promotions/"+id+"/archive", ws.Key, nil).WantError(t, 409, "invalid_state_transition")
	env.Do(t, "PATCH", "/v1/promotions/"+id, ws.Key, obj{"name": "Back"}).WantError(t, 409, "invalid_state_transition")
	p, err := env.DB.Writer.Promotion.Get(t.Context(), id)
	if err != nil || p.Status != promotion.StatusArchived || p.Name != "Old" {
		t.Fatalf("archived promotion: %v %v", p, err)
	}

	// Scheduled and expired promotions archive too.
	for _, dates := range []obj{
		{"starts_at": rfc(time.Now().Add(time.Hour))},
		{"starts_at": "2020-01-01T00:00:00Z", "ends_at": "2020-01-02T00:00:00Z"},
	} {
		dates["name"], dates["discount_value"] = "Dated", 100
		pid := env.Do(t, "POST", "/v1/promotions", ws.Key, dates).WantStatus(t, 201).JSON(t)["id"].(string)
		env.Do(t, "POST", "/v1/promotions/"+pid+"/archive", ws.Key, nil).WantStatus(t, 200)
	}
	if l := getList(t, env, "/v1/promotions", ws.Key); l.Meta.Total != 1 {
		t.Fatalf("list after archives: %+v", l)
	}
}

func TestPromotionWritesRefuseAndWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	id := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Base", "discount_value": 1000,
		"starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-02-01T00:00:00Z"}).WantStatus(t, 201).JSON(t)["id"].(string)
	before := fingerprint(t, env, ws.ID)

	for _, c := range []struct {
		method string
		body   obj
		param  string
	}{
		{"POST", obj{"name": "P", "discount_value": 100, "status": "active"}, "status"},
		{"POST", obj{"name": "P", "discount_value": 100, "times_used": 3}, "times_used"},
		{"POST", obj{"discount_value": 100}, "name"},
		{"POST", obj{"name": "P"}, "discount_value"},
		{"POST", obj{"name": "P", "discount_value": 0}, "discount_value"},
		{"POST", obj{"name": "P", "discount_value": 10001}, "discount_value"},
		{"POST", obj{"name": "P", "discount_value": -5, "discount_type": "fixed_amount"}, "discount_value"},
		{"POST", obj{"name": "P", "discount_value": 5, "discount_type": "free_shipping"}, "discount_value"},
		{"POST", obj{"name": "P", "discount_value": 100, "kind": "coupon"}, "kind"},
		{"POST", obj{"name": "P", "discount_value": 100, "starts_at": "2030-01-01"}, "starts_at"},
		{"POST", obj{"name": "P", "discount_value": 100, "starts_at": "2030-01-02T00:00:00Z", "ends_at": "2030-01-01T00:00:00Z"}, "ends_at"},
		{"POST", obj{"name": "P", "discount_value": 100, "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-01T01:00:00+01:00"}, "ends_at"},
		{"POST", obj{"name": "P", "discount_value": 100, "currency_code": "eur"}, "currency_code"},
		{"PATCH", obj{"discount_value": 100}, "name"},
		{"PATCH", obj{"name": "P", "ends_at": "2029-12-31T00:00:00Z"}, "ends_at"},   // before the stored starts_at
		{"PATCH", obj{"name": "P", "starts_at": "2030-03-01T00:00:00Z"}, "ends_at"}, // after the stored ends_at
		{"PATCH", obj{"name": "P", "discount_type": "free_shipping", "discount_value": 100}, "discount_value"},
		{"PATCH", obj{"name": "P", "discount_value": 20000}, "discount_value"},
	} {
		path := "/v1/promotions"
		if c.method == "PATCH" {
			path += "/" + id
		}
		wantParam(t, env.Do(t, c.method, path, ws.Key, c.body).WantError(t, 400, "invalid_request"), c.param)
	}

	viewer := ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})
	env.Do(t, "POST", "/v1/promotions", viewer, obj{"name": "P", "discount_value": 100}).WantError(t, 403, "permission_denied")
	env.Do(t, "PATCH", "/v1/promotions/"+id, viewer, obj{"name": "P"}).WantError(t, 403, "permission_denied")
	env.Do(t, "POST", "/v1/promotions/"+id+"/archive", viewer, nil).WantError(t, 403, "permission_denied")
	for _, plan := range []string{"starter", "growth"} {
		low := env.Workspace(t, plan, true, true)
		env.Do(t, "POST", "/v1/promotions", low.Key, obj{"name": "P", "discount_value": 100}).WantError(t, 403, "plan_required")
		env.Do(t, "PATCH", "/v1/promotions/"+id, low.Key, obj{"name": "P"}).WantError(t, 403, "plan_required")
		env.Do(t, "POST", "/v1/promotions/"+id+"/archive", low.Key, nil).WantError(t, 403, "plan_required")
	}
	other := env.Workspace(t, "business", false, false)
	env.Do(t, "PATCH", "/v1/promotions/"+id, other.Key, obj{"name": "Theirs"}).WantError(t, 404, "not_found")
	env.Do(t, "POST", "/v1/promotions/"+id+"/archive", other.Key, nil).WantError(t, 404, "not_found")

	if after := fingerprint(t, env, ws.ID); after != before {
		t.Fatalf("refused writes changed the workspace:\n%s\n%s", before, after)
	}
	if got := env.Get(t, "/v1/promotions/"+id, ws.Key).JSON(t); got["status"] != "scheduled" || got["name"] != "Base" {
		t.Fatalf("promotion after refusals: %v", got)
	}
}

// Concurrent archives of one promotion: one wins, the others see it
// archived (the row lock on PostgreSQL, the single writer on SQLite).
func TestConcurrentArchivesOfOnePromotion(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", false, false)
	id := env.Do(t, "POST", "/v1/promotions", ws.Key, obj{"name": "Race", "discount_value": 100}).WantStatus(t, 201).JSON(t)["id"].(string)
	res := concurrentPosts(t, env, ws.Key, "/v1/promotions/"+id+"/archive", 8, func(int) obj { return obj{} })
	statuses := make([]int, len(res))
	for i, r := range res {
		statuses[i] = r.Status
	}
	if won := tally(t, statuses, 200, 409); won != 1 {
		t.Fatalf("%d archives won: %v", won, statuses)
	}
}
