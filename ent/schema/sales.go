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

// Customer is the API's "client": a customer of the workspace. ent reserves
// the name Client for its own entry point, so only the Go name differs.
type Customer struct{ ent.Schema }

func (Customer) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "clients"}}
}
func (Customer) Mixin() []ent.Mixin { return []ent.Mixin{scoped("cli")} }
func (Customer) Fields() []ent.Field {
	return append(contactFields(), externalRef()...)
}

// externalRef is the upsert key of a record from another system.
func externalRef() []ent.Field {
	return []ent.Field{
		field.String("ext_system").Optional().Nillable(),
		field.String("ext_connection_id").Optional().Nillable(),
		field.String("ext_external_id").Optional().Nillable(),
		// system \x1f connection \x1f id: one unique key even when connection is null.
		field.String("ext_key").Optional().Nillable(),
	}
}

// externalRefIndex finds a record by its ref. Partial: most records have
// no external_ref, and an index entry per record would cost every create a
// page write for nothing. A lookup by ext_key = ? implies it is not null,
// so both databases still use it.
func externalRefIndex() ent.Index {
	return index.Fields("workspace_id", "ext_key").Unique().Annotations(entsql.IndexWhere("ext_key IS NOT NULL"))
}
func (Customer) Edges() []ent.Edge {
	return []ent.Edge{edge.To("addresses", Address.Type)}
}
func (Customer) Indexes() []ent.Index { return []ent.Index{externalRefIndex()} }

// contactFields are the client body's fields, shared by clients and addresses.
func contactFields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("email").Default(""),
		field.String("phones").Default(""),
		field.String("contact").Default(""),
		field.String("address").Default(""),
		currency(),
		field.String("payment_terms_code").Default(""),
		field.String("notes").Default(""),
		field.Bool("active").Default(true),
		language(),
	}
}

// Address is an entry of a client's address book.
type Address struct{ ent.Schema }

func (Address) Mixin() []ent.Mixin { return []ent.Mixin{scoped("adr")} }
func (Address) Fields() []ent.Field {
	return append([]ent.Field{
		field.String("client_id").Immutable(),
		field.Enum("kind").Values(enum.AddressKind...).Default("billing"),
		field.Bool("default_billing").Default(false),
		field.Bool("default_shipping").Default(false),
	}, contactFields()...)
}

// Sub-resource lists read children by their parent.
func (Address) Indexes() []ent.Index { return []ent.Index{index.Fields("client_id", "created_at")} }
func (Address) Edges() []ent.Edge {
	return []ent.Edge{edge.From("client", Customer.Type).Ref("addresses").Field("client_id").Unique().Required().Immutable()}
}

// document holds what invoices, quotes, credit notes and bills share.
func document() []ent.Field {
	return append([]ent.Field{
		field.String("number").NotEmpty(),
		field.String("date").Comment("YYYY-MM-DD"),
		field.String("due_date").Optional().Nillable(),
		currency(),
		field.JSON("lines", []shape.DocLine{}).Default([]shape.DocLine{}),
		field.String("notes").Default(""),
	}, totals()...)
}

func party(kind string) []ent.Field {
	return []ent.Field{
		field.String(kind + "_id").Optional().Nillable(),
		field.String(kind + "_name").Default(""),
	}
}

// Invoice is a bill sent to a client.
type Invoice struct{ ent.Schema }

func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{scoped("inv")} }
func (Invoice) Fields() []ent.Field {
	f := append(append(document(), party("client")...), externalRef()...)
	return append(f,
		field.Enum("status").Values(enum.InvoiceStatus...).Default("draft"),
		cents("paid_cents"), cents("remaining_cents"),
		// credited_cents is what applied credit notes took off the balance:
		// remaining = incl - paid - credited, and paid stays payments only.
		cents("credited_cents"),
		// quote_id is the quote the invoice was made from (POST /v1/quotes/{id}/invoice).
		field.String("quote_id").Optional().Nillable(),
		// sales_order_id is the order the invoice was made from (POST /v1/sales-orders/{id}/invoice).
		field.String("sales_order_id").Optional().Nillable(),
	)
}
func (Invoice) Edges() []ent.Edge { return []ent.Edge{edge.To("payments", InvoicePayment.Type)} }
func (Invoice) Indexes() []ent.Index {
	// status, due_date: the overdue sweep finds what became due without a scan.
	// The workspace's status with due_date or date: the dashboard's lists
	// (overdue by age, invoiced in a month) count their rows in the index.
	return []ent.Index{index.Fields("workspace_id", "number"), index.Fields("workspace_id", "client_id"), index.Fields("status", "due_date"), externalRefIndex(),
		index.Fields("workspace_id", "status", "due_date"), index.Fields("workspace_id", "status", "date")}
}

