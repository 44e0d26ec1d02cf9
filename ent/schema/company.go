package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Company is a workspace's company profile, the seller on every document:
// one row per workspace, made by its first save. An empty string or a nil
// number is a field left unset.
type Company struct{ ent.Schema }

func (Company) Mixin() []ent.Mixin {
	return []ent.Mixin{record{prefix: "cmp", scoped: true, unlisted: true}}
}
func (Company) Fields() []ent.Field {
	return []ent.Field{
		field.String("legal_name").Default(""),
		field.Text("address").Default("").Comment("lines separated by \\n"),
		field.String("country").Default("").MaxLen(2).Comment("ISO 3166-1 alpha-2"),
		field.String("vat_number").Default(""),
		field.String("registration_number").Default(""),
		field.String("email").Default(""),
		field.String("phone").Default(""),
		field.String("website").Default(""),
		field.Bytes("logo").Optional().Comment("PNG, JPEG or SVG, at most 1 MiB; nil: none"),
		field.String("logo_media_type").Default("").Comment("image/png, image/jpeg or image/svg+xml"),
		field.String("default_currency").Default("").MaxLen(3).Comment("ISO 4217"),
		field.Int("default_vat_rate_bp").Optional().Nillable().Comment("basis points: 2000 is 20 %"),
		field.Int("default_payment_terms_days").Optional().Nillable(),
		field.String("default_language").Default("").Comment("en, fr, ar or bilingual"),
		field.Text("payment_instructions").Default(""),
		field.Text("footer").Default(""),
	}
}
func (Company) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id").Unique()}
}
