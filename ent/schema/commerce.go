package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/ledgerbase/ledgerbase/ent/enum"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Store is an online shop of the workspace.
type Store struct{ ent.Schema }

func (Store) Mixin() []ent.Mixin { return []ent.Mixin{scoped("sto")} }
func (Store) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("free_address").Comment("the store's free host, e.g. acme.ledgerbase.shop"),
		field.String("custom_domain").Optional().Nillable(),
		field.Bool("custom_domain_verified").Default(false),
		field.Bool("custom_domain_active").Default(false),
		currency(),
		field.Bool("active").Default(true),
	}
}

// SalesOrder is an order from a client; online ones come from a store.
type SalesOrder struct{ ent.Schema }

func (SalesOrder) Mixin() []ent.Mixin { return []ent.Mixin{scoped("so")} }
func (SalesOrder) Fields() []ent.Field {
	f := append([]ent.Field{
		field.String("number").NotEmpty(),
		field.Enum("status").Values(enum.SalesOrderStatus...).Default("draft"),
		field.String("date"),
		field.Bool("online").Default(false),
		field.String("channel_id").Optional().Nillable().Comment("the store of an online order"),
		field.Enum("payment_status").Values(enum.OrderPaymentStatus...).Optional().Nillable(),
		field.Enum("shipping_status").Values(enum.ShippingStatus...).Optional().Nillable(),
		currency(),
		field.String("shipping_address").Default(""),
		field.String("notes").Default(""),
		// invoice_id is the invoice made of the order (POST /v1/sales-orders/{id}/invoice).
		field.String("invoice_id").Optional().Nillable(),
	}, party("client")...)
	return append(f, totals()...)
}
func (SalesOrder) Edges() []ent.Edge { return []ent.Edge{edge.To("lines", OrderLine.Type)} }
func (SalesOrder) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "status", "created_at", "id"),
		index.Fields("workspace_id", "client_id", "created_at", "id"),
		index.Fields("workspace_id", "channel_id", "created_at", "id"),
		index.Fields("workspace_id", "online", "created_at", "id"),
		index.Fields("workspace_id", "number"),
	}
}

// OrderLine is one line of a sales order, with how much of it has shipped.
type OrderLine struct{ ent.Schema }

func (OrderLine) Mixin() []ent.Mixin { return []ent.Mixin{scoped("sol")} }
func (OrderLine) Fields() []ent.Field {
	return append([]ent.Field{
		field.String("sales_order_id").Immutable(),
		field.Int("position").Default(0),
		field.String("item_id").Optional().Nillable(),
		field.String("variant_id").Optional().Nillable(),
		field.String("sku").Default(""),
		field.String("description").Default(""),
		field.Int64("qty_milli").NonNegative(),
		field.Int64("shipped_qty_milli").Default(0).NonNegative(),
		cents("unit_price_cents"),
		// The rate the line's VAT was computed at; null on lines written
		// before it was kept.
		field.Int64("vat_rate_bp").Optional().Nillable(),
	}, totals()...)
}

// Order lines are read by their order (embedded in every order read).
func (OrderLine) Indexes() []ent.Index {
	return []ent.Index{index.Fields("sales_order_id", "position")}
}
func (OrderLine) Edges() []ent.Edge {
	return []ent.Edge{edge.From("sales_order", SalesOrder.Type).Ref("lines").Field("sales_order_id").Unique().Required().Immutable()}
}

// Shipment carries some or all of an order's lines.
type Shipment struct{ ent.Schema }

func (Shipment) Mixin() []ent.Mixin { return []ent.Mixin{scoped("shp")} }
func (Shipment) Fields() []ent.Field {
	return []ent.Field{
		field.String("sales_order_id").Immutable(),
		field.String("number").Default(""),
		field.Enum("status").Values(enum.ShipmentStatus...).Default("shipped"),
		field.JSON("lines", []shape.ShipmentLine{}).Default([]shape.ShipmentLine{}),
		field.JSON("packages", []shape.Package{}).Default([]shape.Package{}),
		field.String("location_id").Optional().Nillable(),
		field.String("carrier").Default(""),
		field.String("service").Default(""),
		field.String("tracking_no").Default(""),
		field.String("shipping_method_id").Optional().Nillable(),
		cents("cost_cents"),
		field.String("notes").Default(""),
		field.Time("shipped_at"),
		field.Time("delivered_at").Optional().Nillable(),
	}
}
func (Shipment) Edges() []ent.Edge { return []ent.Edge{edge.To("events", ShipmentEvent.Type)} }
func (Shipment) Indexes() []ent.Index {
	// workspace_id, number: a new shipment's number is checked free without
	// reading every shipment of the workspace (~1 s at 200,000 orders).
	return []ent.Index{
		index.Fields("workspace_id", "number"),
		index.Fields("workspace_id", "status", "created_at", "id"),
		index.Fields("workspace_id", "sales_order_id", "created_at", "id"),
	}
}

