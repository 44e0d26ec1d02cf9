package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/webhookattempt"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
)

// The rules of webhook endpoints, in one place for both doors: the
// /v1/webhook-endpoints handler turns JSON into an EndpointChange, the
// admin UI a form; both then check and save it here.

// EndpointChange is a create or an update of an endpoint: a nil field (or
// a nil Events) leaves the stored value as it is.
type EndpointChange struct {
	URL, Description *string
	Events           []string
	Disabled         *bool
}

// MaxDescription bounds an endpoint's description.
const MaxDescription = 1000

// CheckEndpoint checks a change: the URL (and, unless private networks are
// allowed, every address its host resolves to), the description, and the
// enabled events. A create needs url and enabled_events. Errors are 400s.
func (s Settings) CheckEndpoint(ctx context.Context, ch *EndpointChange, create bool) error {
	if ch.URL != nil {
		if err := s.CheckURL(ctx, *ch.URL); err != nil {
			return err
		}
	} else if create {
		return apierr.Invalid("url", "url is required")
	}
	if ch.Description != nil && len(*ch.Description) > MaxDescription {
		return apierr.Invalid("description", "description is at most %d characters", MaxDescription)
	}
	if ch.Events == nil {
		if create {
			return apierr.Invalid("enabled_events", "enabled_events is required: event types, or [\"*\"]")
		}
		return nil
	}
	if len(ch.Events) == 0 {
		return apierr.Invalid("enabled_events", "enabled_events must be a non-empty array of event types, or [\"*\"]")
	}
	known := resource.EventTypes()
	var unique []string
	for _, t := range ch.Events {
		if t != "*" && !slices.ContainsFunc(known, func(typ string) bool { return Wants([]string{t}, typ) }) {
			return apierr.Invalid("enabled_events", "unknown event type %q; the OpenAPI document lists them (\"invoice.*\" and \"*\" match several)", t)
		}
		if !slices.Contains(unique, t) {
			unique = append(unique, t)
		}
	}
	ch.Events = unique
	return nil
}

func encodeTypes(t []string) string { b, _ := json.Marshal(t); return string(b) }

// CreateEndpoint stores a checked change as a new endpoint of workspace
// ws, with a new secret (shown once: the returned endpoint carries it).
func CreateEndpoint(ctx context.Context, db *ent.Client, ws string, ch EndpointChange) (*ent.WebhookEndpoint, error) {
	cr := db.WebhookEndpoint.Create().SetWorkspaceID(ws).SetURL(*ch.URL).
		SetEnabledEvents(encodeTypes(ch.Events)).SetSecret(NewSecret())
	if ch.Description != nil {
		cr.SetDescription(*ch.Description)
	}
	if ch.Disabled != nil {
		cr.SetDisabled(*ch.Disabled)
	}
	return cr.Save(ctx)
}

// FindEndpoint is workspace ws's endpoint id, else 404.
func FindEndpoint(ctx context.Context, db *ent.Client, ws, id string) (*ent.WebhookEndpoint, error) {
	e, err := db.WebhookEndpoint.Query().Where(webhookendpoint.ID(id), webhookendpoint.WorkspaceID(ws)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("webhook endpoint")
	}
	return e, err
}

// UpdateEndpoint applies a checked change. Enabling an endpoint again
// clears why it was disabled and starts its failure streak over.
func UpdateEndpoint(ctx context.Context, e *ent.WebhookEndpoint, db *ent.Client, ch EndpointChange) (*ent.WebhookEndpoint, error) {
	up := db.WebhookEndpoint.UpdateOne(e)
	if ch.URL != nil {
		up.SetURL(*ch.URL)
	}
	if ch.Events != nil {
		up.SetEnabledEvents(encodeTypes(ch.Events))
	}
	if ch.Description != nil {
		up.SetDescription(*ch.Description)
	}
	if ch.Disabled != nil {
		up.SetDisabled(*ch.Disabled)
		if !*ch.Disabled {
			up.SetDisabledReason("").ClearFailingSince()
		}
	}
	return up.Save(ctx)
}

