// Package enum holds the values of the data model's enumerated columns,
// declared once: ent/schema makes the columns of them, api/resource the
// body fields and list filters.
package enum

var (
	Languages          = []string{"en", "fr", "ar", "bilingual"}
	AddressKind        = []string{"billing", "shipping"}
	PaymentStatus      = []string{"pending", "completed", "failed", "cancelled"} // invoice and bill payments
	InvoiceStatus      = []string{"draft", "sent", "partially_paid", "paid", "overdue", "void"}
	QuoteStatus        = []string{"draft", "sent", "accepted", "declined", "expired", "invoiced"}
	CreditNoteStatus   = []string{"draft", "issued", "applied", "void"}
	BillStatus         = []string{"draft", "open", "partially_paid", "paid", "void"}
	SalesOrderStatus   = []string{"draft", "confirmed", "partially_shipped", "shipped", "delivered", "cancelled"}
	OrderPaymentStatus = []string{"unpaid", "authorized", "paid", "partially_refunded", "refunded"}
	ShippingStatus     = []string{"not_shipped", "partially_shipped", "shipped", "delivered"}
	ShipmentStatus     = []string{"shipped", "in_transit", "delivered"}
	ReturnStatus       = []string{"requested", "approved", "received", "refunded", "rejected"}
)
