package openapi

import (
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// events declares GET /v1/events and /v1/events/{id}; the event types
// listed are every type the declarations produce (resource.EventTypes).
func (b *builder) events(doc *openapi3.T) {
	types := resource.EventTypes()
	enum := make([]any, len(types))
	for i, t := range types {
		enum[i] = t
	}
	typ := str("resource.verb, e.g. invoice.paid.")
	typ.Enum = enum
	obj := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Description: "The record as GET showed it right after the change."}
	prev := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Description: "On updates and actions: the fields that changed, with their values before."}
	data := object(map[string]*openapi3.Schema{"object": obj, "previous_attributes": prev}, "object")
	actorType := str("Who made the change.")
	actorType.Enum = []any{"api_key", "admin", "system"}
	actor := object(map[string]*openapi3.Schema{"type": actorType, "id": str("The API key's or admin's id; for the system, the job that made the change: overdue_sweep (invoice.overdue), promotion_dates (promotion.active, promotion.expired), gift_card_expiry (gift_card.expired) or email_delivery (email.sent, email.failed, whose data.object is the email).")}, "type", "id")
	event := object(map[string]*openapi3.Schema{
		"id":         str("evt_..."),
		"object":     &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Enum: []any{"event"}},
		"type":       typ,
		"sequence":   integer(i64(1), nil, "Numbers the workspace's events in commit order. Webhook deliveries may arrive out of order (a retry comes later): order by sequence, dedupe by id."),
		"created_at": openapi3.NewDateTimeSchema(),
		"data":       data,
		"request_id": str("The id of the request that made the change; empty for the system."),
		"actor":      actor,
	}, "id", "object", "type", "sequence", "created_at", "data", "request_id", "actor")
	event.Description = "One committed change, written in the change's own transaction."
	b.schemas["Event"] = openapi3.NewSchemaRef("", event)
	meta := object(map[string]*openapi3.Schema{
		"limit":    integer(nil, nil, "Page size."),
		"offset":   integer(nil, nil, "Events skipped."),
		"total":    integer(nil, nil, "Exact number of events matching the filters."),
		"has_more": {Type: &openapi3.Types{openapi3.TypeBoolean}, Description: "Whether more events lie beyond this page in its direction."},
	}, "limit", "offset", "total", "has_more")
	list := object(nil, "data", "meta")
	list.Properties["data"] = openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: ref("Event")})
	list.Properties["meta"] = openapi3.NewSchemaRef("", meta)
	b.schemas["EventList"] = openapi3.NewSchemaRef("", list)

	errs := func(o *openapi3.Operation, codes ...int) {
		for _, c := range append(codes, http.StatusUnauthorized, http.StatusTooManyRequests) {
			o.Responses.Set(strconv.Itoa(c), &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		}
		o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	}
	l := openapi3.NewOperation()
	l.OperationID, l.Tags = "listEvents", []string{"events"}
	l.Summary = "List the workspace's events, newest first."
	l.Description = "Every committed change, on every plan, limited to the resources the key's role may read; kept 30 days. " +
		"Page with limit/offset, or catch up with starting_after (older than an event) and ending_before (the events right after one), " +
		"which follow commit order: a consumer neither misses nor repeats one while more arrive."
	b.pageParameters(l)
	for _, p := range resource.EventParams {
		s := openapi3.NewStringSchema()
		if p.Time {
			s = openapi3.NewDateTimeSchema()
		}
		l.AddParameter(openapi3.NewQueryParameter(p.Name).WithDescription(p.Doc).WithSchema(s))
	}
	l.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("A page of events.").WithJSONSchemaRef(ref("EventList")))
	errs(l, http.StatusBadRequest)
	doc.AddOperation("/v1/events", http.MethodGet, l)

	g := openapi3.NewOperation()
	g.OperationID, g.Tags, g.Summary = "getEvent", []string{"events"}, "Get one event."
	g.AddParameter(openapi3.NewPathParameter("id").WithSchema(openapi3.NewStringSchema()))
	g.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("The event.").WithJSONSchemaRef(ref("Event")))
	errs(g, http.StatusNotFound)
	doc.AddOperation("/v1/events/{id}", http.MethodGet, g)
}