// DeleteEndpoint deletes an endpoint with its deliveries and their log, in
// the caller's transaction.
func DeleteEndpoint(ctx context.Context, tx *ent.Tx, id string) error {
	ids, err := tx.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(id)).IDs(ctx)
	if err == nil {
		_, err = tx.WebhookAttempt.Delete().Where(webhookattempt.DeliveryIDIn(ids...)).Exec(ctx)
	}
	if err == nil {
		_, err = tx.WebhookDelivery.Delete().Where(webhookdelivery.EndpointID(id)).Exec(ctx)
	}
	if err == nil {
		err = tx.WebhookEndpoint.DeleteOneID(id).Exec(ctx)
	}
	return err
}

// SecretOverlap is how long a rotated-out secret keeps signing, so
// receivers can switch without missing a delivery.
const SecretOverlap = 24 * time.Hour

// RotateSecret gives an endpoint a new secret (returned on the endpoint,
// shown once); the old one keeps signing for SecretOverlap.
func RotateSecret(ctx context.Context, db *ent.Client, e *ent.WebhookEndpoint) (*ent.WebhookEndpoint, error) {
	return db.WebhookEndpoint.UpdateOne(e).SetSecret(NewSecret()).SetPreviousSecret(e.Secret).
		SetPreviousSecretExpiresAt(time.Now().UTC().Add(SecretOverlap)).Save(ctx)
}

// Delivery is a delivery with its attempts, newest first.
type Delivery struct {
	*ent.WebhookDelivery
	Attempts []*ent.WebhookAttempt
}

// Deliveries are a page of an endpoint's deliveries, newest first, and
// how many it has in all.
func Deliveries(ctx context.Context, db *ent.Client, endpointID string, limit, offset int) ([]Delivery, int, error) {
	q := db.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpointID))
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	ds, err := q.Order(ent.Desc(webhookdelivery.FieldCreatedAt), ent.Desc(webhookdelivery.FieldEventSeq), ent.Desc(webhookdelivery.FieldID)).
		Limit(limit).Offset(offset).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out, err := withAttempts(ctx, db, ds...)
	return out, total, err
}

func withAttempts(ctx context.Context, db *ent.Client, ds ...*ent.WebhookDelivery) ([]Delivery, error) {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	as, err := db.WebhookAttempt.Query().Where(webhookattempt.DeliveryIDIn(ids...)).
		Order(ent.Desc(webhookattempt.FieldCreatedAt), ent.Desc(webhookattempt.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string][]*ent.WebhookAttempt{}
	for _, a := range as {
		by[a.DeliveryID] = append(by[a.DeliveryID], a)
	}
	out := make([]Delivery, len(ds))
	for i, d := range ds {
		out[i] = Delivery{d, by[d.ID]}
	}
	return out, nil
}

// Retry ("send again") makes an endpoint's delivery due now, whatever its
// state, and wakes this process's worker; unknown is 404.
func Retry(ctx context.Context, db *ent.Client, endpointID, deliveryID string) (Delivery, error) {
	d, err := db.WebhookDelivery.Query().Where(webhookdelivery.ID(deliveryID), webhookdelivery.EndpointID(endpointID)).Only(ctx)
	if ent.IsNotFound(err) {
		return Delivery{}, apierr.NotFound("webhook delivery")
	}
	if err != nil {
		return Delivery{}, err
	}
	if d, err = d.Update().SetStatus(webhookdelivery.StatusPending).SetNextAttemptAt(time.Now().UTC()).Save(ctx); err != nil {
		return Delivery{}, err
	}
	Wake()
	out, err := withAttempts(ctx, db, d)
	if err != nil {
		return Delivery{}, err
	}
	return out[0], nil
}
