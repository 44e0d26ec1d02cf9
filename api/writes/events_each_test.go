package writes_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// eventLog follows a workspace's events with ending_before, as a consumer
// catching up does.
type eventLog struct {
	env    *apitest.Env
	key    string
	cursor string
}

// next are the events written since the last call, oldest first.
func (l *eventLog) next(t *testing.T) []eventRead {
	t.Helper()
	var out []eventRead
	for {
		q := "?limit=100"
		if l.cursor != "" {
			q += "&ending_before=" + l.cursor
		}
		p := events(t, l.env, l.key, q)
		for i := len(p.Data) - 1; i >= 0; i-- {
			out = append(out, p.Data[i])
			l.cursor = p.Data[i].ID
		}
		if !p.Meta.HasMore || l.cursor == "" && len(p.Data) == 0 {
			return out
		}
	}
}

// current is the record an event is about as GET shows it now, and
// whether GET still shows it: a sub-resource is found in its parent's list.
func current(t *testing.T, env *apitest.Env, key string, e eventRead) ([]byte, bool) {
	t.Helper()
	var rec struct {
		ID string `json:"id"`
	}
	var fields map[string]any
	if json.Unmarshal(e.Data.Object, &rec) != nil || json.Unmarshal(e.Data.Object, &fields) != nil || rec.ID == "" {
		t.Fatalf("%s: data.object is not a record: %s", e.Type, e.Data.Object)
	}
	object := strings.Split(e.Type, ".")[0]
	for _, r := range resource.All {
		if r.Object() != object {
			continue
		}
		if r.Parent == nil {
			res := env.Get(t, "/v1/"+r.Name+"/"+rec.ID, key)
			if res.Status == http.StatusNotFound {
				return nil, false
			}
			return res.WantStatus(t, http.StatusOK).Body, true
		}
		parent, _ := fields[r.Parent.FK].(string)
		var list struct{ Data []json.RawMessage }
		env.Get(t, "/v1/"+r.Parent.Resource.Name+"/"+parent+"/"+r.Parent.Segment+"?limit=100", key).WantStatus(t, http.StatusOK).Decode(t, &list)
		for _, raw := range list.Data {
			var one struct{ ID string }
			if json.Unmarshal(raw, &one) == nil && one.ID == rec.ID {
				return raw, true
			}
		}
		return nil, false
	}
	t.Fatalf("event type %s names no declared resource", e.Type)
	return nil, false
}

