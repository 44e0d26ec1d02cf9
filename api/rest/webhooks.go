package rest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
)

// /v1/webhook-endpoints: where a workspace's events are pushed. Endpoints
// are configuration rather than business records, so they are managed by
// admin keys only (a viewer or custom role gets 403) and are not records
// of the declarations' engine; the delivery log hangs under each endpoint.

func (s *Server) mountWebhooks(v1 fiber.Router) {
	g := v1.Group("/webhook-endpoints", adminOnly)
	g.Post("/", s.createEndpoint)
	g.Get("/", s.listEndpoints)
	g.Get("/:id", s.getEndpoint)
	g.Patch("/:id", s.updateEndpoint)
	g.Delete("/:id", s.deleteEndpoint)
	g.Post("/:id/rotate-secret", s.rotateSecret)
	g.Get("/:id/deliveries", s.listDeliveries)
	g.Post("/:id/deliveries/:delivery_id/retry", s.retryDelivery)
}

func adminOnly(c *fiber.Ctx) error {
	if p := principal(c); p.Key.Role != access.RoleAdmin {
		return apierr.Forbidden("permission_denied", "the key's role %q may not manage webhook endpoints (admin only)", p.Key.Role)
	}
	return c.Next()
}

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

func sendValue(c *fiber.Ctx, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return sendJSON(c, status, b)
}

// endpointBody reads a create's or update's JSON into a change and checks
// it by the endpoints' rules (webhooks.Settings.CheckEndpoint), which the
// admin UI's forms go through too.
func (s *Server) endpointBody(c *fiber.Ctx, create bool) (webhooks.EndpointChange, error) {
	var in webhooks.EndpointChange
	raw, err := body.Read(c.Get(fiber.HeaderContentType), c.Body(), false)
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
	return in, s.Webhooks.CheckEndpoint(c.UserContext(), &in, create)
}

// keyedWrite runs an endpoint write through the core's Write, in one
// transaction under the POST's Idempotency-Key, like every POST write: a
// retry replays the first answer, secret included, since a client that
// lost that answer has no other way to learn the secret. do answers a
// status and the value shown.
func (s *Server) keyedWrite(c *fiber.Ctx, do func(ctx context.Context, tx *ent.Tx) (int, any, error)) error {
	w := api.WriteRequest{
		Principal: principal(c), Route: api.Route{Method: c.Method(), Path: c.Route().Path},
		Body: c.Body(), RequestID: requestID(c), Do: do,
	}
	res, e := s.Write(c.UserContext(), s.keyed(c, w))
	return s.send(c, res, e)
}

func (s *Server) createEndpoint(c *fiber.Ctx) error {
	in, err := s.endpointBody(c, true)
	if err != nil {
		return err
	}
	return s.keyedWrite(c, func(ctx context.Context, tx *ent.Tx) (int, any, error) {
		e, err := webhooks.CreateEndpoint(ctx, tx.Client(), principal(c).Workspace.ID, in)
		if err != nil {
			return 0, nil, err
		}
		return fiber.StatusCreated, showEndpoint(e, true), nil
	})
}

// endpoint is the caller's workspace's endpoint :id, else 404.
func (s *Server) endpoint(c *fiber.Ctx, client *ent.Client) (*ent.WebhookEndpoint, error) {
	return webhooks.FindEndpoint(c.UserContext(), client, principal(c).Workspace.ID, c.Params("id"))
}

func (s *Server) getEndpoint(c *fiber.Ctx) error {
	e, err := s.endpoint(c, s.DB.Reader)
	if err != nil {
		return err
	}
	return sendValue(c, fiber.StatusOK, showEndpoint(e, false))
}

