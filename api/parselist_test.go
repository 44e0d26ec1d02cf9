package api_test

import (
	"net/url"
	"testing"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// query is a url.Values as ParseList takes it.
func query(v url.Values) api.Query {
	return func(visit func(k, v []byte)) {
		for k, vs := range v {
			for _, x := range vs {
				visit([]byte(k), []byte(x))
			}
		}
	}
}

func refused(t *testing.T, err error, param string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Status != 400 || e.Param != param {
		t.Fatalf("got %v, want a 400 on %s", err, param)
	}
}

// Every list takes limit and offset; a list of no resource nothing else.
func TestParseListPage(t *testing.T) {
	l, err := api.ParseList(query(url.Values{"limit": {"7"}, "offset": {"3"}}), nil)
	if err != nil || l.Limit != 7 || l.Offset != 3 {
		t.Fatalf("%+v %v", l, err)
	}
	if l, _ := api.ParseList(query(nil), nil); l.Limit != api.DefaultLimit {
		t.Fatalf("default limit %d", l.Limit)
	}
	for _, bad := range []url.Values{{"limit": {"0"}}, {"limit": {"101"}}, {"offset": {"-1"}}, {"q": {"x"}}, {"type": {"invoice.paid"}}} {
		_, err := api.ParseList(query(bad), nil)
		for k := range bad {
			refused(t, err, k)
		}
	}
}

// The events' list reads every declared parameter (resource.EventParams)
// and no other.
func TestParseListEvents(t *testing.T) {
	good := map[string]string{"type": "invoice.*,quote.sent", "created[gte]": "2026-11-25T10:00:00Z", "created[lt]": "2026-11-26T10:00:00Z",
		"starting_after": "evt_1", "ending_before": "evt_2"}
	for _, p := range resource.EventParams {
		v, ok := good[p.Name]
		if !ok {
			t.Fatalf("no test value for the declared parameter %s", p.Name)
		}
		if _, err := api.ParseList(query(url.Values{p.Name: {v}}), resource.Events); err != nil {
			t.Errorf("%s=%s: %v", p.Name, v, err)
		}
	}
	l, err := api.ParseList(query(url.Values{"type": {"invoice.*,quote.sent"}, "created[gte]": {"2026-11-25T10:00:00Z"}}), resource.Events)
	if err != nil || len(l.Events.Types) != 1 || len(l.Events.Types[0]) != 2 || len(l.Events.Created) != 1 || l.Events.Created[0].Op != ">=" {
		t.Fatalf("%+v %v", l.Events, err)
	}
	for _, bad := range []url.Values{{"q": {"x"}}, {"type": {"invoice.%"}}, {"created[gte]": {"yesterday"}}, {"status": {"paid"}}} {
		_, err := api.ParseList(query(bad), resource.Events)
		for k := range bad {
			refused(t, err, k)
		}
	}
}

// A resource's records take q and its named filters.
func TestParseListRecords(t *testing.T) {
	r := resource.Invoices
	if len(r.Filters) == 0 {
		t.Fatal("invoices declare no filter")
	}
	f := r.Filters[0]
	val := "x"
	switch f.Type {
	case resource.Boolean:
		val = "true"
	case resource.Enum:
		val = f.Values[0]
	case resource.Date:
		val = "2026-11-25"
	}
	l, err := api.ParseList(query(url.Values{"q": {"acme"}, f.Param: {val}}), r)
	if err != nil || l.Q != "acme" || len(l.Filters) != 1 || l.Filters[0].Column != f.Column {
		t.Fatalf("%+v %v", l, err)
	}
	_, err = api.ParseList(query(url.Values{"nope": {"1"}}), r)
	refused(t, err, "nope")
}

// sort names one of the columns the records show, "-" first for
// descending; anything else is a 400 naming sort, as is a sort of a list
// that has no columns (the events).
func TestParseListSort(t *testing.T) {
	l, err := api.ParseList(query(url.Values{"sort": {"-amount_incl_vat_cents"}}), resource.Invoices)
	if err != nil || l.Sort.Column != "amount_incl_vat_cents" || !l.Sort.Desc {
		t.Fatalf("%+v %v", l.Sort, err)
	}
	if l, err = api.ParseList(query(url.Values{"sort": {"number"}}), resource.Invoices); err != nil || l.Sort.Column != "number" || l.Sort.Desc {
		t.Fatalf("%+v %v", l.Sort, err)
	}
	if l, _ = api.ParseList(query(nil), resource.Invoices); l.Sort.Column != "" {
		t.Fatalf("a list without sort is sorted by %q", l.Sort.Column)
	}
	for _, bad := range []string{"", "-", "nope", "-nope", "lines", "workspace_id", "number,id", "+number"} {
		_, err := api.ParseList(query(url.Values{"sort": {bad}}), resource.Invoices)
		refused(t, err, "sort")
	}
	_, err = api.ParseList(query(url.Values{"sort": {"created_at"}}), resource.Events)
	refused(t, err, "sort")
	_, err = api.ParseList(query(url.Values{"sort": {"created_at"}}), nil)
	refused(t, err, "sort")
}
