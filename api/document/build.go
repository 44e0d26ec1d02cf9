package document

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Source reads the records a document is made of as GET answers them, in
// the caller's workspace: the core's read side, never a query of its own.
type Source interface {
	Get(ctx context.Context, r *resource.Resource, id string) ([]byte, error)
	// Many reads several records of r in one go, in the order asked; an id
	// not found answers nil (a line's item, deleted since).
	Many(ctx context.Context, r *resource.Resource, ids []string) ([][]byte, error)
	// Children lists a record's sub-resource rows (a client's addresses).
	Children(ctx context.Context, r *resource.Resource, parentID string) ([]byte, error)
}

// Profile is what the seller's company profile gives every document.
type Profile struct {
	Seller              Party
	Logo                *Logo
	Lang                Lang // the company's default document language; "" for none
	PaymentInstructions string
	Footer              string
}

// Kinds are the resources a document is made of, by their /v1 name.
var Kinds = map[*resource.Resource]Kind{
	resource.Invoices: Invoice, resource.Quotes: Quote, resource.CreditNotes: CreditNote,
	resource.SalesOrders: SalesOrder, resource.Shipments: Shipment,
}

// ParseLang checks a requested language: "" is none (the default applies);
// anything not in Langs is a 400 naming lang.
func ParseLang(s string) (Lang, error) {
	if s == "" || slices.Contains(Langs, Lang(s)) {
		return Lang(s), nil
	}
	names := make([]string, len(Langs))
	for i, l := range Langs {
		names[i] = string(l)
	}
	return "", apierr.Invalid("lang", "lang must be one of %s; got %q", strings.Join(names, ", "), s)
}

// rec is a record as GET answers it.
type rec map[string]any

func decode(b []byte) (rec, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m rec
	if err := d.Decode(&m); err != nil {
		return nil, apierr.Internal(err)
	}
	return m, nil
}

func (r rec) str(k string) string { s, _ := r[k].(string); return s }

func (r rec) int(k string) int64 {
	n, _ := r[k].(json.Number)
	i, _ := n.Int64()
	return i
}

