package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookEndpoint is a URL a workspace's events are pushed to, signed with
// its secret (Standard Webhooks). The secret is kept as issued so the
// server can sign; a rotated-out secret keeps signing until its expiry.
type WebhookEndpoint struct{ ent.Schema }

func (WebhookEndpoint) Mixin() []ent.Mixin { return []ent.Mixin{scoped("whe")} }
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("url").MaxLen(2048),
		field.Text("enabled_events").Comment("JSON array of event types, or [\"*\"]"),
		field.String("description").Default("").MaxLen(1000),
		field.Bool("disabled").Default(false),
		field.String("disabled_reason").Default("").Comment("why delivery stopped: set when the endpoint failed for days"),
		field.String("secret").Sensitive().Comment("whsec_<base64>, shown once"),
		field.String("previous_secret").Default("").Sensitive(),
		field.Time("previous_secret_expires_at").Optional().Nillable(),
		field.Time("failing_since").Optional().Nillable().Comment("first failure since the last success"),
	}
}

// WebhookDelivery is one event owed to one endpoint: the durable job,
// stored in the event's own transaction. next_attempt_at is both the
// schedule and the lease: a worker that claims a delivery moves it past
// the send's deadline, so a crashed worker's claim runs out by itself.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{scoped("whd")} }
func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("endpoint_id"),
		field.String("event_id"),
		field.String("event_type"),
		field.Int64("event_seq").Comment("sends an endpoint's events in commit order"),
		field.Enum("status").Values("pending", "succeeded", "failed").Default("pending"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at"),
	}
}
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "next_attempt_at"),
		index.Fields("endpoint_id", "created_at"),
		index.Fields("created_at"), // pruned with the events' retention
	}
}

// WebhookAttempt is one try of a delivery, for the endpoint's log.
type WebhookAttempt struct{ ent.Schema }

func (WebhookAttempt) Mixin() []ent.Mixin { return []ent.Mixin{scoped("wha")} }
func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("delivery_id"),
		field.Int("status_code").Default(0).Comment("0 when no answer came"),
		field.Int64("latency_ms"),
		field.String("error").Default(""),
		field.Text("response").Default("").Comment("the first KiB of the answer, never rendered"),
	}
}
func (WebhookAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("delivery_id", "created_at")}
}
