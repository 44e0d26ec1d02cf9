// Package writes implements the business rules of every write, bound to
// their operations in one table (operations). Every write runs in one
// transaction (tx.go) that also renders its answer and appends its events.
package writes

import (
	"context"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Request is one validated write.
type Request struct {
	Ctx       context.Context
	DB        *database.DB
	Records   *records.Engine
	Principal *access.Principal
	Resource  *resource.Resource
	Op        resource.Op
	// Body is the validated body; nil for bulk operations and shipment
	// events, whose Raw the operation splits.
	Body Values
	Raw  map[string]any
	// ID is the path's :id (the record, or the parent of a sub-resource);
	// ChildID the sub-resource's own id (address_id).
	ID, ChildID string
	RequestID   string
	// System names the job of a write no request made (api/clock): its events' actor.
	System string
	// Idem keeps the answer of a POST with an Idempotency-Key in its transaction.
	Idem *idempotency.Pending
	// touched are the other records the running transaction changed (see touch).
	touched []touched
	// registered: the running transaction is a registered event writer of
	// the workspace (PostgreSQL; tryTx).
	registered bool
	// deliveries counts the webhook deliveries the transaction stored,
	// mails the messages it put in the outbox.
	deliveries, mails int
}

// Values is a validated body.
type Values = body.Values

// Result is what the client gets: a status and the JSON body.
type Result struct {
	Status int
	Body   []byte
	// Secret is shown to this caller once and kept nowhere, so not in Body
	// (a new gift card's code).
	Secret string
}

// Func implements one write operation.
type Func func(*Request) (Result, error)

type key struct {
	r    *resource.Resource
	k    resource.OpKind
	name string // an Action's name
}

// operations is every write with rules of its own; an action or a delete
// not listed is the generic move its declaration describes (Lookup).
var operations = map[key]Func{
	{resource.Addresses, resource.Create, ""}:          createAddress,
	{resource.Addresses, resource.Update, ""}:          updateAddress,
	{resource.Bills, resource.Create, ""}:              createDocument,
	{resource.Bills, resource.Update, ""}:              updateDocument,
	{resource.Bills, resource.Action, "void"}:          voidUnpaid(resource.BillPayments, "", nil),
	{resource.Categories, resource.Create, ""}:         saveCategory,
	{resource.Categories, resource.Update, ""}:         saveCategory,
	{resource.Clients, resource.Create, ""}:            createClient,
	{resource.Company, resource.Update, ""}:            updateCompany,
	{resource.Clients, resource.Update, ""}:            updateClient,
	{resource.CreditNotes, resource.Create, ""}:        createDocument,
	{resource.CreditNotes, resource.Update, ""}:        updateDocument,
	{resource.CreditNotes, resource.Action, "apply"}:   applyCreditNote,
	{resource.GiftCards, resource.Create, ""}:          issueGiftCard,
	{resource.GiftCards, resource.Action, "adjust"}:    adjustGiftCard,
	{resource.Invoices, resource.Create, ""}:           createDocument,
	{resource.Invoices, resource.Update, ""}:           updateDocument,
	{resource.Invoices, resource.Action, "void"}:       voidUnpaid(resource.InvoicePayments, "; credit it instead", uncredited),
	{resource.Invoices, resource.Delete, ""}:           deleteInvoice,
	{resource.Items, resource.Create, ""}:              func(q *Request) (Result, error) { return saveOne(q, false, "") },
	{resource.Items, resource.Upsert, ""}:              func(q *Request) (Result, error) { return saveOne(q, true, "") },
	{resource.Items, resource.Update, ""}:              func(q *Request) (Result, error) { return saveOne(q, false, q.ID) },
	{resource.InvoicePayments, resource.Create, ""}:    recordInvoicePayment,
	{resource.BillPayments, resource.Create, ""}:       recordBillPayment,
	{resource.Products, resource.Create, ""}:           func(q *Request) (Result, error) { return saveOne(q, false, "") },
	{resource.Products, resource.Upsert, ""}:           func(q *Request) (Result, error) { return saveOne(q, true, "") },
	{resource.Products, resource.Update, ""}:           func(q *Request) (Result, error) { return saveOne(q, false, q.ID) },
	{resource.Products, resource.Bulk, ""}:             bulkProducts,
	{resource.PromotionCodes, resource.Create, ""}:     addPromotionCode,
	{resource.Quotes, resource.Create, ""}:             createDocument,
	{resource.Quotes, resource.Update, ""}:             updateDocument,
	{resource.Quotes, resource.Action, "invoice"}:      invoiceQuote,
	{resource.SalesOrders, resource.Action, "invoice"}: invoiceSalesOrder,
	{resource.Returns, resource.Create, ""}:            openReturn,
	{resource.Returns, resource.Action, "refund"}:      refundReturn,
	{resource.Returns, resource.Action, "reject"}:      rejectReturn,
	{resource.SalesOrders, resource.Create, ""}:        createSalesOrder,
	{resource.SalesOrders, resource.Update, ""}:        updateSalesOrder,
	{resource.SalesOrders, resource.Action, "cancel"}:  cancelSalesOrder,
	{resource.Shipments, resource.Create, ""}:          createShipment,
	{resource.Shipments, resource.Update, ""}:          updateShipment,
	{resource.ShipmentEvents, resource.Create, ""}:     addTrackingEvents,
	{resource.Stores, resource.Create, ""}:             createStore,
	{resource.Stores, resource.Update, ""}:             updateStore,
	{resource.Vendors, resource.Create, ""}:            createVendor,
	{resource.Vendors, resource.Update, ""}:            updateVendor,
	{resource.Promotions, resource.Create, ""}:         createPromotion,
	{resource.Promotions, resource.Update, ""}:         updatePromotion,
	{resource.Promotions, resource.Action, "archive"}:  archivePromotion,
}

// Lookup finds the implementation of an operation: a registered one, or
// for an action or a delete the generic move its declaration describes.
func Lookup(r *resource.Resource, op resource.Op) (Func, bool) {
	name := ""
	if op.Kind == resource.Action {
		name = op.Name
	}
	if f, ok := operations[key{r, op.Kind, name}]; ok {
		return f, true
	}
	switch {
	case op.Kind == resource.Action && op.Emails:
		return emailing, true
	case op.Kind == resource.Action && op.To != "":
		return transition, true
	case op.Kind == resource.Delete:
		return remove, true
	}
	return nil, false
}

// Workspace is the caller's workspace as the records engine sees it.
func (q *Request) Workspace() records.Workspace {
	return records.Workspace{ID: q.Principal.Workspace.ID, Commerce: q.Principal.Workspace.Commerce()}
}