func (r rec) rows(k string) []rec {
	xs, _ := r[k].([]any)
	out := make([]rec, 0, len(xs))
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func day(s string) time.Time {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// builder makes one document from its source.
type builder struct {
	ctx context.Context
	src Source
}

// get reads a record the document refers to; one that is gone (a deleted
// item) is nil, the document then shows what the record itself stored.
func (b *builder) get(r *resource.Resource, id string) (rec, error) {
	if id == "" {
		return nil, nil
	}
	raw, err := b.src.Get(b.ctx, r, id)
	if e, ok := apierr.As(err); ok && e.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(raw)
}

// Build makes the document of record id of r (one of Kinds) in lang ("":
// the client's preferred_language, then the company's, then en). The
// record is read through src, so a record of another workspace is a 404.
func Build(ctx context.Context, src Source, r *resource.Resource, id string, lang Lang, prof Profile) (*Doc, error) {
	kind, ok := Kinds[r]
	if !ok {
		return nil, apierr.NotFound("document")
	}
	raw, err := src.Get(ctx, r, id)
	if err != nil {
		return nil, err
	}
	m, err := decode(raw)
	if err != nil {
		return nil, err
	}
	b := &builder{ctx: ctx, src: src}
	d := &Doc{Kind: kind, Number: m.str("number"), Currency: m.str("currency_code"), Status: m.str("status"),
		Date: day(m.str("date")), DueDate: day(m.str("due_date")), Notes: m.str("notes"),
		Seller: prof.Seller, Logo: prof.Logo, PaymentInstructions: prof.PaymentInstructions, Footer: prof.Footer}

	// Who buys: the document's client; a packing slip's is its order's.
	party, shipTo := m, ""
	var lines []shape.DocLine
	switch kind {
	case Invoice:
		d.PaidCents, d.CreditedCents, d.RemainingCents = m.int("paid_cents"), m.int("credited_cents"), m.int("remaining_cents")
		if d.Reference, err = b.number(resource.Quotes, m.str("quote_id")); err != nil {
			return nil, err
		}
		lines = docLines(m)
	case Quote:
		lines = docLines(m)
	case CreditNote:
		if d.Reference, err = b.number(resource.Invoices, m.str("invoice_id")); err != nil {
			return nil, err
		}
		lines = docLines(m)
	case SalesOrder:
		lines = orderLines(m.rows("lines"))
	case Shipment:
		order, err := b.get(resource.SalesOrders, m.str("sales_order_id"))
		if err != nil {
			return nil, err
		}
		if order == nil {
			order = rec{}
		}
		party, shipTo = order, order.str("shipping_address")
		d.Reference, d.Currency = order.str("number"), order.str("currency_code")
		d.Date = day(m.str("shipped_at"))
		lines = shippedLines(m.rows("lines"), order.rows("lines"))
	}

	client, err := b.get(resource.Clients, party.str("client_id"))
	if err != nil {
		return nil, err
	}
	if d.Buyer, err = b.buyer(party, client, shipTo); err != nil {
		return nil, err
	}
	d.Lang = lang
	if d.Lang == "" {
		d.Lang = DefaultLang(client.str("preferred_language"), string(prof.Lang))
	}
	if err := b.describe(lines, d.Lang); err != nil {
		return nil, err
	}
	for _, l := range lines {
		d.Lines = append(d.Lines, Line{Description: l.Description, QtyMilli: l.QtyMilli, UnitPriceCents: l.UnitPriceCents,
			DiscountBP: l.DiscountBP, VATRateBP: l.VATRateBasisPoints, AmountCents: l.AmountExclVATCents})
	}
	if kind != Shipment { // a packing slip shows no prices
		d.SubtotalCents, d.VATCents, d.TotalCents = m.int("amount_excl_vat_cents"), m.int("vat_amount_cents"), m.int("amount_incl_vat_cents")
		for _, s := range money.ByRate(lines) {
			d.VATSummary = append(d.VATSummary, VATRate{RateBP: s.RateBP, BaseCents: s.ExclVATCents, VATCents: s.VATCents})
		}
	}
	return d, nil
}

// DefaultLang is a document's language when none is asked for: the
// client's preferred_language, else the company's default_language, else
// English (the PDF, and the email that sends it).
func DefaultLang(client, company string) Lang {
	for _, l := range []Lang{Lang(client), Lang(company)} {
		if slices.Contains(Langs, l) {
			return l
		}
	}
	return "en"
}

// number is the number of the record a document follows ("" for none).
func (b *builder) number(r *resource.Resource, id string) (string, error) {
	m, err := b.get(r, id)
	if m == nil || err != nil {
		return "", err
	}
	return m.str("number"), nil
}

// buyer is the document's client: the name the document stored, its
// default billing address where it has one (a packing slip: where the
// order ships), else the client's address.
func (b *builder) buyer(doc, client rec, shipTo string) (Party, error) {
	p := Party{Name: doc.str("client_name")}
	if client == nil {
		p.Address = shipTo
		return p, nil
	}
	p.Name = cmpOr(p.Name, client.str("name"))
	p.Email, p.Phone, p.Address = client.str("email"), client.str("phones"), client.str("address")
	p.VATNumber = cmpOr(client.str("vat_number"), client.str("tax_id"))
	p.Country = client.str("country")
	if shipTo != "" {
		p.Address = shipTo
		return p, nil
	}
	raw, err := b.src.Children(b.ctx, resource.Addresses, client.str("id"))
	if err != nil {
		return p, err
	}
	page, err := decode(raw)
	if err != nil {
		return p, err
	}
	for _, a := range page.rows("data") {
		if a["default_billing"] == true && a.str("address") != "" {
			p.Address = a.str("address")
			p.Country = cmpOr(a.str("country"), p.Country)
			break
		}
	}
	return p, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// describe puts each line's item translation in lang where the item has
// one; bilingual shows the stored description and the Arabic name. The
// items are read in one go: a 200-line invoice is not 200 reads.
func (b *builder) describe(lines []shape.DocLine, lang Lang) error {
	var ids []string
	for _, l := range lines {
		if l.ItemID != nil && *l.ItemID != "" && !slices.Contains(ids, *l.ItemID) {
			ids = append(ids, *l.ItemID)
		}
	}
	raws, err := b.src.Many(b.ctx, resource.Items, ids)
	if err != nil {
		return err
	}
	items := make(map[string]rec, len(ids))
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		if items[ids[i]], err = decode(raw); err != nil {
			return err
		}
	}
	for i := range lines {
		l := &lines[i]
		if l.ItemID == nil {
			continue
		}
		switch t := translation(items[*l.ItemID], lang); {
		case t == "":
		case lang == "bilingual":
			if l.Description == "" {
				l.Description = t
			} else if t != l.Description {
				l.Description += " / " + t
			}
		default:
			l.Description = t
		}
	}
	return nil
}

// translation is the item's name in lang ("ar" for bilingual), from
// translations {"fr": {"name": "..."}} (or {"fr": "..."}); "" when none.
func translation(item rec, lang Lang) string {
	if item == nil {
		return ""
	}
	if lang == "bilingual" {
		lang = "ar"
	}
	ts, _ := item["translations"].(map[string]any)
	switch t := ts[string(lang)].(type) {
	case string:
		return strings.TrimSpace(t)
	case map[string]any:
		s, _ := t["name"].(string)
		return strings.TrimSpace(s)
	}
	return ""
}

// docLines are an invoice's, quote's or credit note's lines as stored.
func docLines(m rec) []shape.DocLine {
	var out []shape.DocLine
	for _, l := range m.rows("lines") {
		out = append(out, line(l))
	}
	return out
}

func line(l rec) shape.DocLine {
	d := shape.DocLine{Description: l.str("description"), QtyMilli: l.int("qty_milli"), UnitPriceCents: l.int("unit_price_cents"),
		VATRateBasisPoints: l.int("vat_rate_bp"), DiscountBP: l.int("discount_bp"),
		AmountExclVATCents: l.int("amount_excl_vat_cents"), VATAmountCents: l.int("vat_amount_cents"), AmountInclVATCents: l.int("amount_incl_vat_cents")}
	if id := l.str("item_id"); id != "" {
		d.ItemID = &id
	}
	return d
}

// orderLines are a sales order's lines (no discount on them).
func orderLines(rows []rec) []shape.DocLine {
	out := make([]shape.DocLine, 0, len(rows))
	for _, l := range rows {
		out = append(out, line(l))
	}
	return out
}

// shippedLines are what a shipment carries: each order line's description
// and item with the quantity shipped, and no prices.
func shippedLines(shipped, order []rec) []shape.DocLine {
	byID := map[string]rec{}
	for _, l := range order {
		byID[l.str("id")] = l
	}
	out := make([]shape.DocLine, 0, len(shipped))
	for _, s := range shipped {
		ol := byID[s.str("order_line_id")]
		d := shape.DocLine{Description: cmpOr(ol.str("description"), ol.str("sku")), QtyMilli: s.int("qty_milli")}
		if id := ol.str("item_id"); id != "" {
			d.ItemID = &id
		}
		out = append(out, d)
	}
	return out
}
