package document

import "fmt"

// Label is one text of a document or of the email that sends it; every
// language has every label (TestEveryLabelInEveryLanguage).
type Label string

const (
	TitleInvoice    Label = "title.invoice"
	TitleQuote      Label = "title.quote"
	TitleCreditNote Label = "title.credit_note"
	TitleSalesOrder Label = "title.sales_order"
	TitleShipment   Label = "title.shipment"

	Number             Label = "number"
	Date               Label = "date"
	DueDate            Label = "due_date"
	ValidUntil         Label = "valid_until"
	Reference          Label = "reference"
	Seller             Label = "seller"
	BillTo             Label = "bill_to"
	VATNumber          Label = "vat_number"
	RegistrationNumber Label = "registration_number"
	Email              Label = "email"
	Phone              Label = "phone"
	Website            Label = "website"

	Description Label = "description"
	Quantity    Label = "quantity"
	UnitPrice   Label = "unit_price"
	Discount    Label = "discount"
	VATRateCol  Label = "vat_rate"
	Amount      Label = "amount"

	Subtotal     Label = "subtotal"
	VAT          Label = "vat"
	Total        Label = "total"
	VATSummaryT  Label = "vat_summary"
	Rate         Label = "rate"
	TaxableBase  Label = "taxable_base"
	Paid         Label = "paid"
	Credited     Label = "credited"
	Remaining    Label = "remaining"
	PaymentInstr Label = "payment_instructions"
	Notes        Label = "notes"
	PageOf       Label = "page_of" // page n of m
	ShipTo       Label = "ship_to" // a packing slip's buyer
	Field        Label = "field"   // a label and its value on one line
	// DateLayout is how the language writes a date, as a Go time layout.
	DateLayout Label = "date_layout"

	// The email that sends a document: subject (title, number, seller)
	// and body (title, number).
	EmailSubject Label = "email.subject"
	EmailBody    Label = "email.body"
)

// catalogue holds one message table per language; bilingual documents
// show "en" and "ar" side by side (Lang.Sides).
var catalogue = map[Lang]map[Label]string{
	"en": {
		TitleInvoice: "Invoice", TitleQuote: "Quote", TitleCreditNote: "Credit note",
		TitleSalesOrder: "Order confirmation", TitleShipment: "Packing slip",
		Number: "Number", Date: "Date", DueDate: "Due date", ValidUntil: "Valid until", Reference: "Reference",
		Seller: "From", BillTo: "Bill to", VATNumber: "VAT number", RegistrationNumber: "Registration number",
		Email: "Email", Phone: "Phone", Website: "Website",
		Description: "Description", Quantity: "Quantity", UnitPrice: "Unit price", Discount: "Discount",
		VATRateCol: "VAT rate", Amount: "Amount",
		Subtotal: "Subtotal excl. VAT", VAT: "VAT", Total: "Total incl. VAT", VATSummaryT: "VAT summary",
		Rate: "Rate", TaxableBase: "Taxable amount", Paid: "Paid", Credited: "Credited", Remaining: "Amount due",
		PaymentInstr: "Payment instructions", Notes: "Notes", PageOf: "Page %d of %d",
		ShipTo: "Ship to", DateLayout: "2 Jan 2006", Field: "%s: %s",
		EmailSubject: "%s %s from %s",
		EmailBody:    "Hello,\n\nPlease find attached %s %s.\n\nKind regards,\n%s",
	},
	"fr": {
		TitleInvoice: "Facture", TitleQuote: "Devis", TitleCreditNote: "Avoir",
		TitleSalesOrder: "Confirmation de commande", TitleShipment: "Bon de livraison",
		Number: "Numéro", Date: "Date", DueDate: "Échéance", ValidUntil: "Valable jusqu’au", Reference: "Référence",
		Seller: "Émetteur", BillTo: "Facturé à", VATNumber: "N° de TVA", RegistrationNumber: "N° d’immatriculation",
		Email: "E-mail", Phone: "Téléphone", Website: "Site web",
		Description: "Désignation", Quantity: "Quantité", UnitPrice: "Prix unitaire HT", Discount: "Remise",
		VATRateCol: "Taux de TVA", Amount: "Montant HT",
		Subtotal: "Total HT", VAT: "TVA", Total: "Total TTC", VATSummaryT: "Récapitulatif de TVA",
		Rate: "Taux", TaxableBase: "Base HT", Paid: "Payé", Credited: "Avoirs", Remaining: "Reste à payer",
		PaymentInstr: "Modalités de paiement", Notes: "Notes", PageOf: "Page %d sur %d",
		ShipTo: "Livré à", DateLayout: "02/01/2006", Field: "%s\u00a0: %s",
		EmailSubject: "%s %s de %s",
		EmailBody:    "Bonjour,\n\nVeuillez trouver ci-joint %s %s.\n\nCordialement,\n%s",
	},
	"ar": {
		TitleInvoice: "فاتورة", TitleQuote: "عرض سعر", TitleCreditNote: "إشعار دائن",
		TitleSalesOrder: "تأكيد الطلب", TitleShipment: "قائمة التعبئة",
		Number: "الرقم", Date: "التاريخ", DueDate: "تاريخ الاستحقاق", ValidUntil: "صالح حتى", Reference: "المرجع",
		Seller: "من", BillTo: "فاتورة إلى", VATNumber: "الرقم الضريبي", RegistrationNumber: "رقم السجل التجاري",
		Email: "البريد الإلكتروني", Phone: "الهاتف", Website: "الموقع الإلكتروني",
		Description: "الوصف", Quantity: "الكمية", UnitPrice: "سعر الوحدة", Discount: "الخصم",
		VATRateCol: "نسبة الضريبة", Amount: "المبلغ",
		Subtotal: "المجموع قبل الضريبة", VAT: "ضريبة القيمة المضافة", Total: "الإجمالي شامل الضريبة",
		VATSummaryT: "ملخص ضريبة القيمة المضافة", Rate: "النسبة", TaxableBase: "المبلغ الخاضع للضريبة",
		Paid: "المدفوع", Credited: "المبلغ الدائن", Remaining: "المبلغ المستحق",
		PaymentInstr: "تعليمات الدفع", Notes: "ملاحظات", PageOf: "صفحة %d من %d",
		ShipTo: "الشحن إلى", DateLayout: "2006-01-02", Field: "%s: %s",
		EmailSubject: "%s %s من %s",
		EmailBody:    "مرحبًا،\n\nتجدون مرفقًا %s %s.\n\nمع أطيب التحيات،\n%s",
	},
}

// Sides are the catalogues a document in l shows its labels from: one,
// or English and Arabic for bilingual.
func (l Lang) Sides() []Lang {
	switch l {
	case "bilingual":
		return []Lang{"en", "ar"}
	case "fr", "ar":
		return []Lang{l}
	}
	return []Lang{"en"}
}

// Text is label k in l (bilingual and unknown languages: English), with args
// put in its verbs.
func (l Lang) Text(k Label, args ...any) string {
	s := catalogue[l.Sides()[0]][k]
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// Title is the label of a document of kind k.
func (k Kind) Title() Label {
	return map[Kind]Label{Invoice: TitleInvoice, Quote: TitleQuote, CreditNote: TitleCreditNote,
		SalesOrder: TitleSalesOrder, Shipment: TitleShipment}[k]
}

// RTL reports whether l is written right to left.
func (l Lang) RTL() bool { return l == "ar" }
