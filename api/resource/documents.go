package resource

// The bodies and operations of documents with lines. Money is never sent:
// api/money computes every amount from the lines.

import (
	"slices"

	values "github.com/ledgerbase/ledgerbase/ent/enum"
)

func bp(max int64) *int64 { return &max }

// pdf is a document's PDF: what names it ("the invoice"), and what it is on paper.
func pdf(what, paper string) Op {
	return Op{Kind: Document, Summary: "Get " + what + " as a PDF (" + paper + "), in lang or else the client's preferred_language, the company's default_language, then en."}
}

// docLines is the lines field of a document body.
func docLines() Field {
	items := []Field{
		str("item_id", "Item (itm_...) the line sells; optional."),
		req(str("description", "What the line is for.")),
		req(quantity("qty_milli", 0, "Quantity in thousandths (1500 = 1.5).")),
		req(money("unit_price_cents", "Unit price excluding VAT, minor units.")),
		rate("vat_rate_bp", "VAT rate in basis points (2000 = 20 %, 550 = 5.5 %); default 0."),
		rate("discount_bp", "Discount on the line in basis points (1000 = 10 %); default 0."),
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

var invoiceBody = append(documentBody("client", "Invoice number, unique in the workspace; allocated (INV-000123) when omitted."),
	Field{Name: "external_ref", Type: Ref, Doc: "Upsert key from another system (a billing system's invoice id): \"system:connection:id\" or {system, connection_id, external_id}. A POST whose ref matches an invoice of the workspace edits that invoice (200) by the edit rules."})

func invoiceOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: invoiceBody, Summary: "Create a draft invoice; totals are computed from the lines."},
		Op{Kind: Update, Body: invoiceBody, From: editable(values.InvoiceStatus, "void"), Summary: "Edit an invoice: any field while draft (lines are replaced whole); afterwards only notes and due_date."},
		Op{Kind: Delete, From: []string{"draft"}, Summary: "Delete a draft invoice."},
		Op{Kind: Action, Name: "send", From: []string{"draft"}, To: "sent", Emails: true, Body: EmailBody,
			Summary: "Send a draft invoice: it becomes sent and open for payment, and its PDF is emailed to the client (when it has an address, unless email is false)."},
		Op{Kind: Action, Name: "void", From: []string{"draft", "sent", "overdue"}, To: "void", Summary: "Void an invoice that has no completed payment."},
		pdf("the invoice", "what the client receives"),
	)
}

// An invoice deleted or voided unlinks the order it was made of, which may
// then be invoiced again. Invoices and SalesOrders name each other, so the
// invoice's side is declared once both exist.
func init() {
	for i, o := range Invoices.Ops {
		if o.Kind == Delete || o.Kind == Action && o.Name == "void" {
			Invoices.Ops[i].Touches = []*Resource{SalesOrders}
		}
	}
}

// FollowUp is a record a person starts from a document of Of (a credit
// note of an invoice): its admin page offers it, as Label, in the states
// From allows, as a new record of Makes whose body field Field names the
// document and whose form starts from its lines. /v1 has no such link: a
// client sends the create with Field set.
type FollowUp struct {
	Of, Makes *Resource
	Field     string
	Label     string
	From      []string
}

// Allowed reports whether a document in state may be followed up so.
func (f FollowUp) Allowed(state string) bool { return slices.Contains(f.From, state) }

// FollowUps are the records started from documents. A credit note credits
// an issued invoice, paid or not (a paid one's note is a credit to the
// client); a return takes back what was delivered, which an order has
// from its first shipment on (the form offers only what is left).
var FollowUps = []FollowUp{
	{Of: Invoices, Makes: CreditNotes, Field: "invoice_id", Label: "Credit this invoice",
		From: []string{"sent", "partially_paid", "paid", "overdue"}},
	{Of: SalesOrders, Makes: Returns, Field: "sales_order_id", Label: "New return",
		From: []string{"partially_shipped", "shipped", "delivered"}},
}

// FollowUpOf is the follow-up that starts a record of makes from a
// document of of, if one is declared.
func FollowUpOf(of, makes *Resource) (FollowUp, bool) {
	for _, f := range FollowUps {
		if f.Of == of && f.Makes == makes {
			return f, true
		}
	}
	return FollowUp{}, false
}

