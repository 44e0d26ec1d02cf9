package resource

// The bodies and operations of documents with lines (invoices, quotes,
// credit notes, bills): what clients send, and the states each operation
// is allowed from. Money is never sent: api/writes computes every amount
// from the lines.

func bp(max int64) *int64 { return &max }

// docLines is the lines field of a document body.
func docLines() Field {
	items := []Field{
		str("item_id", "Item (itm_...) the line sells; optional."),
		req(str("description", "What the line is for.")),
		req(Field{Name: "qty_milli", Type: Integer, Min: min0(), Doc: "Quantity in thousandths (1500 = 1.5)."}),
		req(money("unit_price_cents", "Unit price excluding VAT, minor units.")),
		{Name: "vat_rate_bp", Type: Integer, Min: min0(), Max: bp(10_000), Doc: "VAT rate in basis points (2000 = 20 %, 550 = 5.5 %); default 0."},
		{Name: "discount_bp", Type: Integer, Min: min0(), Max: bp(10_000), Doc: "Discount on the line in basis points (1000 = 10 %); default 0."},
	}
	return Field{Name: "lines", Type: Array, Items: items, MaxLen: 500,
		Doc: "The lines, in order; amounts are computed (line: qty × price − discount, then VAT, each rounded half away from zero), never sent."}
}

// documentBody is the body of a document of a party ("client" or "vendor");
// on create the party and the lines are checked by the operation.
func documentBody(party, numberDoc string) []Field {
	return []Field{
		null(str(party+"_id", "The "+party+" ("+map[string]string{"client": "cli", "vendor": "ven"}[party]+"_...); its name and currency are the defaults.")),
		str(party+"_name", "The "+party+"'s name, when there is no "+party+"_id."),
		str("currency_code", "ISO 4217 currency code; default the "+party+"'s, else EUR."),
		date("date", "Document date, YYYY-MM-DD; default today."),
		null(date("due_date", "Due date, YYYY-MM-DD.")),
		docLines(),
		str("notes", "Notes printed on the document."),
		str("number", numberDoc),
	}
}

var invoiceBody = documentBody("client", "Invoice number, unique in the workspace; allocated (INV-000123) when omitted.")

func invoiceOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: invoiceBody, Summary: "Create a draft invoice; totals are computed from the lines."},
		Op{Kind: Update, Body: invoiceBody, Summary: "Edit an invoice: any field while draft (lines are replaced whole); afterwards only notes and due_date."},
		Op{Kind: Delete, From: []string{"draft"}, Summary: "Delete a draft invoice."},
		Op{Kind: Action, Name: "send", From: []string{"draft"}, To: "sent", Summary: "Send a draft invoice: it becomes sent and open for payment."},
		Op{Kind: Action, Name: "void", From: []string{"draft", "sent", "overdue"}, To: "void", Summary: "Void an invoice that has no completed payment."},
	)
}

// Stores and promotions (business plan): their bodies and operations.

var storeBody = []Field{
	req(str("name", "Store name.")),
	req(str("free_address", "The store's free address, a host name such as acme.ledgerbase.shop (no scheme or path); stored lower-cased.")),
	null(str("custom_domain", "A custom domain, a host name such as shop.acme.com (no scheme or path); stored lower-cased. A new domain starts unverified and inactive; null removes it.")),
	boolean("custom_domain_verified", "Whether the custom domain's DNS is verified; needs a custom_domain."),
	boolean("custom_domain_active", "Whether the custom domain serves the store; needs a custom_domain. primary_url is the custom domain once it is both verified and active."),
	currency("ISO 4217 currency code of the store; default EUR."),
	boolean("active", "Whether the store is open."),
}

// promotionBody has no status: it follows the dates (scheduled before
// starts_at, expired from ends_at, else active) until archived.
var promotionBody = []Field{
	req(str("name", "Promotion name.")),
	enum("kind", "code (unlocked by its codes; default) or automatic.", "code", "automatic"),
	enum("discount_type", "percentage (default), fixed_amount or free_shipping.", "percentage", "fixed_amount", "free_shipping"),
	{Name: "discount_value", Type: Integer, Min: min0(), Doc: "percentage: basis points from 1 to 10000 (1500 = 15 %); fixed_amount: minor units of currency_code; free_shipping: 0 or omitted."},
	currency("ISO 4217 currency code of a fixed amount; default EUR."),
	null(timestamp("starts_at", "When the promotion starts, RFC 3339; null: already started.")),
	null(timestamp("ends_at", "When it ends, RFC 3339, after starts_at; null: never.")),
}

// promotionStates are the states a promotion's dates give it.
var promotionStates = []string{"scheduled", "active", "expired"}

// storePatchBody is storeBody without free_address required: a PATCH
// carries name (DESIGN.md "Requests") and leaves what it omits as it is.
func storePatchBody() []Field {
	out := append([]Field(nil), storeBody...)
	for i := range out {
		if out[i].Name == "free_address" {
			out[i].Required = false
		}
	}
	return out
}

func storeOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: storeBody, Summary: "Create a store."},
		Op{Kind: Update, Body: storePatchBody(), Summary: "Update a store; changing custom_domain makes it unverified and inactive again unless the body says otherwise."})
}

func promotionOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: promotionBody, Summary: "Create a promotion; its status follows starts_at and ends_at."},
		Op{Kind: Update, Body: promotionBody, From: promotionStates, Summary: "Edit a promotion that is not archived; its status follows the new dates."},
		Op{Kind: Action, Name: "archive", From: promotionStates, To: "archived", Summary: "Archive a promotion: it leaves lists and reads (GET answers 404, as for every archived promotion)."})
}
