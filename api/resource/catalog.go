package resource

import values "github.com/ledgerbase/ledgerbase/ent/enum"

// The request bodies of spec section 2.
var (
	clientBody = []Field{
		req(str("name", "Display name of the client.")),
		str("email", "Email address."),
		str("phones", "Phone numbers, free text."),
		str("contact", "Contact person."),
		str("address", "Postal address, free text."),
		currency("ISO 4217 currency code, e.g. EUR."),
		str("payment_terms_code", "Payment terms code, e.g. NET30."),
		str("notes", "Internal notes."),
		boolean("active", "Whether the client is active."),
		null(enum("preferred_language", "Language for documents; null clears it.", Languages...)),
		{Name: "external_ref", Type: Ref, Doc: "Upsert key from another system: \"system:connection:id\" or {system, connection_id, external_id}. A POST whose ref matches an existing client updates it."},
	}
	addressBody = append(withoutField(clientBody, "external_ref"),
		enum("kind", "billing or shipping (default billing).", values.AddressKind...),
		boolean("default_billing", "Make this the client's default billing address (clears the previous default)."),
		boolean("default_shipping", "Make this the client's default shipping address (clears the previous default)."),
	)
	paymentStatus      = values.PaymentStatus
	invoicePaymentBody = []Field{
		req(str("id", "Your own payment id. Recording the same id again returns the existing payment (200).")),
		req(str("number", "Payment document number shown to the customer.")),
		req(enum("status", "completed applies the payment to the invoice; pending records it without applying.", paymentStatus...)),
		req(date("date", "Payment date, YYYY-MM-DD.")),
		date("due_date", "Due date, YYYY-MM-DD."),
		null(str("client_id", "Client id (cli_...).")),
		str("client_name", "Client name."),
		currency("Must be the invoice's currency when given."),
		money("amount_excl_vat_cents", "Amount excluding VAT, minor units."),
		money("vat_amount_cents", "VAT amount, minor units."),
		money("amount_incl_vat_cents", "Amount paid, minor units. Must not exceed the invoice's open balance."),
		money("remaining_cents", "Open balance after the payment as you see it, minor units (informational)."),
		str("notes", "Notes."),
	}
	billPaymentBody = []Field{
		req(str("id", "Your own payment id. Recording the same id again returns the existing payment (200).")),
		str("number", "Payment number."),
		date("date", "Payment date, YYYY-MM-DD (default today)."),
		date("due_date", "Due date, YYYY-MM-DD."),
		null(str("vendor_id", "Vendor id (ven_...).")),
		str("vendor_name", "Vendor name."),
		currency("Must be the bill's currency when given."),
		money("amount_incl_vat_cents", "Amount paid, minor units. Must not exceed the bill's open balance."),
		money("remaining_cents", "Open balance after the payment as you see it (informational)."),
		enum("status", "completed (default) applies the payment; pending records it without applying.", paymentStatus...),
	}
	vendorBody = []Field{
		req(str("name", "Vendor name.")),
		str("email", "Email address."),
		str("phone", "Phone number."),
		currency("ISO 4217 currency code."),
		str("notes", "Notes."),
		null(enum("preferred_language", "Language; null clears it.", Languages...)),
	}
	itemBody = []Field{
		req(str("name", "Item name.")),
		str("number", "The SKU, unique in the workspace; allocated (ITM-000123) when omitted."),
		str("description", "Description."),
		currency("ISO 4217 currency code."),
		money("unit_price_cents", "List price, minor units."),
		null(rate("vat_rate_bp", "Default VAT rate of the item's lines in basis points (2000 = 20 %); null: none, the company's default applies in the admin forms.")),
		boolean("active", "Whether the item is active."),
		boolean("upsert", "With number: update the item that has this SKU instead of failing."),
		openObject("translations", "Translations by language, e.g. {\"fr\": {\"name\": \"...\"}}."),
	}
	productBody = []Field{
		req(str("name", "Product name.")),
		str("sku", "The SKU (same as number)."),
		str("number", "The SKU; allocated when omitted."),
		str("description", "Description."),
		money("unit_price_cents", "List price, minor units."),
		null(rate("vat_rate_bp", "Default VAT rate of the product's lines in basis points (2000 = 20 %); null: none.")),
		currency("ISO 4217 currency code."),
		str("product_type", "Product type, e.g. physical, digital."),
		str("brand", "Brand name."),
		str("brand_id", "Brand id."),
		openObject("translations", "Translations by language."),
		objects("media", "Images and files.",
			req(str("url", "URL of the file.")), str("alt", "Alternative text."), integer("position", "Sort position.")),
		objects("categories", "Categories the product belongs to.", req(str("id", "Category id (cat_...)."))),
		objects("attributes", "Attributes of the product.",
			str("id", "Attribute id."), req(str("code", "Attribute code.")), str("name", "Attribute name."),
			strings("values", "Values.")),
		objects("variant_axes", "Axes of a variable product; every missing combination becomes a variant with its own SKU.",
			str("attribute_id", "Use an attribute of the product as the axis."), str("code", "Axis code, e.g. size."),
			str("name", "Axis name."), strings("values", "Axis values, e.g. [\"S\",\"M\",\"L\"].")),
		boolean("upsert", "With sku or number: update the product that has this SKU."),
	}
	categoryBody = []Field{
		req(str("name", "Category name.")),
		null(refers(str("parent_id", "Parent category id; null makes it a root."), "categories")),
		str("slug", "URL slug, unique in the workspace; derived from the name when omitted."),
		integer("sort_order", "Sort position among siblings."),
		boolean("active", "Whether the category is active."),
		openObject("translations", "Translations by language."),
	}
	shipmentBody = []Field{
		req(str("sales_order_id", "The sales order (so_...) this shipment belongs to.")),
		objects("lines", "Lines to ship; omit to ship everything that remains on the order.",
			req(str("order_line_id", "Order line id (sol_...).")), req(quantity("qty_milli", 0, "Quantity in thousandths."))),
		str("location_id", "Location shipped from."),
		str("carrier", "Carrier name."),
		str("service", "Carrier service."),
		str("tracking_no", "Tracking number."),
		str("shipping_method_id", "Shipping method id."),
		money("cost_cents", "Shipping cost, minor units."),
		str("notes", "Notes."),
		objects("packages", "Parcels.", str("tracking_no", "Tracking number."), grams("weight_g", "Weight in grams.")),
		updateOnly(enum("status", "Moves forward along shipped, in_transit, delivered (on update; a new shipment is shipped).", values.ShipmentStatus...)),
	}
	trackingEvent = []Field{
		str("carrier_event_id", "The carrier's id of the event; an event with an id already stored is not stored again."),
		req(timestamp("occurred_at", "When it happened, RFC 3339.")),
		str("status", "Carrier status, e.g. in_transit, out_for_delivery, delivered."),
		str("description", "Human-readable description."),
		str("location", "Where it happened."),
	}
	promotionCodeBody = []Field{
		req(str("code", "The code customers type; unique in the workspace ignoring case.")),
		{Name: "max_uses", Type: Integer, Min: one(), Doc: "How many times the code may be used in all."},
		{Name: "max_uses_per_customer", Type: Integer, Min: one(), Doc: "How many times one customer may use it."},
		timestamp("expires_at", "When the code stops working, RFC 3339."),
	}
)

