package writes

import (
	"fmt"
	"net/http"
	"slices"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/customer"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/invoicepayment"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

func init() {
	register(resource.Invoices, resource.Create, createInvoice)
	register(resource.Invoices, resource.Update, updateInvoice)
	registerAction(resource.Invoices, "void", voidInvoice)
}

var invoiceNumbers = series{"invoices", "INV"}

// docFields are the body fields a document stores as they come; lines,
// number and the party are the operation's.
var docOwnFields = []string{"lines", "number", "client_id", "client_name", "vendor_id", "vendor_name", "currency_code"}

// pricedLines reads and prices a body's lines.
func pricedLines(v Values) ([]shape.DocLine, docTotals, error) {
	raw, _ := v.Objects("lines")
	lines := make([]shape.DocLine, len(raw))
	for i, l := range raw {
		p := fmt.Sprintf("lines[%d]", i)
		d := shape.DocLine{}
		if id, ok := l.String("item_id"); ok {
			d.ItemID = &id
		}
		d.Description, _ = l.String("description")
		d.QtyMilli, _ = l.Int("qty_milli")
		d.UnitPriceCents, _ = l.Int("unit_price_cents")
		d.VATRateBasisPoints, _ = l.Int("vat_rate_bp")
		d.DiscountBP, _ = l.Int("discount_bp")
		if err := priceLine(&d, d.DiscountBP, p); err != nil {
			return nil, docTotals{}, err
		}
		lines[i] = d
	}
	t, err := sumLines(lines)
	return lines, t, err
}

// checkItems refuses lines naming an item that is not the workspace's.
func (q *Request) checkItems(tx *ent.Tx, lines []shape.DocLine) error {
	var ids []string
	for _, l := range lines {
		if l.ItemID != nil && !slices.Contains(ids, *l.ItemID) {
			ids = append(ids, *l.ItemID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := tx.Item.Query().Where(item.IDIn(ids...), item.WorkspaceID(q.Workspace().ID)).IDs(q.Ctx)
	if err != nil {
		return err
	}
	for i, l := range lines {
		if l.ItemID != nil && !slices.Contains(found, *l.ItemID) {
			return apierr.Invalid(fmt.Sprintf("lines[%d].item_id", i), "no such item in this workspace")
		}
	}
	return nil
}

// clientParty resolves a document's client: client_id must be the
// workspace's, and gives the name and currency unless the body sets them.
func (q *Request) clientParty(tx *ent.Tx) (id *string, name, currency string, err error) {
	name, _ = q.Body.String("client_name")
	currency, _ = q.Body.String("currency_code")
	cid, ok := q.Body.String("client_id")
	if !ok {
		return nil, name, currency, nil
	}
	c, err := tx.Customer.Query().Where(customer.ID(cid), customer.WorkspaceID(q.Workspace().ID)).
		Select(customer.FieldName, customer.FieldCurrencyCode).Only(q.Ctx)
	if ent.IsNotFound(err) {
		return nil, "", "", apierr.Invalid("client_id", "no such client in this workspace")
	} else if err != nil {
		return nil, "", "", err
	}
	if name == "" {
		name = c.Name
	}
	if currency == "" {
		currency = c.CurrencyCode
	}
	return &cid, name, currency, nil
}

// docNumber is the body's number, which must be free in the workspace, or
// the next one of s.
func (q *Request) docNumber(tx *ent.Tx, s series, exists func(num string) (bool, error)) (string, error) {
	if num, ok := q.Body.String("number"); ok {
		// Callers' numbers take turns on the series' counter, so two
		// concurrent creates of one number cannot both pass the check.
		if err := serialize(q.Ctx, tx, q.Workspace().ID, s.name); err != nil {
			return "", err
		}
		taken, err := exists(num)
		if err != nil {
			return "", err
		}
		if taken {
			return "", duplicate("number", "the number %s is already used in this workspace", num)
		}
		return num, nil
	}
	nums, err := s.allocate(q.Ctx, tx, q.Workspace().ID, 1, func(batch []string) (map[string]bool, error) {
		used := map[string]bool{}
		for _, n := range batch {
			ok, err := exists(n)
			if err != nil {
				return nil, err
			}
			used[n] = ok
		}
		return used, nil
	})
	if err != nil {
		return "", err
	}
	return nums[0], nil
}

func invoiceEnum(column, value string) entgo.Value {
	if column == invoice.FieldStatus {
		return invoice.Status(value)
	}
	return value
}

func createInvoice(q *Request) (Result, error) {
	lines, tot, err := pricedLines(q.Body)
	if err != nil {
		return Result{}, err
	}
	ws := q.Workspace().ID
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		clientID, name, currency, err := q.clientParty(tx)
		if err != nil {
			return err
		}
		if clientID == nil && name == "" {
			return apierr.Invalid("client_id", "an invoice needs a client: client_id, or client_name alone")
		}
		if err := q.checkItems(tx, lines); err != nil {
			return err
		}
		number, err := q.docNumber(tx, invoiceNumbers, func(n string) (bool, error) {
			return tx.Invoice.Query().Where(invoice.WorkspaceID(ws), invoice.Number(n)).Exist(q.Ctx)
		})
		if err != nil {
			return err
		}
		if currency == "" {
			currency = "EUR"
		}
		date, ok := q.Body.String("date")
		if !ok {
			date = today()
		}
		c := tx.Invoice.Create().SetWorkspaceID(ws).SetNumber(number).SetDate(date).SetCurrencyCode(currency).
			SetNillableClientID(clientID).SetClientName(name).SetLines(lines).
			SetAmountExclVatCents(tot.excl).SetVatAmountCents(tot.vat).SetAmountInclVatCents(tot.incl).
			SetPaidCents(0).SetRemainingCents(tot.incl)
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, invoiceEnum, append(docOwnFields, "date")...); err != nil {
			return err
		}
		row, err := c.Save(q.Ctx)
		if err != nil {
			return err
		}
		id = row.ID
		return nil
	}, func() Answer { return record(http.StatusCreated, resource.Invoices, id, "") })
}

// lateFields are what may still change once an invoice has left draft.
var lateFields = []string{"notes", "due_date"}

func updateInvoice(q *Request) (Result, error) {
	var lines []shape.DocLine
	var tot docTotals
	if q.Body.Has("lines") {
		var err error
		if lines, tot, err = pricedLines(q.Body); err != nil {
			return Result{}, err
		}
	}
	ws := q.Workspace().ID
	return q.inTx(func(tx *ent.Tx) error {
		st, err := q.state(tx)
		if err != nil {
			return err
		}
		if st != "draft" {
			for name := range q.Body.Map() {
				if !slices.Contains(lateFields, name) {
					return stateConflict("a %s invoice can only change notes and due_date; %s changes while it is a draft", st, name)
				}
			}
			if st == "void" {
				return stateConflict("a void invoice cannot be edited")
			}
		}
		u := tx.Invoice.UpdateOneID(q.ID)
		if q.Body.Has("client_id") || q.Body.Has("client_name") || q.Body.Has("currency_code") {
			clientID, name, currency, err := q.clientParty(tx)
			if err != nil {
				return err
			}
			if q.Body.IsNull("client_id") {
				u.ClearClientID()
			} else if clientID != nil {
				u.SetClientID(*clientID)
			}
			if name != "" {
				u.SetClientName(name)
			}
			if currency != "" {
				u.SetCurrencyCode(currency)
			}
		}
		if q.Body.Has("lines") {
			if err := q.checkItems(tx, lines); err != nil {
				return err
			}
			u.SetLines(lines).SetAmountExclVatCents(tot.excl).SetVatAmountCents(tot.vat).
				SetAmountInclVatCents(tot.incl).SetRemainingCents(tot.incl)
		}
		if num, ok := q.Body.String("number"); ok {
			taken, err := tx.Invoice.Query().Where(invoice.WorkspaceID(ws), invoice.Number(num), invoice.IDNEQ(q.ID)).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if taken {
				return duplicate("number", "the number %s is already used in this workspace", num)
			}
			u.SetNumber(num)
		}
		if err := applyBody(u.Mutation(), q.Op.Body, q.Body, invoiceEnum, docOwnFields...); err != nil {
			return err
		}
		return u.Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, resource.Invoices, q.ID, "") })
}

// voidInvoice refuses once money was received: a completed payment must
// be refunded or credited, not hidden by a void.
func voidInvoice(q *Request) (Result, error) {
	return q.move(func(tx *ent.Tx, _ string) error {
		paid, err := tx.InvoicePayment.Query().
			Where(invoicepayment.InvoiceID(q.ID), invoicepayment.StatusEQ(invoicepayment.StatusCompleted)).Exist(q.Ctx)
		if err != nil {
			return err
		}
		if paid {
			return stateConflict("an invoice with a completed payment cannot be voided; credit it instead")
		}
		// A void invoice is owed nothing.
		return tx.Invoice.Update().Where(invoice.ID(q.ID)).SetRemainingCents(0).Exec(q.Ctx)
	})
}