// ShipmentEvent is one entry of a shipment's tracking timeline.
type ShipmentEvent struct{ ent.Schema }

func (ShipmentEvent) Mixin() []ent.Mixin { return []ent.Mixin{scoped("sev")} }
func (ShipmentEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("shipment_id").Immutable(),
		field.String("carrier_event_id").Optional().Nillable(),
		field.Time("occurred_at"),
		field.String("status").Default(""),
		field.String("description").Default(""),
		field.String("location").Default(""),
	}
}
func (ShipmentEvent) Edges() []ent.Edge {
	return []ent.Edge{edge.From("shipment", Shipment.Type).Ref("events").Field("shipment_id").Unique().Required().Immutable()}
}
func (ShipmentEvent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("shipment_id", "carrier_event_id").Unique(),
		index.Fields("shipment_id", "occurred_at"),
	}
}

// ReturnRequest is the API's "return": a customer's return request (RMA) on
// an online order ("return" is a Go keyword, so only the Go name differs).
type ReturnRequest struct{ ent.Schema }

func (ReturnRequest) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "returns"}}
}
func (ReturnRequest) Mixin() []ent.Mixin { return []ent.Mixin{scoped("ret")} }
func (ReturnRequest) Fields() []ent.Field {
	return []ent.Field{
		field.String("sales_order_id"),
		field.String("number").NotEmpty(),
		field.Enum("status").Values(enum.ReturnStatus...).Default("requested"),
		field.String("reason").Default(""),
		field.JSON("lines", []shape.ReturnLine{}).Default([]shape.ReturnLine{}),
		currency(),
		cents("refund_cents"),
		field.Enum("refund_outcome").Values("pending", "refunded", "store_credit", "rejected").Default("pending"),
		field.Time("refunded_at").Optional().Nillable(),
	}
}
func (ReturnRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "status", "created_at", "id"),
		index.Fields("workspace_id", "sales_order_id", "created_at", "id"),
	}
}

// Promotion is a discount, automatic or unlocked by codes.
type Promotion struct{ ent.Schema }

func (Promotion) Mixin() []ent.Mixin { return []ent.Mixin{scoped("pro")} }
func (Promotion) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.Enum("kind").Values("automatic", "code").Default("code"),
		field.Enum("status").Values("active", "scheduled", "expired", "archived").Default("active"),
		field.Enum("discount_type").Values("percentage", "fixed_amount", "free_shipping").Default("percentage"),
		field.Int64("discount_value").Default(0).Comment("basis points for percentage, minor units for fixed_amount"),
		currency(),
		field.Time("starts_at").Optional().Nillable(),
		field.Time("ends_at").Optional().Nillable(),
		field.Int64("times_used").Default(0),
		cents("discount_total_cents"),
	}
}
func (Promotion) Edges() []ent.Edge { return []ent.Edge{edge.To("codes", PromotionCode.Type)} }
func (Promotion) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "status", "created_at", "id")}
}

// PromotionCode is a coupon code of a code promotion; unique per workspace ignoring case.
type PromotionCode struct{ ent.Schema }

func (PromotionCode) Mixin() []ent.Mixin { return []ent.Mixin{scoped("pcd")} }
func (PromotionCode) Fields() []ent.Field {
	return []ent.Field{
		field.String("promotion_id").Immutable(),
		field.String("code").NotEmpty(),
		field.String("code_key").NotEmpty().Comment("lower-cased code, for uniqueness"),
		field.Int64("max_uses").Optional().Nillable(),
		field.Int64("max_uses_per_customer").Optional().Nillable(),
		field.Time("expires_at").Optional().Nillable(),
		field.Int64("times_used").Default(0),
	}
}
func (PromotionCode) Edges() []ent.Edge {
	return []ent.Edge{edge.From("promotion", Promotion.Type).Ref("codes").Field("promotion_id").Unique().Required().Immutable()}
}
func (PromotionCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "code_key").Unique(), index.Fields("promotion_id", "created_at")}
}

// GiftCard is a prepaid balance; the code is kept only as a hash and its last four characters.
type GiftCard struct{ ent.Schema }