// Every document write, and every other kind of write, appends exactly
// the events its declaration says, in order, each with the record as GET
// shows it right after (a deleted or archived record: as it was last
// shown, or as the write answered); a replayed Idempotency-Key, a refused
// write and a repeated carrier event append none.
func TestEachWriteAppendsExactlyItsEvents(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	key := ws.Key
	log := &eventLog{env: env, key: key}
	ids := map[string]string{}
	lines := []obj{line("x", 1000, 1000, 0)}
	type step struct {
		name, method, path string
		body               obj
		save               string // ids[save] = the answer's id
		want               []string
		headers            []string
	}
	doc := func(name, path string, body obj, save string, want ...string) step {
		return step{name: name, method: "POST", path: path, body: body, save: save, want: want}
	}
	steps := []step{
		doc("create client", "/v1/clients", obj{"name": "Ada"}, "cli", "client.created"),
		{name: "update client", method: "PATCH", path: "/v1/clients/{cli}", body: obj{"name": "Ada Lovelace"}, want: []string{"client.updated"}},
		doc("add address", "/v1/clients/{cli}/addresses", obj{"name": "HQ", "kind": "billing"}, "", "address.created"),
		doc("create invoice", "/v1/invoices", obj{"client_id": "{cli}", "lines": lines}, "inv", "invoice.created"),
		{name: "replayed create", method: "POST", path: "/v1/invoices", body: obj{"client_id": "{cli}", "lines": lines}, headers: []string{"Idempotency-Key", "k1"}, want: []string{"invoice.created"}},
		{name: "replay", method: "POST", path: "/v1/invoices", body: obj{"client_id": "{cli}", "lines": lines}, headers: []string{"Idempotency-Key", "k1"}},
		{name: "update invoice", method: "PATCH", path: "/v1/invoices/{inv}", body: obj{"notes": "Net 30"}, want: []string{"invoice.updated"}},
		doc("send invoice", "/v1/invoices/{inv}/send", nil, "", "invoice.sent"),
		doc("pay part", "/v1/invoices/{inv}/payments", payment("ev-p1", 300), "", "invoice_payment.created", "invoice.partially_paid"),
		// Its balance moves, its status does not.
		doc("pay another part", "/v1/invoices/{inv}/payments", payment("ev-p2", 100), "", "invoice_payment.created", "invoice.updated"),
		doc("the same payment again", "/v1/invoices/{inv}/payments", payment("ev-p2", 100), ""),
		doc("create invoice to void", "/v1/invoices", obj{"client_name": "V", "lines": lines}, "inv2", "invoice.created"),
		doc("void invoice", "/v1/invoices/{inv2}/void", nil, "", "invoice.voided"),
		doc("create invoice to delete", "/v1/invoices", obj{"client_name": "D", "lines": lines}, "inv3", "invoice.created"),
		{name: "delete invoice", method: "DELETE", path: "/v1/invoices/{inv3}", want: []string{"invoice.deleted"}},
		doc("create quote", "/v1/quotes", obj{"client_id": "{cli}", "lines": lines}, "quo", "quote.created"),
		doc("send quote", "/v1/quotes/{quo}/send", nil, "", "quote.sent"),
		doc("accept quote", "/v1/quotes/{quo}/accept", nil, "", "quote.accepted"),
		doc("invoice quote", "/v1/quotes/{quo}/invoice", nil, "", "quote.invoiced", "invoice.created"),
		doc("create quote to decline", "/v1/quotes", obj{"client_name": "N", "lines": lines}, "quo2", "quote.created"),
		doc("send it", "/v1/quotes/{quo2}/send", nil, "", "quote.sent"),
		doc("decline quote", "/v1/quotes/{quo2}/decline", nil, "", "quote.declined"),
		doc("create credit note", "/v1/credit-notes", obj{"invoice_id": "{inv}", "lines": []obj{line("y", 1000, 100, 0)}}, "crn", "credit_note.created"),
		doc("issue credit note", "/v1/credit-notes/{crn}/issue", nil, "", "credit_note.issued"),
		doc("apply credit note", "/v1/credit-notes/{crn}/apply", nil, "", "credit_note.applied", "invoice.updated"), // already partially paid
		doc("create credit note to void", "/v1/credit-notes", obj{"client_name": "C", "lines": lines}, "crn2", "credit_note.created"),
		doc("void credit note", "/v1/credit-notes/{crn2}/void", nil, "", "credit_note.voided"),
		doc("create sales order", "/v1/sales-orders", obj{"client_id": "{cli}", "lines": []obj{{"description": "Mug", "qty_milli": 2000, "unit_price_cents": 500}}}, "so", "sales_order.created"),
		doc("confirm sales order", "/v1/sales-orders/{so}/confirm", nil, "", "sales_order.confirmed"),
		doc("create shipment", "/v1/shipments", obj{"sales_order_id": "{so}", "carrier": "DHL", "tracking_no": "T1"}, "shp", "shipment.created", "sales_order.shipped"),
		{name: "update shipment", method: "PATCH", path: "/v1/shipments/{shp}", body: obj{"sales_order_id": "{so}", "status": "in_transit"}, want: []string{"shipment.updated"}},
		doc("tracking event", "/v1/shipments/{shp}/events", obj{"carrier_event_id": "c1", "occurred_at": "2026-02-02T10:00:00Z", "location": "Lyon"}, "", "shipment.tracking_event.created"),
		doc("the same carrier event", "/v1/shipments/{shp}/events", obj{"carrier_event_id": "c1", "occurred_at": "2026-02-02T10:00:00Z"}, ""),
		doc("create sales order to cancel", "/v1/sales-orders", obj{"client_name": "Z", "lines": []obj{{"description": "Cup", "qty_milli": 1000, "unit_price_cents": 100}}}, "so2", "sales_order.created"),
		doc("cancel sales order", "/v1/sales-orders/{so2}/cancel", nil, "", "sales_order.cancelled"),
		doc("create vendor", "/v1/vendors", obj{"name": "Paper Mill"}, "ven", "vendor.created"),
		doc("create bill", "/v1/bills", obj{"vendor_id": "{ven}", "lines": lines}, "bill", "bill.created"),
		{name: "update bill", method: "PATCH", path: "/v1/bills/{bill}", body: obj{"notes": "Q1"}, want: []string{"bill.updated"}},
		doc("open bill", "/v1/bills/{bill}/open", nil, "", "bill.opened"),
		doc("pay bill", "/v1/bills/{bill}/payments", obj{"id": "bp1", "amount_incl_vat_cents": 400}, "", "bill_payment.created", "bill.partially_paid"),
		doc("pay more of the bill", "/v1/bills/{bill}/payments", obj{"id": "bp2", "amount_incl_vat_cents": 100}, "", "bill_payment.created", "bill.updated"),
		doc("create bill to void", "/v1/bills", obj{"vendor_name": "V", "lines": lines}, "bill2", "bill.created"),
		doc("void bill", "/v1/bills/{bill2}/void", nil, "", "bill.voided"),
		doc("create bill to delete", "/v1/bills", obj{"vendor_name": "D", "lines": lines}, "bill3", "bill.created"),
		{name: "delete bill", method: "DELETE", path: "/v1/bills/{bill3}", want: []string{"bill.deleted"}},
		doc("create store", "/v1/stores", obj{"name": "Shop", "free_address": "ev-shop.ledgerbase.shop"}, "sto", "store.created"),
		{name: "update store", method: "PATCH", path: "/v1/stores/{sto}", body: obj{"name": "The Shop"}, want: []string{"store.updated"}},
		doc("create promotion", "/v1/promotions", obj{"name": "Spring", "discount_value": 1000}, "pro", "promotion.created"),
		{name: "update promotion", method: "PATCH", path: "/v1/promotions/{pro}", body: obj{"name": "Spring 10"}, want: []string{"promotion.updated"}},
		doc("add code", "/v1/promotions/{pro}/codes", obj{"code": "SPRING10"}, "", "promotion_code.created"),
		doc("archive promotion", "/v1/promotions/{pro}/archive", nil, "", "promotion.archived"),
		doc("create item", "/v1/items", obj{"name": "Widget"}, "itm", "item.created"),
		{name: "update item", method: "PATCH", path: "/v1/items/{itm}", body: obj{"name": "Widget 2"}, want: []string{"item.updated"}},
		doc("create category", "/v1/categories", obj{"name": "Mugs"}, "cat", "category.created"),
		doc("create product", "/v1/products", obj{"name": "Mug", "number": "MUG-1"}, "prd", "product.created"),
		{name: "update product", method: "PATCH", path: "/v1/products/{prd}", body: obj{"name": "Big mug"}, want: []string{"product.updated"}},
		doc("upsert product", "/v1/products/upsert", obj{"name": "Bigger mug", "number": "MUG-1"}, "", "product.updated"),
		doc("bulk products", "/v1/products/bulk", obj{"products": []obj{{"name": "Plate", "number": "PLT-1"}, {"name": "Mug", "number": "MUG-1"}}}, "",
			"product.created", "product.updated"),
	}
	fill := func(s string) string {
		for k, v := range ids {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	var fillAny func(v any) any
	fillAny = func(v any) any {
		switch x := v.(type) {
		case string:
			return fill(x)
		case obj:
			out := obj{}
			for k, e := range x {
				out[k] = fillAny(e)
			}
			return out
		case []obj:
			out := make([]obj, len(x))
			for i, e := range x {
				out[i] = fillAny(e).(obj)
			}
			return out
		}
		return v
	}
	log.next(t)
	for _, s := range steps {
		path := fill(s.path)
		var before []byte
		if s.method == "DELETE" {
			before = env.Get(t, path, key).WantStatus(t, 200).Body
		}
		var body any
		if s.body != nil {
			body = fillAny(s.body)
		}
		res := env.Do(t, s.method, path, key, body, s.headers...)
		if res.Status >= 300 {
			t.Fatalf("%s: %s %s answered %d: %s", s.name, s.method, path, res.Status, res.Body)
		}
		if s.save != "" {
			ids[s.save] = res.JSON(t)["id"].(string)
		}
		got := log.next(t)
		var types []string
		for _, e := range got {
			types = append(types, e.Type)
		}
		if fmt.Sprint(types) != fmt.Sprint(s.want) {
			t.Fatalf("%s: events %v, want %v", s.name, types, s.want)
		}
		for _, e := range got {
			if !declared(e.Type) {
				t.Errorf("%s: %s is not among the published event types", s.name, e.Type)
			}
			if e.Actor.Type != "api_key" || e.RequestID != res.Header.Get("X-Request-Id") {
				t.Errorf("%s: %s by %+v in request %s, answered as %s", s.name, e.Type, e.Actor, e.RequestID, res.Header.Get("X-Request-Id"))
			}
			now, shown := current(t, env, key, e)
			switch {
			case shown:
			case before != nil:
				now = before // deleted: as GET showed it last
			default:
				now = res.Body // archived: as the write answered
			}
			if !sameJSON(e.Data.Object, now) {
				t.Errorf("%s: %s object:\n%s\nGET:\n%s", s.name, e.Type, e.Data.Object, now)
			}
		}
	}
}
