package schema

import (
	"github.com/ledgerbase/ledgerbase/ent/enum"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"

	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// record gives every table its prefixed id and timestamps; scoped ones also
// belong to one workspace and list newest first through one index.
type record struct {
	mixin.Schema
	prefix   string
	scoped   bool
	unlisted bool // read in an order of its own, not by created_at
}

func (r record) Fields() []ent.Field {
	p := r.prefix
	f := []ent.Field{
		field.String("id").Immutable().NotEmpty().DefaultFunc(func() string { return ids.New(p) }),
	}
	if r.scoped {
		f = append(f, field.String("workspace_id").Immutable().NotEmpty())
	}
	return append(f,
		field.Time("created_at").Immutable().Default(now),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	)
}

func (r record) Indexes() []ent.Index {
	if !r.scoped || r.unlisted {
		return nil
	}
	// Serves every list's default order and its total.
	return []ent.Index{index.Fields("workspace_id", "created_at", "id")}
}

func scoped(prefix string) record { return record{prefix: prefix, scoped: true} }

// logged is scoped without the list index, for an append-only log read in
// its own order: each index is one more B-tree page every write touches.
func logged(prefix string) record { return record{prefix: prefix, scoped: true, unlisted: true} }

// money and amounts are int64 minor units; never floats.
func cents(name string) ent.Field { return field.Int64(name).Default(0) }

func currency() ent.Field { return field.String("currency_code").Default("EUR").MaxLen(3) }

func language() ent.Field {
	return field.Enum("preferred_language").Values(enum.Languages...).Optional().Nillable()
}

// totals are the three amounts every document carries.
func totals() []ent.Field {
	return []ent.Field{cents("amount_excl_vat_cents"), cents("vat_amount_cents"), cents("amount_incl_vat_cents")}
}

// now is UTC so stored times compare and print the same on every database.
func now() time.Time { return time.Now().UTC() }