func (GiftCard) Mixin() []ent.Mixin { return []ent.Mixin{scoped("gc")} }
func (GiftCard) Fields() []ent.Field {
	return []ent.Field{
		field.String("code_hash").Unique().Sensitive(),
		field.String("code_last4"),
		field.Enum("status").Values("active", "disabled", "expired", "depleted").Default("active"),
		currency(),
		cents("initial_balance_cents"),
		cents("balance_cents"),
		field.Time("expires_at").Optional().Nillable(),
		field.String("client_id").Optional().Nillable(),
		field.JSON("ledger", []shape.LedgerEntry{}).Default([]shape.LedgerEntry{}),
	}
}

// Active cards past their expiry are found by this index before each read
// (api/clock's Exact), never by a scan of the workspace's cards.
func (GiftCard) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "status", "expires_at")}
}

// Payment is an online payment transaction of a store.
type Payment struct{ ent.Schema }

func (Payment) Mixin() []ent.Mixin { return []ent.Mixin{scoped("pay")} }
func (Payment) Fields() []ent.Field {
	return []ent.Field{
		field.String("sales_order_id"),
		field.String("store_id").Optional().Nillable(),
		field.Enum("kind").Values("authorize", "capture", "refund", "void"),
		field.Enum("status").Values("pending", "succeeded", "failed").Default("succeeded"),
		currency(),
		cents("amount_cents"),
		cents("fee_cents"),
		field.String("provider").Default(""),
		field.String("provider_ref").Default(""),
		field.JSON("receipt", &shape.Receipt{}).Optional(),
	}
}
func (Payment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "sales_order_id", "created_at", "id")}
}

// Item is a thing the workspace sells or buys; a product is an item with commerce data.
type Item struct{ ent.Schema }

func (Item) Mixin() []ent.Mixin { return []ent.Mixin{scoped("itm")} }
func (Item) Fields() []ent.Field {
	return []ent.Field{
		field.String("number").NotEmpty().Comment("the SKU"),
		field.String("name").NotEmpty(),
		field.String("description").Default(""),
		currency(),
		cents("unit_price_cents"),
		field.Int64("vat_rate_bp").Optional().Nillable().Comment("default VAT rate of the item's lines, basis points: 2000 is 20 %"),
		field.Bool("active").Default(true),
		field.JSON("translations", map[string]any{}).Default(map[string]any{}),
		field.Bool("is_product").Default(false),
		field.String("product_type").Default(""),
		field.String("brand").Default(""),
		field.String("brand_id").Optional().Nillable(),
		field.JSON("media", []shape.Media{}).Default([]shape.Media{}),
		field.JSON("attributes", []shape.Attribute{}).Default([]shape.Attribute{}),
		field.JSON("variant_axes", []shape.VariantAxis{}).Default([]shape.VariantAxis{}),
		field.JSON("links", []shape.Link{}).Default([]shape.Link{}),
		field.JSON("listings", []shape.Listing{}).Default([]shape.Listing{}),
	}
}
func (Item) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("variants", Variant.Type),
		edge.To("categories", Category.Type),
	}
}
func (Item) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "number").Unique(),
		index.Fields("workspace_id", "is_product", "created_at", "id"),
	}
}

// Variant is one combination of a variable product's axes, with its own SKU.
type Variant struct{ ent.Schema }

func (Variant) Mixin() []ent.Mixin { return []ent.Mixin{scoped("var")} }
func (Variant) Fields() []ent.Field {
	return []ent.Field{
		field.String("item_id").Immutable(),
		field.String("sku").NotEmpty(),
		field.JSON("options", map[string]string{}),
		field.String("options_key").Comment("canonical axis=value list, unique per product"),
		field.Int64("unit_price_cents").Optional().Nillable(),
		field.Bool("active").Default(true),
	}
}
func (Variant) Edges() []ent.Edge {
	return []ent.Edge{edge.From("item", Item.Type).Ref("variants").Field("item_id").Unique().Required().Immutable()}
}
func (Variant) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "sku").Unique(), index.Fields("item_id", "options_key").Unique()}
}

// Category is a node of the workspace's product category tree.
type Category struct{ ent.Schema }

func (Category) Mixin() []ent.Mixin { return []ent.Mixin{scoped("cat")} }
func (Category) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("parent_id").Optional().Nillable(),
		field.String("slug").NotEmpty(),
		field.Int("sort_order").Default(0),
		field.Bool("active").Default(true),
		field.JSON("translations", map[string]any{}).Default(map[string]any{}),
	}
}
func (Category) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("children", Category.Type).From("parent").Field("parent_id").Unique(),
		edge.From("items", Item.Type).Ref("categories"),
	}
}
func (Category) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "slug").Unique()}
}
