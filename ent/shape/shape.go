// Package shape holds the Go types of JSON columns: parts of a record that
// are always read and written with their parent (document lines, packages,
// media, ledgers) and so need no table of their own.
package shape

import (
	"net/url"
)

// DocLine is a line of an invoice, quote, credit note or bill.
type DocLine struct {
	ItemID             *string `json:"item_id"`
	Description        string  `json:"description"`
	QtyMilli           int64   `json:"qty_milli"`
	UnitPriceCents     int64   `json:"unit_price_cents"`
	VATRateBasisPoints int64   `json:"vat_rate_bp"`
	DiscountBP         int64   `json:"discount_bp"`
	AmountExclVATCents int64   `json:"amount_excl_vat_cents"`
	VATAmountCents     int64   `json:"vat_amount_cents"`
	AmountInclVATCents int64   `json:"amount_incl_vat_cents"`
}

// ShipmentLine is how much of one order line a shipment carries.
type ShipmentLine struct {
	OrderLineID string `json:"order_line_id"`
	QtyMilli    int64  `json:"qty_milli"`
}

// Package is one parcel of a shipment.
type Package struct {
	TrackingNo string `json:"tracking_no"`
	WeightG    int64  `json:"weight_g"`
}

// ReturnLine is one returned order line.
type ReturnLine struct {
	OrderLineID string `json:"order_line_id"`
	QtyMilli    int64  `json:"qty_milli"`
	Reason      string `json:"reason"`
}

// LedgerEntry is one movement of a gift card's balance. Entries written by
// the admin UI's operations also carry their id (gcl_...) and a reason.
type LedgerEntry struct {
	ID                string  `json:"id,omitempty"`
	At                string  `json:"at"`
	Kind              string  `json:"kind"` // issue, redeem, refund, adjust
	AmountCents       int64   `json:"amount_cents"`
	BalanceAfterCents int64   `json:"balance_after_cents"`
	SalesOrderID      *string `json:"sales_order_id"`
	Reason            string  `json:"reason,omitempty"`
}

// Receipt is the posted accounting receipt of an online payment.
type Receipt struct {
	Number   string `json:"number"`
	PostedAt string `json:"posted_at"`
}

// Media is an image or file of a product.
type Media struct {
	URL      string `json:"url"`
	Alt      string `json:"alt,omitempty"`
	Position int    `json:"position"`
}

// Attribute is a product attribute (material, size chart, ...).
type Attribute struct {
	ID     string   `json:"id,omitempty"`
	Code   string   `json:"code"`
	Name   string   `json:"name,omitempty"`
	Values []string `json:"values"`
}

// VariantAxis is one dimension of a variable product (size, colour).
type VariantAxis struct {
	AttributeID string   `json:"attribute_id,omitempty"`
	Code        string   `json:"code"`
	Name        string   `json:"name"`
	Values      []string `json:"values"`
}

// Link relates a product to another (accessory, upsell).
type Link struct {
	Kind      string `json:"kind"`
	ProductID string `json:"product_id"`
}

// Listing is a product's presence in one store.
type Listing struct {
	StoreID   string `json:"store_id"`
	Published bool   `json:"published"`
	URL       string `json:"url,omitempty"`
}

// Grants is a custom role's matrix: resource name -> "none" | "read" | "write".
type Grants map[string]string

// OptionsKey is the canonical form of a variant's options, unique per
// product: sorted, query-escaped axis=value pairs ("color=Navy&size=M"), so
// a product's axes sent again, by the API or the demo, find its variants.
func OptionsKey(opts map[string]string) string {
	v := make(url.Values, len(opts))
	for k, x := range opts {
		v.Set(k, x)
	}
	return v.Encode()
}