func one() *int64 { o := int64(1); return &o }

// TrackingEventFields are the fields of one tracking event.
func TrackingEventFields() []Field { return trackingEvent }

func withoutField(fs []Field, name string) []Field {
	out := make([]Field, 0, len(fs))
	for _, f := range fs {
		if f.Name != name {
			out = append(out, f)
		}
	}
	return out
}

func reads() []Op { return []Op{{Kind: List}, {Kind: Get}} }

func enumFilter(param string, values ...string) Filter {
	return Filter{Param: param, Column: param, Type: Enum, Values: values, Doc: "Only records with this " + param + "."}
}
func idFilter(param, doc string) Filter {
	return Filter{Param: param, Column: param, Type: String, Doc: doc}
}

// dateRange is the two ends of a range over a date column, inclusive:
// due_date_from and due_date_to.
func dateRange(column, what string) []Filter {
	return []Filter{
		{Param: column + "_from", Column: column, Type: Date, Bound: ">=", Doc: "Only records whose " + what + " is on or after this date, YYYY-MM-DD."},
		{Param: column + "_to", Column: column, Type: Date, Bound: "<=", Doc: "Only records whose " + what + " is on or before this date, YYYY-MM-DD."},
	}
}

// The resources of spec section 1 and 4.
var (
	Me = &Resource{Name: "me", Singular: "me", Plan: Starter, Toolset: "",
		Doc: "The workspace, plan and key of the calling key.", Ops: []Op{{Kind: List}}}

	Clients = &Resource{Name: "clients", Singular: "client", Table: "clients", Prefix: "cli", Plan: Growth, Toolset: "sales",
		Doc:      "Customers of the workspace.",
		Search:   []string{"name", "email", "contact", "phones"},
		Hidden:   externalRefColumns,
		Computed: []Computed{{Name: "external_ref", Doc: "{system, connection_id, external_id} or null.", Value: externalRef, Shape: externalRefShape}},
		Ops: append(reads(),
			Op{Kind: Create, Body: clientBody, Summary: "Create a client, or update the one whose external_ref matches."},
			Op{Kind: Update, Body: clientBody, Summary: "Update a client."}),
	}
	Addresses = &Resource{Name: "addresses", Singular: "address", Table: "addresses", Prefix: "adr", Plan: Growth, Grant: "clients", Toolset: "sales",
		Doc:    "A client's billing and shipping addresses.",
		Parent: &Parent{Resource: Clients, FK: "client_id", Segment: "addresses", IDParam: "address_id"},
		Ops: []Op{{Kind: List},
			{Kind: Create, Body: addressBody, Summary: "Add an address to the client's address book."},
			{Kind: Update, Body: addressBody, Summary: "Update an address, or make it the default billing or shipping address."}},
	}
	Invoices = &Resource{Name: "invoices", Singular: "invoice", Table: "invoices", Prefix: "inv", Plan: Starter, Toolset: "sales",
		Doc:    "Invoices sent to clients, with lines, totals and open balance.",
		Search: []string{"number", "client_name"}, SearchFew: []string{"client_name"},
		Filters: append(append([]Filter{enumFilter("status", values.InvoiceStatus...), idFilter("client_id", "Only this client's invoices.")},
			dateRange("date", "date")...), dateRange("due_date", "due date")...),
		Clock:    []string{"overdue"},
		Hidden:   externalRefColumns,
		Computed: []Computed{{Name: "external_ref", Doc: "{system, connection_id, external_id} or null.", Value: externalRef, Shape: externalRefShape}},
		Ops:      invoiceOps(),
	}
	InvoicePayments = &Resource{Name: "invoice-payments", Singular: "invoice payment", Table: "invoice_payments", Prefix: "ipay", Plan: Starter, Grant: "invoices", Toolset: "sales",
		Doc:    "Payments recorded on an invoice.",
		Parent: &Parent{Resource: Invoices, FK: "invoice_id", Segment: "payments"},
		Ops: []Op{{Kind: List},
			{Kind: Create, Body: invoicePaymentBody, From: []string{"sent", "partially_paid", "paid", "overdue"},
				Summary: "Record a payment on the invoice; the same id is recorded once."}},
	}
	Quotes = &Resource{Name: "quotes", Singular: "quote", Table: "quotes", Prefix: "quo", Plan: Starter, Toolset: "sales",
		Doc: "Quotes offered to clients.", Search: []string{"number", "client_name"}, SearchFew: []string{"client_name"},
		Filters: []Filter{enumFilter("status", values.QuoteStatus...), idFilter("client_id", "Only this client's quotes.")},
		Ops:     quoteOps()}
	CreditNotes = &Resource{Name: "credit-notes", Singular: "credit note", Table: "credit_notes", Prefix: "crn", Plan: Starter, Toolset: "sales",
		Doc: "Credit notes that reduce what a client owes.", Search: []string{"number", "client_name"}, SearchFew: []string{"client_name"},
		Filters: []Filter{enumFilter("status", values.CreditNoteStatus...), idFilter("client_id", "Only this client's credit notes.")},
		Ops:     creditNoteOps()}
	Stores = &Resource{Name: "stores", Singular: "store", Table: "stores", Prefix: "sto", Plan: Business, Toolset: "commerce",
		Doc:      "Online stores; primary_url is the verified custom domain when active, else the free store address.",
		Search:   []string{"name", "free_address", "custom_domain"},
		Computed: []Computed{{Name: "primary_url", Doc: "The store's public address.", Value: primaryURL, Shape: Field{Type: String}}},
		Ops:      storeOps()}
	SalesOrders = &Resource{Name: "sales-orders", Singular: "sales order", Table: "sales_orders", Prefix: "so", Plan: Starter, Toolset: "sales",
		Doc:    "Sales orders with lines; online orders add the store channel, payment status and shipping status.",
		Search: []string{"number", "client_name"}, SearchFew: []string{"client_name"},
		Filters: []Filter{
			enumFilter("status", values.SalesOrderStatus...),
			idFilter("client_id", "Only this client's orders."),
			idFilter("channel_id", "Only orders of this store (sto_...)."),
			{Param: "online", Column: "online", Type: Boolean, Doc: "true: only online orders; false: only the others."},
			enumFilter("payment_status", values.OrderPaymentStatus...),
			enumFilter("shipping_status", values.ShippingStatus...),
		},
		Embeds: []Embed{{Name: "lines", Table: "order_lines", FK: "sales_order_id", OrderBy: "position"}},
		Ops:    salesOrderOps()}
	Shipments = &Resource{Name: "shipments", Singular: "shipment", Table: "shipments", Prefix: "shp", Plan: Business, Needs: CommerceMode, Toolset: "commerce",
		Doc:     "Shipments of sales orders, with packages and a tracking timeline.",
		Search:  []string{"number", "tracking_no", "carrier"},
		Filters: []Filter{enumFilter("status", values.ShipmentStatus...), idFilter("sales_order_id", "Only shipments of this order.")},
		Embeds:  []Embed{{Name: "events", Table: "shipment_events", FK: "shipment_id", OrderBy: "occurred_at"}},
		Ops: append(reads(),
			Op{Kind: Create, Body: shipmentBody, From: []string{"confirmed", "partially_shipped", "shipped", "delivered"}, FromOf: "sales_order_id",
				Touches: []*Resource{SalesOrders}, Summary: "Ship the given lines of a sales order, or everything that remains."},
			Op{Kind: Update, Body: shipmentBody, Touches: []*Resource{SalesOrders}, Summary: "Update a shipment; status moves only forward: shipped, in_transit, delivered."},
			pdf("the shipment", "the packing slip, without prices")),
	}
	ShipmentEvents = &Resource{Name: "shipment-events", Singular: "tracking event", Table: "shipment_events", Prefix: "sev", Plan: Business, Needs: CommerceMode, Grant: "shipments", Toolset: "commerce",
		Doc:    "Tracking events of a shipment.",
		Parent: &Parent{Resource: Shipments, FK: "shipment_id", Segment: "events"},
		Ops: []Op{{Kind: Create, Body: trackingEvent, BulkKey: "events", BulkMax: 100,
			Summary: "Add tracking events to a shipment; an event whose carrier_event_id is already stored is not stored again."}},
	}
	Returns = &Resource{Name: "returns", Singular: "return", Table: "returns", Prefix: "ret", Plan: Business, Toolset: "commerce",
		Doc: "Customer return requests (RMA) on online orders, with lines and refund outcome. Read-only.", Search: []string{"number", "reason"},
		Filters: []Filter{enumFilter("status", values.ReturnStatus...), idFilter("sales_order_id", "Only returns of this order.")},
		Ops:     returnOps()}
	Promotions = &Resource{Name: "promotions", Singular: "promotion", Table: "promotions", Prefix: "pro", Plan: Business, Toolset: "commerce",
		Doc: "Promotions with usage totals; archived promotions are not listed.", Search: []string{"name"},
		Filters: []Filter{enumFilter("status", "active", "scheduled", "expired")},
		Scope:   "status <> 'archived'",
		Clock:   []string{"active", "expired"},
		Ops:     promotionOps()}
	PromotionCodes = &Resource{Name: "promotion-codes", Singular: "promotion code", Table: "promotion_codes", Prefix: "pcd", Plan: Business, Grant: "promotions", Toolset: "commerce",
		Doc:    "Coupon codes of a code promotion.",
		Parent: &Parent{Resource: Promotions, FK: "promotion_id", Segment: "codes"},
		Hidden: []string{"code_key"},
		Ops: []Op{{Kind: List},
			{Kind: Create, Body: promotionCodeBody, Summary: "Add a code to a promotion of kind code; codes are unique in the workspace ignoring case."}},
	}
	GiftCards = &Resource{Name: "gift-cards", Singular: "gift card", Table: "gift_cards", Prefix: "gc", Plan: Business, Toolset: "commerce",
		Doc: "Gift cards with balance and ledger; only the last four characters of a code are shown. Read-only.", Search: []string{"code_last4"},
		Hidden: []string{"code_hash"}, Clock: []string{"expired"}, Ops: giftCardOps()}
	Payments = &Resource{Name: "payments", Singular: "online payment", Plural: "online payments", Table: "payments", Prefix: "pay", Plan: Business, Toolset: "commerce",
		Doc:     "Online store payment transactions (authorize, capture, refund, void) with fees and the posted receipt. Read-only.",
		Search:  []string{"provider_ref"},
		Filters: []Filter{idFilter("sales_order_id", "Only payments of this order.")},
		Ops:     reads()}
	Vendors = &Resource{Name: "vendors", Singular: "vendor", Table: "vendors", Prefix: "ven", Plan: Starter, Toolset: "purchasing",
		Doc: "Suppliers.", Search: []string{"name", "email"},
		Ops: append(reads(),
			Op{Kind: Create, Body: vendorBody, Summary: "Create a vendor."},
			Op{Kind: Update, Body: vendorBody, Summary: "Update a vendor."})}
	Bills = &Resource{Name: "bills", Singular: "bill", Table: "bills", Prefix: "bill", Plan: Starter, Toolset: "purchasing",
		Doc: "Vendors' bills, with lines, totals and open balance.", Search: []string{"number", "vendor_name"}, SearchFew: []string{"vendor_name"},
		Filters: append(append([]Filter{enumFilter("status", values.BillStatus...), idFilter("vendor_id", "Only this vendor's bills.")},
			dateRange("date", "date")...), dateRange("due_date", "due date")...),
		Ops: billOps()}
	BillPayments = &Resource{Name: "bill-payments", Singular: "bill payment", Table: "bill_payments", Prefix: "bpay", Plan: Starter, Grant: "bills", Toolset: "purchasing",
		Doc:    "Payments recorded on a bill.",
		Parent: &Parent{Resource: Bills, FK: "bill_id", Segment: "payments"},
		Ops: []Op{{Kind: List},
			{Kind: Create, Body: billPaymentBody, From: []string{"open", "partially_paid", "paid"},
				Summary: "Record a payment on the bill; the same id is recorded once."}}}
	Items = &Resource{Name: "items", Singular: "item", Table: "items", Prefix: "itm", Plan: Starter, Toolset: "catalog",
		Doc:             "Items sold or bought. Products' commerce fields are added on reads when commerce is on.",
		Search:          []string{"number", "name"},
		CommerceColumns: productColumns,
		CommerceFlag:    "is_product",
		Hidden:          []string{"is_product"},
		Embeds:          productEmbeds(true),
		Ops: append(reads(),
			Op{Kind: Create, Body: itemBody, Summary: "Create an item (upsert: true with number updates the item with that SKU)."},
			Op{Kind: Update, Body: itemBody, Summary: "Update an item."},
			Op{Kind: Upsert, Body: itemBody, Summary: "Create or update an item by SKU (number)."})}
	Products = &Resource{Name: "products", Singular: "product", Table: "items", Prefix: "itm", Plan: Starter, Needs: CommerceMode | CommerceModule, Toolset: "catalog",
		Doc:    "The commerce view of items: variants, media, categories, attributes, links, translations and store listings.",
		Search: []string{"number", "name", "brand"},
		Scope:  "is_product = true",
		Hidden: []string{"is_product"},
		Embeds: productEmbeds(false),
		Ops: append(reads(),
			Op{Kind: Create, Body: productBody, Summary: "Create a product; variant_axes generate every missing variant."},
			Op{Kind: Update, Body: productBody, Summary: "Update a product."},
			Op{Kind: Upsert, Body: productBody, Summary: "Create or update a product by SKU."},
			Op{Kind: Bulk, Body: productBody, BulkKey: "products", BulkMax: 100, Summary: "Create or upsert up to 100 products; answers per product."})}
	Categories = &Resource{Name: "categories", Singular: "category", Table: "categories", Prefix: "cat", Plan: Starter, Needs: CommerceMode, Toolset: "catalog",
		Doc: "The product category tree.", Search: []string{"name", "slug"},
		Filters: []Filter{idFilter("parent_id", "Only children of this category.")},
		Ops: append(reads(),
			Op{Kind: Create, Body: categoryBody, Summary: "Create a category; the slug is derived from the name when omitted."},
			Op{Kind: Update, Body: categoryBody, Summary: "Update a category; a parent that would make a cycle is refused."})}
)

