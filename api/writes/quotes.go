package writes

import (
	"context"
	"slices"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/quote"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// quoteKind is how quotes are made and edited (documents.go).
var quoteKind = &docKind{
	r: resource.Quotes, party: "client", numbers: numbering.Quotes,
	create: func(tx *ent.Tx) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.QuoteMutation](tx.Quote.Create())
	},
	update: func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error) {
		return build[*ent.QuoteMutation](tx.Quote.UpdateOneID(id))
	},
}

// invoiceQuote makes a draft invoice of an accepted quote and links both
// ways. The quote's row is locked by the state check, so two concurrent
// calls make one invoice.
// makeInvoice makes a draft invoice of lines for p, with notes and the
// record it was made of (link: "quote_id"), and returns its id. Priced
// again by today's rules rather than copied: an invoice's money is always
// computed from its lines.
func (q *Request) makeInvoice(tx *ent.Tx, p party, lines []shape.DocLine, notes any, link string) (string, error) {
	tot, err := money.Price(lines)
	if err != nil {
		return "", err
	}
	invID, err := q.insertDocument(tx, docKinds[resource.Invoices], newDocument{party: p, lines: lines, totals: tot,
		set: func(m entgo.Mutation) error { return setFields(m, map[string]any{"notes": notes, link: q.ID}) }})
	if err == nil {
		q.made(resource.Invoices, invID)
	}
	return invID, err
}

func invoiceQuote(q *Request) (Result, error) {
	// It writes an invoice: the key's role must write invoices too.
	if err := q.Principal.Gate(resource.Invoices, resource.Write); err != nil {
		return Result{}, err
	}
	return q.move(func(tx *ent.Tx, _ string) error {
		qu, err := tx.Quote.Query().Where(quote.ID(q.ID)).
			Select(quote.FieldClientID, quote.FieldClientName, quote.FieldCurrencyCode, quote.FieldLines, quote.FieldNotes).Only(q.Ctx)
		if err != nil {
			return err
		}
		invID, err := q.makeInvoice(tx, party{id: qu.ClientID, name: qu.ClientName, currency: qu.CurrencyCode},
			slices.Clone(qu.Lines), qu.Notes, "quote_id")
		if err != nil {
			return err
		}
		return tx.Quote.Update().Where(quote.ID(q.ID)).SetInvoiceID(invID).Exec(q.Ctx)
	})
}
