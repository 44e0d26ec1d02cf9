package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// EmailMessage is one document emailed to its client: the outbox row,
// written in the transaction of the action that sends the document, and
// delivered by the worker that delivers webhooks. next_attempt_at is both
// the schedule and the lease (as a webhook delivery's): a worker that
// claims a message moves it past the send's deadline; NULL once no attempt
// is owed (sent, or failed for good). message_id is made at enqueue, so
// every attempt carries the same Message-ID.
type EmailMessage struct{ ent.Schema }

func (EmailMessage) Mixin() []ent.Mixin { return []ent.Mixin{scoped("eml")} }
func (EmailMessage) Fields() []ent.Field {
	return []ent.Field{
		field.String("resource").Immutable().Comment("the document's /v1 resource: invoices, quotes, credit-notes"),
		field.String("record_id").Immutable(),
		field.String("number").Default("").Immutable().Comment("the document's number when it was sent"),
		field.String("lang").Immutable().Comment("the language of the PDF, subject and body"),
		field.Text("to").Immutable().Comment("JSON array of addresses"),
		field.Text("cc").Default("[]").Immutable().Comment("JSON array of addresses"),
		field.Text("message").Default("").Immutable().Comment("the sender's words, put before the catalogue's body"),
		field.String("message_id").Immutable().Unique().Comment("the Message-ID header, without angle brackets"),
		field.Enum("status").Values("pending", "sent", "failed", "not_configured").Default("pending"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.String("last_error").Default(""),
		field.Time("sent_at").Optional().Nillable(),
	}
}
func (EmailMessage) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("next_attempt_at"),
		index.Fields("workspace_id", "record_id", "created_at"),
	}
}
