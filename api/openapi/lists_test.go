package openapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/openapi"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Every list in the served document — the records' lists, the events and
// the webhook endpoints and deliveries — takes limit and offset as the one
// shared declaration: integers, limit 1 to MaxLimit defaulting to 25,
// offset 0 or more defaulting to 0 (the spec's list convention).
func TestEveryListDeclaresLimitAndOffsetAlike(t *testing.T) {
	t.Parallel()
	doc, _, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"limit":  `{"default":25,"format":"int64","maximum":` + itoa(api.MaxLimit) + `,"minimum":1,"type":"integer"}`,
		"offset": `{"default":0,"format":"int64","minimum":0,"type":"integer"}`,
	}
	lists := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		get := item.Get
		if get == nil || get.Responses.Status(200) == nil {
			continue
		}
		body := get.Responses.Status(200).Value.Content.Get("application/json")
		if body == nil || body.Schema == nil || body.Schema.Value.Properties["meta"] == nil ||
			body.Schema.Value.Properties["meta"].Value.Properties["offset"] == nil {
			continue // not a page of a list
		}
		lists[path] = true
		for name, schema := range want {
			p := get.Parameters.GetByInAndName("query", name)
			if p == nil {
				t.Errorf("GET %s declares no %s", path, name)
				continue
			}
			got, err := json.Marshal(p.Schema.Value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != schema {
				t.Errorf("GET %s: %s is %s, want %s", path, name, got, schema)
			}
			var ref string
			for _, pr := range get.Parameters {
				if pr.Value == p {
					ref = pr.Ref
				}
			}
			if ref != "#/components/parameters/"+name {
				t.Errorf("GET %s: %s is declared in place (%q), not by the shared declaration", path, name, ref)
			}
		}
	}
	n := 0
	for _, rt := range api.Routes() {
		if rt.Op.Kind == resource.List {
			n++
			if p := strings.NewReplacer(":id", "{id}").Replace(rt.Path); !lists[p] {
				t.Errorf("the list %s is not found as a list", p)
			}
		}
	}
	for _, p := range []string{"/v1/events", "/v1/webhook-endpoints", "/v1/webhook-endpoints/{id}/deliveries"} {
		if !lists[p] {
			t.Errorf("the list %s is not found as a list", p)
		}
	}
	if len(lists) != n+3 {
		t.Errorf("%d lists in the document, want the %d of the routes, the events and the two webhook lists", len(lists), n)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
