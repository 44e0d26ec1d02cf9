package webhooks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// Enqueue stores, in the transaction that appends events, one delivery per
// event and endpoint of eps that wants its type, so the job commits exactly
// when its event does. It reports how many it stored.
func Enqueue(ctx context.Context, tx *ent.Tx, ws string, eps []ent.WebhookEndpoint, events []*ent.Event) (int, error) {
	if len(eps) == 0 {
		return 0, nil
	}
	now := time.Now().UTC()
	var jobs []*ent.WebhookDeliveryCreate
	for _, ep := range eps {
		types := DecodeTypes(ep.EnabledEvents)
		for _, e := range events {
			if Wants(types, e.Type) {
				jobs = append(jobs, tx.WebhookDelivery.Create().SetWorkspaceID(ws).SetEndpointID(ep.ID).
					SetEventID(e.ID).SetEventType(e.Type).SetEventSeq(e.Seq).SetNextAttemptAt(now))
			}
		}
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	return len(jobs), tx.WebhookDelivery.CreateBulk(jobs...).Exec(ctx)
}

// Endpoints are the workspace's endpoints that take deliveries, as tx sees
// them now, read by a fixed statement the driver's cache answers. A write
// reads them when it appends its events, so an event goes to the endpoints
// enabled when its change was made.
func Endpoints(ctx context.Context, tx *ent.Tx, ws string) ([]ent.WebhookEndpoint, error) {
	rows, err := tx.QueryContext(ctx, sqlstore.EnabledEndpoints, ws)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var eps []ent.WebhookEndpoint
	for rows.Next() {
		var ep ent.WebhookEndpoint
		if err := rows.Scan(&ep.ID, &ep.EnabledEvents); err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	return eps, rows.Err()
}

// Wants reports whether an endpoint subscribed to types gets an event of
// typ ("*" every event, "invoice.*" every invoice event).
func Wants(types []string, typ string) bool {
	for _, t := range types {
		if t == "*" || t == typ || strings.HasSuffix(t, ".*") && strings.HasPrefix(typ, strings.TrimSuffix(t, "*")) {
			return true
		}
	}
	return false
}

// DecodeTypes reads a stored enabled_events list.
func DecodeTypes(s string) []string {
	var out []string
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

// wake tells this process's workers that deliveries were just committed,
// so the first attempt does not wait for the next poll.
var wake = make(chan struct{}, 1)

// Wake is called after a transaction that stored deliveries commits.
func Wake() {
	select {
	case wake <- struct{}{}:
	default:
	}
}
