package demo

import (
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// tables are the destinations of the generated rows. Each row starts with
// id, workspace_id, created_at, updated_at (see base).
type tables struct {
	all []*table

	clients, addresses                        *table
	invoices, invoicePayments, quotes, credit *table
	stores, orders, orderLines                *table
	shipments, events, returns, payments      *table
	promotions, codes, giftCards              *table
	vendors, bills, billPayments              *table
	categories, items, variants, itemCats     *table
}

func cols(extra ...string) []string {
	return append([]string{"id", "workspace_id", "created_at", "updated_at"}, extra...)
}

// base is the leading values of every row.
func (g *gen) base(id string, created, updated time.Time) []any {
	return []any{id, g.ws, g.tm(created), g.tm(updated)}
}

// tm is a time as the driver would store it, formatted here on SQLite to
// spare the single writer the work.
func (g *gen) tm(t time.Time) any {
	if g.sqlite {
		return t.Format(sqlite3.SQLiteTimestampFormats[0])
	}
	return t
}

// tableNames are the tables a run fills.
func tableNames() []string {
	var out []string
	// Tables of one row each: only their names are read.
	for _, t := range newTables(&sink{maxRows: 1}).all {
		out = append(out, t.name)
	}
	return out
}

func newTables(s *sink) *tables {
	t := &tables{}
	add := func(x *table) *table { t.all = append(t.all, x); return x }
	doc := []string{"number", "date", "due_date", "currency_code", "lines", "notes",
		"amount_excl_vat_cents", "vat_amount_cents", "amount_incl_vat_cents"}
	contact := []string{"name", "email", "phones", "contact", "address", "currency_code",
		"payment_terms_code", "notes", "active", "preferred_language"}

	t.stores = add(s.table("stores", cols("name", "free_address", "custom_domain", "custom_domain_verified",
		"custom_domain_active", "currency_code", "active")))
	t.categories = add(s.table("categories", cols("name", "slug", "sort_order", "active", "translations", "parent_id")))
	t.items = add(s.table("items", cols("number", "name", "description", "currency_code", "unit_price_cents", "active",
		"translations", "is_product", "product_type", "brand", "brand_id", "media", "attributes", "variant_axes", "links", "listings")))
	t.variants = add(s.table("variants", cols("sku", "options", "options_key", "unit_price_cents", "active", "item_id"), t.items))
	t.itemCats = add(s.table("item_categories", []string{"item_id", "category_id"}, t.items, t.categories))
	t.clients = add(s.table("clients", cols(append(contact, "ext_system", "ext_connection_id", "ext_external_id", "ext_key")...)))
	t.addresses = add(s.table("addresses", cols(append([]string{"client_id", "kind", "default_billing", "default_shipping"}, contact...)...), t.clients))
	t.vendors = add(s.table("vendors", cols("name", "email", "phone", "currency_code", "notes", "preferred_language")))
	t.invoices = add(s.table("invoices", cols(append(doc, "client_id", "client_name", "status", "paid_cents", "remaining_cents", "credited_cents", "quote_id")...)))
	t.invoicePayments = add(s.table("invoice_payments", cols("invoice_id", "external_id", "number", "status", "date", "due_date",
		"currency_code", "remaining_cents", "notes", "client_id", "client_name",
		"amount_excl_vat_cents", "vat_amount_cents", "amount_incl_vat_cents"), t.invoices))
	t.quotes = add(s.table("quotes", cols(append(doc, "client_id", "client_name", "status", "invoice_id")...)))
	t.credit = add(s.table("credit_notes", cols(append(doc, "client_id", "client_name", "status", "invoice_id")...)))
	t.orders = add(s.table("sales_orders", cols("number", "status", "date", "online", "channel_id", "payment_status",
		"shipping_status", "currency_code", "shipping_address", "notes", "client_id", "client_name",
		"amount_excl_vat_cents", "vat_amount_cents", "amount_incl_vat_cents")))
	t.orderLines = add(s.table("order_lines", cols("sales_order_id", "position", "item_id", "variant_id", "sku", "description",
		"qty_milli", "shipped_qty_milli", "unit_price_cents", "amount_excl_vat_cents", "vat_amount_cents", "amount_incl_vat_cents"), t.orders))
	t.shipments = add(s.table("shipments", cols("sales_order_id", "number", "status", "lines", "packages", "location_id",
		"carrier", "service", "tracking_no", "shipping_method_id", "cost_cents", "notes", "shipped_at", "delivered_at")))
	t.events = add(s.table("shipment_events", cols("shipment_id", "carrier_event_id", "occurred_at", "status", "description", "location"), t.shipments))
	t.returns = add(s.table("returns", cols("sales_order_id", "number", "status", "reason", "lines", "currency_code",
		"refund_cents", "refund_outcome", "refunded_at")))
	t.payments = add(s.table("payments", cols("sales_order_id", "store_id", "kind", "status", "currency_code",
		"amount_cents", "fee_cents", "provider", "provider_ref", "receipt")))
	t.promotions = add(s.table("promotions", cols("name", "kind", "status", "discount_type", "discount_value", "currency_code",
		"starts_at", "ends_at", "times_used", "discount_total_cents")))
	t.codes = add(s.table("promotion_codes", cols("promotion_id", "code", "code_key", "max_uses", "max_uses_per_customer",
		"expires_at", "times_used"), t.promotions))
	t.giftCards = add(s.table("gift_cards", cols("code_hash", "code_last4", "status", "currency_code", "initial_balance_cents",
		"balance_cents", "expires_at", "client_id", "ledger")))
	t.bills = add(s.table("bills", cols(append(doc, "vendor_id", "vendor_name", "status", "paid_cents", "remaining_cents")...)))
	t.billPayments = add(s.table("bill_payments", cols("bill_id", "external_id", "number", "status", "date", "due_date",
		"currency_code", "amount_incl_vat_cents", "remaining_cents", "vendor_id", "vendor_name"), t.bills))
	return t
}