func (s *Server) listEndpoints(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	limit, offset := l.Limit, l.Offset
	q := s.DB.Reader.WebhookEndpoint.Query().Where(webhookendpoint.WorkspaceID(principal(c).Workspace.ID))
	total, err := q.Clone().Count(c.UserContext())
	if err != nil {
		return err
	}
	es, err := q.Order(ent.Desc(webhookendpoint.FieldCreatedAt), ent.Desc(webhookendpoint.FieldID)).
		Limit(limit).Offset(offset).All(c.UserContext())
	if err != nil {
		return err
	}
	data := make([]endpointJSON, len(es))
	for i, e := range es {
		data[i] = showEndpoint(e, false)
	}
	return sendValue(c, fiber.StatusOK, map[string]any{"data": data, "meta": listMeta{limit, offset, total}})
}

func (s *Server) updateEndpoint(c *fiber.Ctx) error {
	in, err := s.endpointBody(c, false)
	if err != nil {
		return err
	}
	e, err := s.endpoint(c, s.DB.Ent)
	if err != nil {
		return err
	}
	if e, err = webhooks.UpdateEndpoint(c.UserContext(), e, s.DB.Ent, in); err != nil {
		return err
	}
	return sendValue(c, fiber.StatusOK, showEndpoint(e, false))
}

func (s *Server) deleteEndpoint(c *fiber.Ctx) error {
	if err := noFields(c); err != nil {
		return err
	}
	e, err := s.endpoint(c, s.DB.Ent)
	if err != nil {
		return err
	}
	// Its deliveries and their log go with it.
	if err := webhooks.DeleteEndpoint(c.UserContext(), s.DB.Ent, e.ID); err != nil {
		return err
	}
	return sendValue(c, fiber.StatusOK, map[string]any{"id": e.ID, "object": "webhook_endpoint", "deleted": true})
}

// noFields reads the body of a DELETE or an action that takes no fields
// as every such write reads its body: none, or a JSON object with no
// field in it.
func noFields(c *fiber.Ctx) error {
	raw, err := body.Read(c.Get(fiber.HeaderContentType), c.Body(), true)
	if err == nil {
		_, err = body.Parse(raw, nil)
	}
	return err
}

// rotateSecret issues a new secret; the old one keeps signing for 24 h, so
// receivers can switch without missing a delivery. Under an
// Idempotency-Key a retry replays the first rotation: a second one would
// end the first secret's overlap before anyone learned the new one.
func (s *Server) rotateSecret(c *fiber.Ctx) error {
	if err := noFields(c); err != nil {
		return err
	}
	return s.keyedWrite(c, func(ctx context.Context, tx *ent.Tx) (int, any, error) {
		e, err := s.endpoint(c, tx.Client())
		if err != nil {
			return 0, nil, err
		}
		if e, err = webhooks.RotateSecret(ctx, tx.Client(), e); err != nil {
			return 0, nil, err
		}
		return fiber.StatusOK, showEndpoint(e, true), nil
	})
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

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	l, err := api.ParseList(c.Context().QueryArgs().VisitAll, nil)
	if err != nil {
		return err
	}
	limit, offset := l.Limit, l.Offset
	e, err := s.endpoint(c, s.DB.Reader)
	if err != nil {
		return err
	}
	ds, total, err := webhooks.Deliveries(c.UserContext(), s.DB.Reader, e.ID, limit, offset)
	if err != nil {
		return err
	}
	data := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		data[i] = showDelivery(d)
	}
	return sendValue(c, fiber.StatusOK, map[string]any{"data": data, "meta": listMeta{limit, offset, total}})
}

// retryDelivery ("send again") makes a delivery due now, whatever its state.
func (s *Server) retryDelivery(c *fiber.Ctx) error {
	if err := noFields(c); err != nil {
		return err
	}
	e, err := s.endpoint(c, s.DB.Ent)
	if err != nil {
		return err
	}
	d, err := webhooks.Retry(c.UserContext(), s.DB.Ent, e.ID, c.Params("delivery_id"))
	if err != nil {
		return err
	}
	return sendValue(c, fiber.StatusOK, showDelivery(d))
}
