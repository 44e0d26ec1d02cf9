package web

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
)

// docKind is how a resource's records read as a document.
type docKind struct {
	Title      string
	Party      string // "client" or "vendor"
	PartyLabel string // "Bill to"
	Due        string // what due_date means on it
	Balance    bool   // keeps paid and remaining amounts
	Order      bool   // lines ship: ordered and shipped quantities
}

var docKinds = map[*resource.Resource]docKind{
	resource.Invoices:    {Title: "Invoice", Party: "client", PartyLabel: "Bill to", Due: "Due date", Balance: true},
	resource.Quotes:      {Title: "Quote", Party: "client", PartyLabel: "Prepared for", Due: "Valid until"},
	resource.CreditNotes: {Title: "Credit note", Party: "client", PartyLabel: "Credit to", Due: "Due date"},
	resource.Bills:       {Title: "Bill", Party: "vendor", PartyLabel: "From", Due: "Due date", Balance: true},
	resource.SalesOrders: {Title: "Sales order", Party: "client", PartyLabel: "Customer", Order: true},
}

// docLine is one line as the document prints it.
type docLine struct {
	Description, SKU          string
	Item                      shown
	Qty, Unit, Discount, VAT  shown
	Excl, VATAmount, Incl     shown
	Ordered, Shipped, Left    shown // orders
	FullyShipped, NothingLeft bool
	HasDiscount               bool
}

type docTotal struct {
	Label string
	Value shown
	Class string // grand, remaining
}

type docMeta struct {
	Label string
	Value shown
}

// docShipment is one shipment of an order with its tracking timeline.
type docShipment struct {
	Link    shown
	Status  shown
	Meta    []docMeta
	Lines   []docMeta // line description: quantity shipped
	Events  []record
	Package int
}

// docView is a record laid out like the paper document: the money comes
// from the stored record as GET answers it; nothing is computed here but
// what a column adds up for display (shipped of ordered).
type docView struct {
	Kind      docKind
	Number    string
	Status    shown
	Party     shown
	Meta      []docMeta
	Lines     []docLine
	Discounts bool
	Totals    []docTotal
	Notes     string
	Address   string
	Payments  []record // invoice and bill payments, newest first
	Credits   []record // credit notes made against an invoice
	Shipments []docShipment
	Rec       record
}

