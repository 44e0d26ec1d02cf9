package mcpbridge_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
)

// list_events and get_event answer what GET /v1/events answers, with the
// same filters (one type, a comma list, invoice.*, created_gte/created_lt
// for created[gte]/[lt]) and cursors; the key's role narrows them as it
// does the API's, and another workspace's event is not found.
func listsEventsLikeTheAPI(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "growth", false, false)
	key := ws.Key
	f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Ev client"}).WantStatus(t, 201)
	inv := f.env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_name": "Ev", "lines": []map[string]any{
		{"description": "x", "qty_milli": 1000, "unit_price_cents": 1000}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	f.env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, nil).WantStatus(t, 200)
	f.env.Do(t, "POST", "/v1/vendors", key, map[string]any{"name": "Ev vendor"}).WantStatus(t, 201)
	s := f.stdio(t, key)

	type page struct {
		Data []struct {
			ID, Type string
			Data     struct{ Object map[string]any }
		}
		Meta struct {
			Total   int
			HasMore bool `json:"has_more"`
		}
	}
	api := func(query url.Values) page {
		t.Helper()
		var p page
		f.env.Get(t, "/v1/events?"+query.Encode(), key).WantStatus(t, 200).Decode(t, &p)
		return p
	}
	tool := func(name string, args map[string]any) page {
		t.Helper()
		var p page
		b, _ := json.Marshal(s.ok(t, name, args))
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ids := func(p page) []string {
		var out []string
		for _, e := range p.Data {
			out = append(out, e.Type+" "+e.ID)
		}
		return out
	}
	all := api(url.Values{"limit": {"100"}})
	if all.Meta.Total != 4 {
		t.Fatalf("the API lists %d events: %v", all.Meta.Total, ids(all))
	}
	mid := all.Data[1].ID // invoice.sent
	at := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		args  map[string]any
		query url.Values
		want  int
	}{
		{nil, nil, 4},
		{map[string]any{"type": "invoice.sent"}, url.Values{"type": {"invoice.sent"}}, 1},
		{map[string]any{"type": "client.created,vendor.created"}, url.Values{"type": {"client.created,vendor.created"}}, 2},
		{map[string]any{"type": "invoice.*"}, url.Values{"type": {"invoice.*"}}, 2},
		{map[string]any{"created_gte": at}, url.Values{"created[gte]": {at}}, 4},
		{map[string]any{"created_lt": at}, url.Values{"created[lt]": {at}}, 0},
		{map[string]any{"starting_after": mid}, url.Values{"starting_after": {mid}}, 2},
		{map[string]any{"ending_before": mid, "limit": 1}, url.Values{"ending_before": {mid}, "limit": {"1"}}, 1},
	} {
		got, want := tool("list_events", c.args), api(c.query)
		if len(got.Data) != c.want || !slices.Equal(ids(got), ids(want)) || got.Meta != want.Meta {
			t.Errorf("list_events(%v): %v %+v; GET /v1/events?%s: %v %+v", c.args, ids(got), got.Meta, c.query.Encode(), ids(want), want.Meta)
		}
	}
	if p := tool("list_events", map[string]any{"ending_before": mid, "limit": 1}); len(p.Data) != 1 || p.Data[0].Type != "vendor.created" || p.Meta.HasMore {
		t.Errorf("the event right after invoice.sent: %v has_more %v", ids(p), p.Meta.HasMore)
	}

	one := s.ok(t, "get_event", map[string]any{"id": mid})
	var want map[string]any
	f.env.Get(t, "/v1/events/"+mid, key).WantStatus(t, 200).Decode(t, &want)
	if g, w := mustJSON(one), mustJSON(want); g != w {
		t.Fatalf("get_event\n%s\nAPI\n%s", g, w)
	}

	// Refusals name the tool's argument, not the query parameter.
	if e := s.toolError(t, "list_events", map[string]any{"created_gte": "yesterday"}, "invalid_request"); e["param"] != "created_gte" {
		t.Errorf("a bad created_gte: %v", e)
	}
	if e := s.toolError(t, "list_events", map[string]any{"starting_after": "evt_nope"}, "invalid_request"); e["param"] != "starting_after" {
		t.Errorf("an unknown cursor: %v", e)
	}
	other := f.env.Workspace(t, "growth", false, false)
	f.stdio(t, other.Key).toolError(t, "get_event", map[string]any{"id": mid}, "not_found")

	// A role that reads vendors only sees the vendor's event, through the
	// bridge as through the API; a read-only bridge still lists events.
	ws.Role(t, "vendors-only", "vendors:read")
	unlimited := 0
	vk := ws.NewKey(t, access.KeySpec{Role: "vendors-only", RateLimit: &unlimited})
	vs := f.stdio(t, vk, "--read-only")
	if got := vs.ok(t, "list_events", nil); fmt.Sprint(got["meta"].(map[string]any)["total"]) != "1" {
		t.Errorf("a vendors-only key lists %v", got)
	}
	vs.toolError(t, "get_event", map[string]any{"id": mid}, "not_found")
}
