// Package document is what a business sends: a record (an invoice, a
// quote, a credit note, a sales order, a shipment) as a person reads it,
// in the document's language, and its PDF. Amounts stay minor units here;
// money.Format shows them in the currency's unit when the page is laid out.
package document

import "time"

// Kind is which record a document shows; it picks the title and which
// blocks it has (a packing slip shows no prices).
type Kind string

const (
	Invoice    Kind = "invoice"
	Quote      Kind = "quote"
	CreditNote Kind = "credit_note"
	SalesOrder Kind = "sales_order" // the order confirmation
	Shipment   Kind = "shipment"    // the packing slip
)

// Lang is a document's language: en, fr, ar (right to left) or bilingual
// (every label in English and Arabic side by side).
type Lang string

// Langs are the languages documents are written in, as clients'
// preferred_language names them.
var Langs = []Lang{"en", "fr", "ar", "bilingual"}

// Party is the seller or the buyer.
type Party struct {
	Name               string
	Address            string // lines separated by "\n"
	Country            string // ISO 3166 alpha-2
	VATNumber          string
	RegistrationNumber string
	Email, Phone       string
	Website            string
}

// Logo is the seller's logo as uploaded (PNG, JPEG or SVG).
type Logo struct {
	MediaType string // image/png, image/jpeg, image/svg+xml
	Data      []byte
}

// Line is one line of the document.
type Line struct {
	Description    string // the item's translation in the document's language where it has one
	QtyMilli       int64  // thousandths: 1500 is 1.5
	UnitPriceCents int64
	DiscountBP     int64 // basis points: 1000 is 10 %
	VATRateBP      int64
	AmountCents    int64 // excluding VAT, after the discount
}

// VATRate is one row of the VAT summary: the taxable base and the VAT at a rate.
type VATRate struct {
	RateBP    int64
	BaseCents int64
	VATCents  int64
}

// Doc is everything a document shows, already decided: the renderers only
// lay it out.
type Doc struct {
	Kind      Kind
	Lang      Lang
	Number    string
	Currency  string // ISO 4217
	Date      time.Time
	DueDate   time.Time // zero when none (invoices, quotes: valid until)
	Reference string    // the quote or order it follows, or the invoice a credit note credits
	Status    string

	Seller Party
	Logo   *Logo
	Buyer  Party

	Lines []Line
	// Totals (not on a packing slip).
	SubtotalCents int64 // excluding VAT
	VATCents      int64
	TotalCents    int64 // including VAT
	VATSummary    []VATRate
	// Invoices only: what was paid and credited, and what remains.
	PaidCents, CreditedCents, RemainingCents int64

	PaymentInstructions string
	Notes               string
	Footer              string
}