// InvoicePayment is money received against an invoice. external_id is the
// caller's own payment id: recording it twice records it once.
type InvoicePayment struct{ ent.Schema }

func (InvoicePayment) Mixin() []ent.Mixin { return []ent.Mixin{scoped("ipay")} }
func (InvoicePayment) Fields() []ent.Field {
	f := append([]ent.Field{
		field.String("invoice_id").Immutable(),
		field.String("external_id").NotEmpty(),
		field.String("number").Default(""),
		field.Enum("status").Values(enum.PaymentStatus...).Default("completed"),
		field.String("date"),
		field.String("due_date").Optional().Nillable(),
		currency(),
		cents("remaining_cents"),
		field.String("notes").Default(""),
	}, party("client")...)
	return append(f, totals()...)
}
func (InvoicePayment) Edges() []ent.Edge {
	return []ent.Edge{edge.From("invoice", Invoice.Type).Ref("payments").Field("invoice_id").Unique().Required().Immutable()}
}
func (InvoicePayment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "external_id").Unique(), index.Fields("invoice_id", "created_at")}
}

// Quote is an offer that may become an invoice.
type Quote struct{ ent.Schema }

func (Quote) Mixin() []ent.Mixin { return []ent.Mixin{scoped("quo")} }
func (Quote) Fields() []ent.Field {
	f := append(document(), party("client")...)
	return append(f,
		field.Enum("status").Values(enum.QuoteStatus...).Default("draft"),
		field.String("invoice_id").Optional().Nillable(),
	)
}

// A new or renumbered document checks that its number is free (and a
// number series checks its candidates) by (workspace_id, number).
func (Quote) Indexes() []ent.Index { return []ent.Index{index.Fields("workspace_id", "number")} }

// CreditNote reduces what a client owes.
type CreditNote struct{ ent.Schema }

func (CreditNote) Mixin() []ent.Mixin { return []ent.Mixin{scoped("crn")} }
func (CreditNote) Fields() []ent.Field {
	f := append(document(), party("client")...)
	return append(f,
		field.Enum("status").Values(enum.CreditNoteStatus...).Default("draft"),
		field.String("invoice_id").Optional().Nillable(),
	)
}

// An invoice's page lists the credit notes made against it; numbers are
// checked as a quote's are.
func (CreditNote) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "invoice_id"), index.Fields("workspace_id", "number")}
}

// Vendor is a supplier.
type Vendor struct{ ent.Schema }

func (Vendor) Mixin() []ent.Mixin { return []ent.Mixin{scoped("ven")} }
func (Vendor) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("email").Default(""),
		field.String("phone").Default(""),
		currency(),
		field.String("notes").Default(""),
		language(),
	}
}

// Bill is a vendor's invoice to the workspace.
type Bill struct{ ent.Schema }

func (Bill) Mixin() []ent.Mixin { return []ent.Mixin{scoped("bill")} }
func (Bill) Fields() []ent.Field {
	f := append(document(), party("vendor")...)
	return append(f,
		field.Enum("status").Values(enum.BillStatus...).Default("draft"),
		cents("paid_cents"), cents("remaining_cents"),
	)
}
func (Bill) Edges() []ent.Edge { return []ent.Edge{edge.To("payments", BillPayment.Type)} }

// The dashboard's open bills by due date count their rows in the index;
// numbers are checked as a quote's are.
func (Bill) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "status", "due_date"), index.Fields("workspace_id", "number")}
}

// BillPayment is money paid against a bill; external_id is the caller's id.
type BillPayment struct{ ent.Schema }

func (BillPayment) Mixin() []ent.Mixin { return []ent.Mixin{scoped("bpay")} }
func (BillPayment) Fields() []ent.Field {
	return append([]ent.Field{
		field.String("bill_id").Immutable(),
		field.String("external_id").NotEmpty(),
		field.String("number").Default(""),
		field.Enum("status").Values(enum.PaymentStatus...).Default("completed"),
		field.String("date").Default(""),
		field.String("due_date").Optional().Nillable(),
		currency(),
		cents("amount_incl_vat_cents"),
		cents("remaining_cents"),
	}, party("vendor")...)
}
func (BillPayment) Edges() []ent.Edge {
	return []ent.Edge{edge.From("bill", Bill.Type).Ref("payments").Field("bill_id").Unique().Required().Immutable()}
}
func (BillPayment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "external_id").Unique(), index.Fields("bill_id", "created_at")}
}
