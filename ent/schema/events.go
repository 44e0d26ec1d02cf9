package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is one committed change, written in the change's own transaction.
// seq orders a workspace's events so that a consumer paging by it never
// misses one that commits later with a smaller number: on SQLite the one
// writer counts on from MAX(seq); on PostgreSQL it is the writing
// transaction's id, shifted, and readers show only seqs below the oldest
// running event writer's (ent/database/horizon.go), with no lock any two
// writers wait for.
type Event struct{ ent.Schema }

func (Event) Mixin() []ent.Mixin { return []ent.Mixin{logged("evt")} }
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("seq").Immutable(),
		field.String("type").Immutable().Comment("resource.verb: invoice.sent"),
		field.String("object_type").Immutable().Comment("the declared resource name whose grant governs who sees it"),
		field.String("object_id").Immutable(),
		field.Text("data").Immutable().Comment("the record as GET showed it after the change, JSON"),
		field.Text("previous").Optional().Nillable().Immutable().Comment("previous_attributes on updates, JSON"),
		field.String("request_id").Default("").Immutable(),
		field.String("actor_type").Immutable(),
		field.String("actor_id").Default("").Immutable(),
	}
}
func (Event) Indexes() []ent.Index {
	// Lists page by seq. Retention and the created filters bound the id
	// instead of indexing created_at: an event's id is made from its
	// created_at (ids.At), and ids sort by their time.
	return []ent.Index{index.Fields("workspace_id", "seq").Unique()}
}