// documentOf lays out rec when r is a document; nil otherwise. children
// are the sub-resource tables showRecord read (payments).
func (u *UI) documentOf(ctx context.Context, ws *ent.Workspace, r *resource.Resource, rec record, children []subTable) (*docView, error) {
	k, ok := docKinds[r]
	if !ok {
		return nil, nil
	}
	f := func(name string) shown { return show(ws, name, rec.get(name), rec) }
	d := &docView{Kind: k, Number: textOf(rec.get("number")), Status: f("status"), Rec: rec,
		Notes: textOf(rec.get("notes")), Address: textOf(rec.get("shipping_address"))}
	d.Party = f(k.Party + "_id")
	if name := textOf(rec.get(k.Party + "_name")); name != "" {
		if d.Party.Href != "" {
			d.Party.Title = d.Party.Text
		}
		d.Party.Text, d.Party.Class = name, ""
	}
	for _, m := range []struct{ label, name string }{{"Date", "date"}, {k.Due, "due_date"}, {"Currency", "currency_code"},
		{"From quote", "quote_id"}, {"From order", "sales_order_id"}, {"Invoice", "invoice_id"}, {"Store", "channel_id"}, {"Payment", "payment_status"}, {"Shipping", "shipping_status"}} {
		if v := rec.get(m.name); v != nil && v != "" {
			d.Meta = append(d.Meta, docMeta{Label: m.label, Value: f(m.name)})
		}
	}

	lines, _ := objectRows(rec.get("lines"))
	for _, l := range lines {
		l = withCurrency(l, rec)
		g := func(name string) shown { return show(ws, name, l.get(name), l) }
		dl := docLine{Description: textOf(l.get("description")), SKU: textOf(l.get("sku")), Item: g("item_id"),
			Qty: g("qty_milli"), Unit: g("unit_price_cents"), Discount: g("discount_bp"), VAT: g("vat_rate_bp"),
			Excl: g("amount_excl_vat_cents"), VATAmount: g("vat_amount_cents"), Incl: g("amount_incl_vat_cents")}
		if v, ok := l.get("variant_id").(string); ok && v != "" {
			dl.Item = g("variant_id")
		}
		if n, ok := l.get("discount_bp").(json.Number); ok && n.String() != "0" {
			dl.HasDiscount, d.Discounts = true, true
		}
		if k.Order {
			q, _ := l.get("qty_milli").(json.Number)
			s, _ := l.get("shipped_qty_milli").(json.Number)
			qi, _ := q.Int64()
			si, _ := s.Int64()
			dl.Ordered, dl.Shipped = g("qty_milli"), g("shipped_qty_milli")
			dl.Left = showNumber("qty_milli", json.Number(strconv.FormatInt(qi-si, 10)), l)
			dl.FullyShipped, dl.NothingLeft = si >= qi, si >= qi
		}
		d.Lines = append(d.Lines, dl)
	}

	total := func(label, name, class string) {
		if v := rec.get(name); v != nil {
			d.Totals = append(d.Totals, docTotal{Label: label, Value: f(name), Class: class})
		}
	}
	total("Subtotal, excluding VAT", "amount_excl_vat_cents", "")
	total("VAT", "vat_amount_cents", "")
	total("Total", "amount_incl_vat_cents", "grand")
	if k.Balance {
		total("Paid", "paid_cents", "")
		if n, ok := rec.get("credited_cents").(json.Number); ok && n.String() != "0" {
			total("Credited", "credited_cents", "")
		}
		total("Remaining", "remaining_cents", "remaining")
	}

	for _, t := range children {
		if t.Title == "Payments" {
			d.Payments = t.Rows
		}
	}
	id := textOf(rec.get("id"))
	if r == resource.Invoices {
		// Credit notes made against the invoice (the list API has no filter for it).
		notes, err := u.db.Reader.CreditNote.Query().Where(creditnote.WorkspaceID(ws.ID), creditnote.InvoiceID(id)).
			Order(ent.Desc(creditnote.FieldCreatedAt)).Limit(api.MaxLimit).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			b, err := u.core.Records.Get(ctx, resource.CreditNotes, recordsWorkspace(ws), n.ID, "")
			if err != nil {
				return nil, err
			}
			cr, err := decodeRecord(b)
			if err != nil {
				return nil, err
			}
			d.Credits = append(d.Credits, cr)
		}
	}
	if k.Order && access.GatePlan(access.WorkspaceOf(ws), resource.Shipments) == nil {
		_, shps, err := u.list(ctx, ws, resource.Shipments, records.Page{Limit: api.MaxLimit,
			Filters: []records.FilterValue{{Column: "sales_order_id", Value: id}}})
		if err != nil {
			return nil, err
		}
		desc := map[string]string{}
		for _, l := range lines {
			desc[textOf(l.get("id"))] = textOf(l.get("description"))
		}
		for _, s := range shps {
			g := func(name string) shown { return show(ws, name, s.get(name), withCurrency(s, rec)) }
			ds := docShipment{Link: g("id"), Status: g("status")}
			ds.Link.Href = wsURL(ws, "records", resource.Shipments.Name, textOf(s.get("id")))
			ds.Link.Text = textOf(s.get("number"))
			for _, m := range []struct{ label, name string }{{"Shipped", "shipped_at"}, {"Delivered", "delivered_at"},
				{"Carrier", "carrier"}, {"Service", "service"}, {"Tracking", "tracking_no"}, {"Cost", "cost_cents"}} {
				if v := s.get(m.name); v != nil && v != "" {
					ds.Meta = append(ds.Meta, docMeta{Label: m.label, Value: g(m.name)})
				}
			}
			sl, _ := objectRows(s.get("lines"))
			for _, l := range sl {
				name := desc[textOf(l.get("order_line_id"))]
				if name == "" {
					name = textOf(l.get("order_line_id"))
				}
				ds.Lines = append(ds.Lines, docMeta{Label: name, Value: show(ws, "qty_milli", l.get("qty_milli"), l)})
			}
			pk, _ := objectRows(s.get("packages"))
			ds.Package = len(pk)
			ds.Events, _ = objectRows(s.get("events"))
			d.Shipments = append(d.Shipments, ds)
		}
	}
	return d, nil
}