// lateFields are what an edit may still change once a document has left
// draft; while it is one, any field.
var lateFields = map[*Resource][]string{
	Invoices: docLate, Quotes: docLate, CreditNotes: docLate, Bills: docLate,
	SalesOrders: {"notes", "shipping_address"},
}

var docLate = []string{"notes", "due_date", "external_ref"}

// LateFields are the body fields an edit of a record of r may still
// change once it has left draft (nil: r has no draft). /v1 refuses the
// others; the admin's Edit shows only these.
func LateFields(r *Resource) []string { return lateFields[r] }

// editable are the states a document's edit is allowed from: all but the
// end one (void, cancelled), where nothing changes any more. The admin UI
// offers Edit by the same rule.
func editable(states []string, end string) []string {
	return slices.DeleteFunc(slices.Clone(states), func(s string) bool { return s == end })
}

// Quotes and credit notes.

var quoteBody = documentBody("client", "Quote number, unique in the workspace; allocated (QUO-000123) when omitted.")

func quoteOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: quoteBody, Summary: "Create a draft quote; totals are computed from the lines."},
		Op{Kind: Update, Body: quoteBody, Summary: "Edit a quote: any field while draft (lines are replaced whole); afterwards only notes and due_date."},
		Op{Kind: Action, Name: "send", From: []string{"draft"}, To: "sent", Emails: true, Body: EmailBody,
			Summary: "Send a draft quote to the client: it becomes sent, and its PDF is emailed to the client (when it has an address, unless email is false)."},
		Op{Kind: Action, Name: "accept", From: []string{"sent"}, To: "accepted", Summary: "Record that the client accepted a sent quote."},
		Op{Kind: Action, Name: "decline", From: []string{"sent"}, To: "declined", Summary: "Record that the client declined a sent quote."},
		Op{Kind: Action, Name: "invoice", From: []string{"accepted"}, To: "invoiced", Makes: []*Resource{Invoices},
			Summary: "Make a draft invoice of an accepted quote's client, currency, lines and notes; answers the quote, invoiced, with its invoice_id."},
		pdf("the quote", "what the client receives"),
	)
}

var creditNoteBody = append(documentBody("client", "Credit note number, unique in the workspace; allocated (CRN-000123) when omitted."),
	null(str("invoice_id", "The invoice (inv_...) the note credits, of the same client and currency; its client and currency are the defaults.")))

func creditNoteOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: creditNoteBody, Summary: "Create a draft credit note, optionally against an invoice; totals are computed from the lines."},
		Op{Kind: Update, Body: creditNoteBody, From: editable(values.CreditNoteStatus, "void"), Summary: "Edit a credit note: any field while draft (lines are replaced whole); afterwards only notes and due_date."},
		Op{Kind: Action, Name: "issue", From: []string{"draft"}, To: "issued", Emails: true, Body: EmailBody,
			Summary: "Issue a draft credit note: it becomes issued, and its PDF is emailed to the client (when it has an address, unless email is false)."},
		Op{Kind: Action, Name: "apply", From: []string{"issued"}, To: "applied", Touches: []*Resource{Invoices},
			Body:    []Field{str("invoice_id", "The invoice (inv_...) to credit; optional when the note was created against one, and then it must be that one.")},
			Summary: "Apply an issued credit note to an invoice: its amount_incl_vat_cents lowers the invoice's remaining_cents (over the open balance is 409)."},
		Op{Kind: Action, Name: "void", From: []string{"draft", "issued"}, To: "void", Summary: "Void a credit note that was not applied."},
		pdf("the credit note", "what the client receives"))
}

// Bills and sales orders.

var billBody = documentBody("vendor", "Bill number, unique in the workspace; allocated (BILL-000123) when omitted.")

func billOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: billBody, Summary: "Record a draft bill; totals are computed from the lines."},
		Op{Kind: Update, Body: billBody, From: editable(values.BillStatus, "void"), Summary: "Edit a bill: any field while draft (lines are replaced whole); afterwards only notes and due_date."},
		Op{Kind: Delete, From: []string{"draft"}, Summary: "Delete a draft bill."},
		Op{Kind: Action, Name: "open", From: []string{"draft"}, To: "open", Summary: "Open a draft bill: its total becomes owed and bill payments apply to it."},
		Op{Kind: Action, Name: "void", From: []string{"draft", "open"}, To: "void", Summary: "Void a bill that has no completed payment."},
	)
}

// orderLinesField is the lines field of a sales order body; lines live in
// their own table (order lines), with what has shipped of each.
func orderLinesField() Field {
	items := []Field{
		str("item_id", "Item (itm_...) the line sells."),
		str("variant_id", "Variant (var_...) the line sells; its item becomes the line's item_id."),
		str("sku", "SKU; default the variant's or the item's."),
		str("description", "What the line is; default the item's name and the variant's options. Required on a line with neither item_id nor variant_id."),
		req(quantity("qty_milli", 1, "Quantity in thousandths (1500 = 1.5).")),
		req(money("unit_price_cents", "Unit price excluding VAT, minor units.")),
		rate("vat_rate_bp", "VAT rate in basis points (2000 = 20 %); default 0."),
	}
	return Field{Name: "lines", Type: Array, Items: items, MaxLen: 500,
		Doc: "The lines, in order (at least one); amounts are computed (qty × price, then VAT, each rounded half away from zero), never sent."}
}

// invoiceable are the states an order may be invoiced from: once confirmed,
// before or after it ships, never as a draft or cancelled.
var invoiceable = []string{"confirmed", "partially_shipped", "shipped", "delivered"}

// salesOrderBody is what both create and edit take; create adds the store,
// its payments and the starting status.
var salesOrderBody = []Field{
	null(str("client_id", "The client (cli_...); its name and currency are the defaults.")),
	str("client_name", "The client's name, when there is no client_id."),
	str("currency_code", "ISO 4217 currency code; default the store's for an online order, else the client's, else EUR."),
	date("date", "Order date, YYYY-MM-DD; default today."),
	orderLinesField(),
	str("shipping_address", "Where the order ships, free text."),
	str("notes", "Notes."),
	str("number", "Order number, unique in the workspace; allocated (SO-000123) when omitted."),
}

var salesOrderCreateBody = append(append([]Field{}, salesOrderBody...),
	str("store_id", "The store (sto_...) of an online order; shown as channel_id. An online order starts not_shipped, with the payment_status its payments give it."),
	enum("status", "draft or confirmed; default confirmed for an online order (a shop pushes placed orders), else draft.", "draft", "confirmed"),
	objects("payments", "An online order's payment transactions at the store, in order; they become its online payments (GET /v1/payments) and set its payment_status.",
		req(enum("kind", "authorize, capture, refund or void (cancels the authorizations before it).", "authorize", "capture", "refund", "void")),
		req(money("amount_cents", "Amount, minor units of the order's currency.")),
		money("fee_cents", "The provider's fee, minor units."),
		str("external_id", "The provider's id of the transaction.")),
)

func salesOrderOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: salesOrderCreateBody, Summary: "Create a sales order, or push an online order with its store payments; totals are computed from the lines."},
		Op{Kind: Update, Body: salesOrderBody, From: editable(values.SalesOrderStatus, "cancelled"), Summary: "Edit a sales order: any field while draft (lines are replaced whole); afterwards only notes and shipping_address."},
		Op{Kind: Action, Name: "confirm", From: []string{"draft"}, To: "confirmed", Summary: "Confirm a draft order: it can then be shipped."},
		Op{Kind: Action, Name: "cancel", From: []string{"draft", "confirmed"}, To: "cancelled", Summary: "Cancel an order of which nothing has shipped."},
		// The order's status follows its shipping, so invoicing leaves it as it is.
		Op{Kind: Action, Name: "invoice", From: invoiceable, Makes: []*Resource{Invoices},
			Summary: "Make a draft invoice of a confirmed (or shipped) order's client, currency, lines and notes; answers the order with its invoice_id. " +
				"Once per order: while its invoice is not void, another is 409 already_invoiced."},
		pdf("the sales order", "the order confirmation"),
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