func productEmbeds(commerce bool) []Embed {
	return []Embed{
		{Name: "variants", Table: "variants", FK: "item_id", OrderBy: "sku", Commerce: commerce},
		{Name: "categories", Table: "categories", Via: &Via{Table: "item_categories", FK: "item_id", Ref: "category_id"},
			Columns: []string{"id", "name", "slug", "parent_id"}, OrderBy: "name", Commerce: commerce},
	}
}

var productColumns = []string{"product_type", "brand", "brand_id", "media", "attributes", "variant_axes", "links", "listings"}

// All lists every resource in the order of the spec's endpoint table.
var All = []*Resource{Me, Clients, Addresses, Invoices, InvoicePayments, Quotes, CreditNotes, Stores, SalesOrders,
	Shipments, ShipmentEvents, Returns, Promotions, PromotionCodes, GiftCards, Payments, Vendors, Bills, BillPayments,
	Items, Products, Categories, Company}

// Grantable lists the resource names a custom role grants (sub-resources
// follow their parent; me is always readable).
func Grantable() []string {
	var out []string
	for _, r := range All {
		if r != Me && r.Grant == "" && !r.Singleton {
			out = append(out, r.Name)
		}
	}
	return out
}

// ByName finds a resource by its name.
func ByName(name string) *Resource {
	for _, r := range All {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// primaryURL is the verified, active custom domain, else the free store address.
func primaryURL(col func(string) any) any {
	if d, _ := col("custom_domain").(string); d != "" && col("custom_domain_verified") == true && col("custom_domain_active") == true {
		return "https://" + d
	}
	return "https://" + col("free_address").(string)
}

// ExternalRefFields are the parts of an external_ref in its object form.
var ExternalRefFields = []Field{
	req(str("system", "The other system, e.g. shopify.")),
	null(str("connection_id", "The connection (store, account) within that system; null when there is only one.")),
	req(str("external_id", "The record's id in that system.")),
}

// externalRefColumns hold a record's external_ref; reads show it as one object.
var externalRefColumns = []string{"ext_system", "ext_connection_id", "ext_external_id", "ext_key"}

var externalRefShape = Field{Type: Object, Nullable: true, Items: ExternalRefFields}

// ExternalRef is the normalized form of a client's external_ref.
type ExternalRef struct {
	System       string  `json:"system"`
	ConnectionID *string `json:"connection_id"`
	ExternalID   string  `json:"external_id"`
}

func externalRef(col func(string) any) any {
	sys, _ := col("ext_system").(string)
	id, _ := col("ext_external_id").(string)
	if sys == "" || id == "" {
		return nil
	}
	ref := ExternalRef{System: sys, ExternalID: id}
	if c, ok := col("ext_connection_id").(string); ok {
		ref.ConnectionID = &c
	}
	return ref
}
