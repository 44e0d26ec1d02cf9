package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Workspace is the tenant: every record belongs to exactly one.
type Workspace struct{ ent.Schema }

func (Workspace) Mixin() []ent.Mixin { return []ent.Mixin{record{prefix: "ws"}} }
func (Workspace) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.Enum("plan").Values("starter", "growth", "business").Default("starter"),
		field.Bool("commerce_mode").Default(false),
		field.Bool("commerce_module").Default(false),
	}
}

// APIKey authenticates /v1 calls. Only the SHA-256 of the secret is kept.
type APIKey struct{ ent.Schema }

func (APIKey) Mixin() []ent.Mixin { return []ent.Mixin{scoped("key")} }
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").Default(""),
		field.String("role").Default("admin").Comment("admin, viewer, or a custom role's name"),
		field.String("secret_hash").Unique().Sensitive(),
		field.String("prefix").Comment("first characters of the secret, for display"),
		field.Time("expires_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
		field.Time("last_used_at").Optional().Nillable(),
		field.Int("rate_limit").Optional().Nillable().Comment("requests per minute; overrides the plan; 0 = unlimited"),
	}
}

// Role is a custom role: a matrix of resource x none/read/write.
type Role struct{ ent.Schema }

func (Role) Mixin() []ent.Mixin { return []ent.Mixin{scoped("rol")} }
func (Role) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.JSON("grants", shape.Grants{}),
	}
}
func (Role) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "name").Unique()}
}

// AdminUser signs in to the admin web UI.
type AdminUser struct{ ent.Schema }

func (AdminUser) Mixin() []ent.Mixin { return []ent.Mixin{record{prefix: "adm"}} }
func (AdminUser) Fields() []ent.Field {
	return []ent.Field{
		field.String("email").Unique().NotEmpty(),
		field.String("password_hash").Sensitive(),
	}
}

// SignInFailure counts the failed admin sign-ins of one account in its
// current window, by the SHA-256 of the email tried (whether or not an
// account has it, so the limit does not tell which emails exist). Kept in
// the database so every process sharing it enforces one limit per account.
type SignInFailure struct{ ent.Schema }

func (SignInFailure) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sign_in_failures"}}
}
func (SignInFailure) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Comment("hex SHA-256 of the normalized email"),
		field.Int("failures").Comment("attempts counted in the window, refused ones included"),
		field.Float("since").Comment("unix seconds of the window's first attempt"),
	}
}
func (SignInFailure) Indexes() []ent.Index {
	return []ent.Index{index.Fields("since")} // sweeping ended windows
}

// AdminSession is a signed-in browser; the cookie holds a secret whose hash is the id.
type AdminSession struct{ ent.Schema }

func (AdminSession) Mixin() []ent.Mixin { return []ent.Mixin{record{prefix: "ses"}} }
func (AdminSession) Fields() []ent.Field {
	return []ent.Field{
		field.String("admin_id"),
		field.String("token_hash").Unique().Sensitive(),
		field.String("csrf_token").Sensitive(),
		field.Time("expires_at"),
	}
}

// IdempotencyKey remembers the first response to a POST for 24 hours.
type IdempotencyKey struct{ ent.Schema }

func (IdempotencyKey) Mixin() []ent.Mixin { return []ent.Mixin{scoped("idk")} }
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("key"),
		field.String("request_hash"),
		field.Int("status").Default(0).Comment("0 while the first request is in flight"),
		field.Bytes("body").Optional(),
	}
}
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "key").Unique(), index.Fields("created_at")}
}

// KeyUsage counts a key's API traffic per hour for the dashboard.
type KeyUsage struct{ ent.Schema }

func (KeyUsage) Mixin() []ent.Mixin { return []ent.Mixin{scoped("kus")} }
func (KeyUsage) Fields() []ent.Field {
	return []ent.Field{
		field.String("key_id"),
		field.Time("hour"),
		field.Int64("requests").Default(0),
		field.Int64("errors").Default(0),
		field.Int64("rate_limited").Default(0),
	}
}
func (KeyUsage) Indexes() []ent.Index {
	return []ent.Index{index.Fields("key_id", "hour").Unique(), index.Fields("workspace_id", "hour")}
}

// Sequence allocates document numbers (ITM-000123) per workspace.
type Sequence struct{ ent.Schema }

func (Sequence) Mixin() []ent.Mixin { return []ent.Mixin{scoped("seq")} }
func (Sequence) Fields() []ent.Field {
	return []ent.Field{field.String("name"), field.Int64("value").Default(0)}
}
func (Sequence) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "name").Unique()}
}

// RateBucket is a key's token bucket when rate limits are shared through the
// database (several `serve` processes enforcing one limit). Times are unix
// seconds as floats so the refill is plain arithmetic on every dialect.
type RateBucket struct{ ent.Schema }

func (RateBucket) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "rate_buckets"}}
}
func (RateBucket) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Comment("the API key's id"),
		field.Float("tokens"),
		field.Float("at").Comment("unix seconds of the last take"),
		field.Float("cap").Comment("bucket size: the per-minute limit"),
		field.Float("rate").Comment("tokens per second"),
		field.Bool("allowed").Comment("whether the last take got a token"),
	}
}
