package openapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// webhooks declares /v1/webhook-endpoints (admin keys only) and its
// delivery log; enabled_events takes the types the events document lists.
func (b *builder) webhooks(doc *openapi3.T) {
	events := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, MinItems: 1,
		Items:       openapi3.NewSchemaRef("", str("An event type (see Event.type), or * for all.")),
		Description: "The event types sent to the endpoint, or [\"*\"]."}
	url := str("Where events are POSTed: https, and not a private, loopback or link-local address.")
	url.MaxLength = uptr(2048)
	desc := str("A note for people.")
	desc.MaxLength = uptr(1000)
	boolean := func(doc string) *openapi3.Schema { s := openapi3.NewBoolSchema(); s.Description = doc; return s }
	ep := object(map[string]*openapi3.Schema{
		"id":              str("whe_..."),
		"object":          {Type: types("string"), Enum: []any{"webhook_endpoint"}},
		"url":             url,
		"enabled_events":  events,
		"description":     desc,
		"disabled":        boolean("Whether delivery is stopped."),
		"disabled_reason": nullable(str("Why the server disabled the endpoint (it failed for days); null otherwise.")),
		"secret":          str("whsec_...: the signing secret, only in the answers of create and rotate-secret."),
		"created_at":      openapi3.NewDateTimeSchema(),
		"updated_at":      openapi3.NewDateTimeSchema(),
	}, "id", "object", "url", "enabled_events", "description", "disabled", "disabled_reason", "created_at", "updated_at")
	b.schemas["WebhookEndpoint"] = openapi3.NewSchemaRef("", ep)
	create := object(map[string]*openapi3.Schema{"url": url, "enabled_events": events, "description": desc,
		"disabled": boolean("Create it stopped.")}, "url", "enabled_events")
	update := object(map[string]*openapi3.Schema{"url": url, "enabled_events": events, "description": desc,
		"disabled": boolean("Stop (true) or resume (false) delivery; resuming clears disabled_reason.")})
	b.schemas["WebhookEndpointCreate"] = openapi3.NewSchemaRef("", create)
	b.schemas["WebhookEndpointUpdate"] = openapi3.NewSchemaRef("", update)
	attempt := object(map[string]*openapi3.Schema{
		"at":          openapi3.NewDateTimeSchema(),
		"status_code": nullable(integer(nil, nil, "The receiver's HTTP status; null when none came.")),
		"latency_ms":  integer(nil, nil, "Time to the answer."),
		"error":       nullable(str("Why the attempt failed before or besides a status (refused address, timeout, redirect).")),
		"response":    str("The first KiB of the answer's body, as text; never rendered."),
	}, "at", "status_code", "latency_ms", "error", "response")
	status := str("pending (due at next_attempt_at), succeeded, or failed (retries exhausted or endpoint disabled).")
	status.Enum = []any{"pending", "succeeded", "failed"}
	delivery := object(map[string]*openapi3.Schema{
		"id":              str("whd_..."),
		"object":          {Type: types("string"), Enum: []any{"webhook_delivery"}},
		"endpoint_id":     str("whe_..."),
		"event_id":        str("evt_...: also the webhook-id header, the same on every attempt."),
		"event_type":      str("The event's type."),
		"status":          status,
		"attempt_count":   integer(nil, nil, "Attempts made."),
		"next_attempt_at": nullable(openapi3.NewDateTimeSchema()),
		"created_at":      openapi3.NewDateTimeSchema(),
		"attempts":        {Type: types("array"), Items: openapi3.NewSchemaRef("", attempt), Description: "Newest first."},
	}, "id", "object", "endpoint_id", "event_id", "event_type", "status", "attempt_count", "next_attempt_at", "created_at", "attempts")
	b.schemas["WebhookDelivery"] = openapi3.NewSchemaRef("", delivery)
	listOf := func(name string) *openapi3.Schema {
		l := object(nil, "data", "meta")
		l.Properties["data"] = openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("array"), Items: ref(name)})
		l.Properties["meta"] = ref("ListMeta")
		return l
	}
	b.schemas["WebhookEndpointList"] = openapi3.NewSchemaRef("", listOf("WebhookEndpoint"))
	b.schemas["WebhookDeliveryList"] = openapi3.NewSchemaRef("", listOf("WebhookDelivery"))

	errs := func(o *openapi3.Operation, codes ...int) {
		for _, c := range append(codes, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests) {
			o.Responses.Set(strconv.Itoa(c), &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		}
		o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	}
	op := func(id, summary string, path, method string, status int, answer *openapi3.SchemaRef, in string, codes ...int) {
		o := openapi3.NewOperation()
		o.OperationID, o.Tags, o.Summary = id, []string{"webhooks"}, summary
		o.Description = "Admin keys only: a viewer or custom role gets 403."
		for _, p := range []string{"id", "delivery_id"} {
			if strings.Contains(path, "{"+p+"}") {
				o.AddParameter(openapi3.NewPathParameter(p).WithSchema(openapi3.NewStringSchema()))
			}
		}
		if method == http.MethodGet && (id == "listWebhookEndpoints" || id == "listWebhookDeliveries") {
			b.pageParameters(o)
		}
		if in != "" {
			o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(ref(in))}
		}
		res := openapi3.NewResponse().WithDescription(summary).WithJSONSchemaRef(answer)
		if id == "createWebhookEndpoint" || id == "rotateWebhookSecret" {
			// A replay repeats the first answer, secret included.
			o.AddParameter(idempotencyParameter())
			res = replayable(res)
			codes = append(codes, http.StatusConflict)
		}
		o.AddResponse(status, res)
		errs(o, codes...)
		doc.AddOperation(path, method, o)
	}
	const base = "/v1/webhook-endpoints"
	op("createWebhookEndpoint", "Create an endpoint; the answer shows its signing secret, once.", base, http.MethodPost, http.StatusCreated,
		ref("WebhookEndpoint"), "WebhookEndpointCreate", http.StatusBadRequest, http.StatusUnsupportedMediaType)
	op("listWebhookEndpoints", "List the workspace's endpoints, newest first.", base, http.MethodGet, http.StatusOK,
		ref("WebhookEndpointList"), "", http.StatusBadRequest)
	op("getWebhookEndpoint", "Get an endpoint (without its secret).", base+"/{id}", http.MethodGet, http.StatusOK,
		ref("WebhookEndpoint"), "", http.StatusNotFound)
	op("updateWebhookEndpoint", "Change an endpoint; omitted fields stay.", base+"/{id}", http.MethodPatch, http.StatusOK,
		ref("WebhookEndpoint"), "WebhookEndpointUpdate", http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType)
	op("deleteWebhookEndpoint", "Delete an endpoint and its delivery log.", base+"/{id}", http.MethodDelete, http.StatusOK,
		openapi3.NewSchemaRef("", deletedSchema()), "", http.StatusNotFound)
	op("rotateWebhookSecret", "Issue a new signing secret (shown once); the old one keeps signing for 24 hours.", base+"/{id}/rotate-secret",
		http.MethodPost, http.StatusOK, ref("WebhookEndpoint"), "", http.StatusNotFound)
	op("listWebhookDeliveries", "The endpoint's deliveries with every attempt, newest first.", base+"/{id}/deliveries", http.MethodGet,
		http.StatusOK, ref("WebhookDeliveryList"), "", http.StatusBadRequest, http.StatusNotFound)
	op("retryWebhookDelivery", "Send a delivery again now.", base+"/{id}/deliveries/{delivery_id}/retry", http.MethodPost,
		http.StatusOK, ref("WebhookDelivery"), "", http.StatusNotFound)
}
