package resource

// Gift cards and returns are read-only over /v1 (spec section 2); the
// admin UI writes them through these AdminOnly operations.

var giftCardBody = []Field{
	req(Field{Name: "initial_balance_cents", Type: Integer, Min: one(), Unit: MinorUnits, Doc: "The card's starting balance, minor units of currency_code."}),
	currency("ISO 4217 currency code of the balance; default EUR."),
	null(str("client_id", "The client (cli_...) the card belongs to; optional.")),
	null(timestamp("expires_at", "When the card stops working, RFC 3339, in the future; null: never.")),
}

// giftCardLive are the states in which a card's balance may change.
var giftCardLive = []string{"active", "depleted"}

func giftCardOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: giftCardBody, AdminOnly: true, Secret: "code",
			Summary: "Issue a gift card: its code is generated, shown once, and kept only as a SHA-256 hash and its last four characters."},
		Op{Kind: Action, Name: "adjust", From: giftCardLive, AdminOnly: true,
			Body: []Field{
				req(Field{Name: "amount_cents", Type: Integer, Unit: MinorUnits, Doc: "Added to the balance (negative: taken off), minor units; the balance never goes below zero."}),
				req(Field{Name: "reason", Type: String, MaxLen: 500, Doc: "Why the balance changes; kept in the card's ledger."}),
			},
			Summary: "Adjust an active or depleted card's balance with a reason, written to its ledger; a card at zero is depleted."},
		Op{Kind: Action, Name: "disable", From: []string{"active", "depleted", "expired"}, To: "disabled", AdminOnly: true,
			Summary: "Disable a gift card: its balance can no longer be used or changed."},
	)
}

var returnBody = []Field{
	req(str("sales_order_id", "The online sales order (so_...) whose delivered goods come back.")),
	objects("lines", "The order lines returned; omit to return everything delivered and not yet returned.",
		req(str("order_line_id", "Order line id (sol_...).")),
		req(quantity("qty_milli", 1, "Quantity returned in thousandths, at most what was delivered and not yet returned.")),
		Field{Name: "reason", Type: String, MaxLen: 500, Doc: "Why this line comes back."}),
	Field{Name: "reason", Type: String, MaxLen: 500, Doc: "Why the goods come back."},
	str("number", "Return number, unique in the workspace; allocated (RMA-000123) when omitted."),
}

func returnOps() []Op {
	return append(reads(),
		Op{Kind: Create, Body: returnBody, AdminOnly: true,
			Summary: "Open a return on delivered lines of an online order; it starts requested."},
		Op{Kind: Action, Name: "approve", From: []string{"requested"}, To: "approved", AdminOnly: true,
			Summary: "Approve a requested return: the customer may send the goods back."},
		Op{Kind: Action, Name: "receive", From: []string{"approved"}, To: "received", AdminOnly: true,
			Summary: "Record that the goods of an approved return arrived."},
		Op{Kind: Action, Name: "refund", From: []string{"received"}, To: "refunded", AdminOnly: true,
			Makes: []*Resource{Payments}, Touches: []*Resource{SalesOrders},
			Body: []Field{{Name: "amount_cents", Type: Integer, Min: one(), Unit: MinorUnits,
				Doc: "Refunded, minor units; at most what was paid for the returned lines (the default). Recorded as a refund of the order's online payments."}},
			Summary: "Refund a received return: at most what was paid for its lines; the order's payment status follows."},
		Op{Kind: Action, Name: "reject", From: []string{"requested", "approved"}, To: "rejected", AdminOnly: true,
			Summary: "Reject a return that was not received: nothing is refunded."},
	)
}
