package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
)

// /v1/webhook-endpoints: where a workspace's events are pushed, with the
// delivery log under each. Endpoints are configuration, for admin keys
// only; their writes are configuration writes (configure.go).

// endpointJSON is an endpoint as the API shows it; Secret only on create
// and rotation.
type endpointJSON struct {
	ID             string    `json:"id"`
	Object         string    `json:"object"`
	URL            string    `json:"url"`
	EnabledEvents  []string  `json:"enabled_events"`
	Description    string    `json:"description"`
	Disabled       bool      `json:"disabled"`
	DisabledReason *string   `json:"disabled_reason"`
	Secret         string    `json:"secret,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func showEndpoint(e *ent.WebhookEndpoint, secret bool) endpointJSON {
	out := endpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, EnabledEvents: webhooks.DecodeTypes(e.EnabledEvents),
		Description: e.Description, Disabled: e.Disabled, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
	if e.DisabledReason != "" {
		out.DisabledReason = &e.DisabledReason
	}
	if secret {
		out.Secret = e.Secret
	}
	return out
}

// EndpointBody reads a create's or update's JSON into a change and checks
// it by the endpoints' rules (webhooks.Settings.CheckEndpoint).
func (c *Core) EndpointBody(ctx context.Context, contentType string, raw []byte, create bool) (webhooks.EndpointChange, error) {
	var in webhooks.EndpointChange
	raw, err := body.Read(contentType, raw, false)
	if err != nil {
		return in, err
	}
	m, err := body.Decode(raw)
	if err != nil {
		return in, err
	}
	for k, v := range m {
		switch k {
		case "url", "description":
			str, ok := v.(string)
			if !ok {
				return in, apierr.Invalid(k, "%s must be a string", k)
			}
			if k == "url" {
				in.URL = &str
			} else {
				in.Description = &str
			}
		case "enabled_events":
			list, ok := v.([]any)
			if !ok {
				return in, apierr.Invalid(k, "enabled_events must be a non-empty array of event types, or [\"*\"]")
			}
			in.Events = []string{}
			for _, x := range list {
				t, ok := x.(string)
				if !ok {
					return in, apierr.Invalid(k, "unknown event type %v; the OpenAPI document lists them (\"invoice.*\" and \"*\" match several)", x)
				}
				in.Events = append(in.Events, t)
			}
		case "disabled":
			b, ok := v.(bool)
			if !ok {
				return in, apierr.Invalid(k, "disabled must be true or false")
			}
			in.Disabled = &b
		default:
			return in, apierr.Invalid(k, "unknown field %q", k)
		}
	}
	return in, c.Webhooks.CheckEndpoint(ctx, &in, create)
}

// Endpoint is p's workspace's endpoint id, without its secret.
func (c *Core) Endpoint(ctx context.Context, p *access.Principal, id string) ([]byte, error) {
	e, err := webhooks.FindEndpoint(ctx, c.DB.Reader, p.Workspace.ID, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(showEndpoint(e, false))
}

// Endpoints is a page of p's workspace's endpoints, newest first.
func (c *Core) Endpoints(ctx context.Context, p *access.Principal, l List) ([]byte, error) {
	q := c.DB.Reader.WebhookEndpoint.Query().Where(webhookendpoint.WorkspaceID(p.Workspace.ID))
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	es, err := q.Order(ent.Desc(webhookendpoint.FieldCreatedAt), ent.Desc(webhookendpoint.FieldID)).
		Limit(l.Limit).Offset(l.Offset).All(ctx)
	if err != nil {
		return nil, err
	}
	data := make([]endpointJSON, len(es))
	for i, e := range es {
		data[i] = showEndpoint(e, false)
	}
	return json.Marshal(map[string]any{"data": data, "meta": listMeta{l.Limit, l.Offset, total}})
}

// listMeta is the meta of a list's page.
type listMeta struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	Total  int `json:"total"`
}

// deliveryJSON is a delivery with its attempts, newest first.
type deliveryJSON struct {
	ID            string        `json:"id"`
	Object        string        `json:"object"`
	EndpointID    string        `json:"endpoint_id"`
	EventID       string        `json:"event_id"`
	EventType     string        `json:"event_type"`
	Status        string        `json:"status"`
	AttemptCount  int           `json:"attempt_count"`
	NextAttemptAt *time.Time    `json:"next_attempt_at"`
	CreatedAt     time.Time     `json:"created_at"`
	Attempts      []attemptJSON `json:"attempts"`
}

type attemptJSON struct {
	At         time.Time `json:"at"`
	StatusCode *int      `json:"status_code"`
	LatencyMS  int64     `json:"latency_ms"`
	Error      *string   `json:"error"`
	Response   string    `json:"response"`
}

func showDelivery(d webhooks.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Status: string(d.Status), AttemptCount: d.WebhookDelivery.Attempts, CreatedAt: d.CreatedAt.UTC(), Attempts: []attemptJSON{}}
	if d.Status == webhookdelivery.StatusPending {
		t := d.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	for _, a := range d.Attempts {
		x := attemptJSON{At: a.CreatedAt.UTC(), LatencyMS: a.LatencyMs, Response: a.Response}
		if a.StatusCode != 0 {
			x.StatusCode = &a.StatusCode
		}
		if a.Error != "" {
			x.Error = &a.Error
		}
		out.Attempts = append(out.Attempts, x)
	}
	return out
}

// Deliveries is a page of the deliveries of p's workspace's endpoint id,
// newest first, each with its attempts.
func (c *Core) Deliveries(ctx context.Context, p *access.Principal, id string, l List) ([]byte, error) {
	e, err := webhooks.FindEndpoint(ctx, c.DB.Reader, p.Workspace.ID, id)
	if err != nil {
		return nil, err
	}
	ds, total, err := webhooks.Deliveries(ctx, c.DB.Reader, e.ID, l.Limit, l.Offset)
	if err != nil {
		return nil, err
	}
	data := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		data[i] = showDelivery(d)
	}
	return json.Marshal(map[string]any{"data": data, "meta": listMeta{l.Limit, l.Offset, total}})
}

// ManageEndpoints is the gate of every webhook endpoint's read and write
// (configOps gates the writes alike): admin keys only.
func ManageEndpoints(p *access.Principal) error { return adminOnly(p, "webhook endpoints") }
