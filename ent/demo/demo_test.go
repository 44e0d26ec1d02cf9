package demo_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/address"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/category"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
	"github.com/ledgerbase/ledgerbase/ent/customer"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/giftcard"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/payment"
	"github.com/ledgerbase/ledgerbase/ent/promotion"
	"github.com/ledgerbase/ledgerbase/ent/returnrequest"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/ent/shape"
	"github.com/ledgerbase/ledgerbase/ent/shipment"
	"github.com/ledgerbase/ledgerbase/ent/shipmentevent"
	"github.com/ledgerbase/ledgerbase/ent/store"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// seeded is one workspace filled by the generator, shared by the checks.
func seeded(t *testing.T, invoices int, seed uint64) (*database.DB, string, demo.Counts) {
	t.Helper()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(t.Context(), db.Writer, "Demo", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := demo.Run(t.Context(), db, ws.ID, demo.Options{Invoices: invoices, Seed: seed, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return db, ws.ID, counts
}

func TestEveryTableGetsRecordsInProportion(t *testing.T) {
	t.Parallel()
	_, _, c := seeded(t, 400, 1)
	for table, n := range c {
		if n == 0 {
			t.Errorf("no %s", table)
		}
	}
	if c["invoices"] != 400 {
		t.Errorf("%d invoices, want 400", c["invoices"])
	}
	_, _, small := seeded(t, 1000, 1)
	_, _, big := seeded(t, 4000, 1)
	for _, table := range []string{"clients", "quotes", "sales_orders", "bills", "items", "invoice_payments"} {
		if r := float64(big[table]) / float64(small[table]); r < 3 || r > 5.5 {
			t.Errorf("%s: %d for 1000 invoices but %d for 4000", table, small[table], big[table])
		}
	}
}

func TestInvoicesAndBillsBalanceWithTheirPayments(t *testing.T) {
	t.Parallel()
	db, ws, _ := seeded(t, 500, 2)
	ctx := t.Context()
	invs, err := db.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws)).WithPayments().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// An applied credit note counts on its invoice from when it was made.
	notes, err := db.Writer.CreditNote.Query().Where(creditnote.WorkspaceID(ws), creditnote.StatusEQ(creditnote.StatusApplied)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string][]*ent.CreditNote{}
	for _, n := range notes {
		if n.InvoiceID == nil {
			t.Fatalf("%s is applied to no invoice", n.Number)
		}
		applied[*n.InvoiceID] = append(applied[*n.InvoiceID], n)
	}
	statuses := map[invoice.Status]int{}
	for _, inv := range invs {
		statuses[inv.Status]++
		var excl, vat, incl, paid int64
		for _, l := range inv.Lines {
			excl, vat, incl = excl+l.AmountExclVATCents, vat+l.VATAmountCents, incl+l.AmountInclVATCents
			if l.AmountExclVATCents+l.VATAmountCents != l.AmountInclVATCents {
				t.Fatalf("%s: a line's amounts do not add up: %+v", inv.Number, l)
			}
		}
		if excl != inv.AmountExclVatCents || vat != inv.VatAmountCents || incl != inv.AmountInclVatCents {
			t.Fatalf("%s: totals %d/%d/%d, lines say %d/%d/%d", inv.Number, inv.AmountExclVatCents, inv.VatAmountCents, inv.AmountInclVatCents, excl, vat, incl)
		}
		balance := inv.AmountInclVatCents
		var credited int64
		credit := func(before time.Time) {
			for _, n := range applied[inv.ID] {
				if !n.CreatedAt.After(before) && n.CreatedAt.After(inv.CreatedAt.Add(-time.Nanosecond)) && n.AmountInclVatCents > 0 {
					credited += n.AmountInclVatCents
					balance -= n.AmountInclVatCents
					n.AmountInclVatCents = -n.AmountInclVatCents // counted
				}
			}
		}
		sort.Slice(inv.Edges.Payments, func(i, j int) bool { return inv.Edges.Payments[i].CreatedAt.Before(inv.Edges.Payments[j].CreatedAt) })
		for _, p := range inv.Edges.Payments {
			credit(p.CreatedAt)
			if balance < 0 {
				t.Fatalf("%s: credit notes applied beyond its balance: %d", inv.Number, balance)
			}
			if p.Status == "completed" {
				paid += p.AmountInclVatCents
				balance -= p.AmountInclVatCents
			}
			if p.RemainingCents != balance {
				t.Fatalf("%s: payment %s leaves %d, want %d", inv.Number, p.Number, p.RemainingCents, balance)
			}
			if p.AmountExclVatCents+p.VatAmountCents != p.AmountInclVatCents || p.CurrencyCode != inv.CurrencyCode || p.CreatedAt.Before(inv.CreatedAt) {
				t.Fatalf("%s: inconsistent payment %+v", inv.Number, p)
			}
		}
		credit(now)
		if paid != inv.PaidCents || credited != inv.CreditedCents {
			t.Fatalf("%s: paid_cents %d, credited_cents %d; payments add up to %d, applied credit notes to %d",
				inv.Number, inv.PaidCents, inv.CreditedCents, paid, credited)
		}
		want := inv.AmountInclVatCents - paid - credited
		if want < 0 {
			t.Fatalf("%s: %d paid and %d credited of %d", inv.Number, paid, credited, inv.AmountInclVatCents)
		}
		if inv.Status == invoice.StatusVoid {
			want = 0
		}
		if inv.RemainingCents != want {
			t.Fatalf("%s (%s): remaining_cents %d, want %d", inv.Number, inv.Status, inv.RemainingCents, want)
		}
		switch inv.Status {
		case invoice.StatusPaid:
			if inv.RemainingCents != 0 {
				t.Fatalf("%s is paid with %d open", inv.Number, inv.RemainingCents)
			}
		case invoice.StatusPartiallyPaid:
			if paid+credited == 0 || inv.RemainingCents == 0 {
				t.Fatalf("%s is partially paid with paid %d, open %d", inv.Number, paid, inv.RemainingCents)
			}
		case invoice.StatusOverdue: // past due with money open, paid in part or not at all
			if inv.RemainingCents == 0 {
				t.Fatalf("%s is overdue with nothing open", inv.Number)
			}
		default:
			if paid != 0 || credited != 0 {
				t.Fatalf("%s is %s but has %d paid and %d credited", inv.Number, inv.Status, paid, credited)
			}
		}
		if (inv.Status == invoice.StatusSent || inv.Status == invoice.StatusPartiallyPaid) && inv.RemainingCents > 0 &&
			inv.DueDate != nil && *inv.DueDate < now.Format("2006-01-02") {
			t.Fatalf("%s is %s past its due date %s: the overdue sweep would move it", inv.Number, inv.Status, *inv.DueDate)
		}
		if inv.Status == invoice.StatusOverdue && inv.DueDate != nil && *inv.DueDate >= now.Format("2006-01-02") {
			t.Fatalf("%s is overdue before its due date %s", inv.Number, *inv.DueDate)
		}
	}
	for _, s := range []invoice.Status{"sent", "paid", "partially_paid", "overdue", "void"} {
		if statuses[s] == 0 {
			t.Errorf("no %s invoice among %v", s, statuses)
		}
	}
	for _, n := range notes {
		if n.AmountInclVatCents > 0 {
			t.Errorf("%s is applied to %s, which does not count it", n.Number, *n.InvoiceID)
		}
	}
	if len(notes) == 0 {
		t.Error("no applied credit note")
	}
	bills, err := db.Writer.Bill.Query().Where(bill.WorkspaceID(ws)).WithPayments().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bills {
		var paid int64
		for _, p := range b.Edges.Payments {
			if p.Status == "completed" {
				paid += p.AmountInclVatCents
			}
		}
		if paid != b.PaidCents || (b.Status != bill.StatusVoid && b.RemainingCents != b.AmountInclVatCents-paid) {
			t.Fatalf("%s (%s): paid %d remaining %d of %d; payments add up to %d", b.Number, b.Status, b.PaidCents, b.RemainingCents, b.AmountInclVatCents, paid)
		}
		if b.Status == bill.StatusPaid && b.RemainingCents != 0 {
			t.Fatalf("%s is paid with %d open", b.Number, b.RemainingCents)
		}
	}
}

func TestOrdersMatchTheirShipmentsPaymentsAndReturns(t *testing.T) {
	t.Parallel()
	db, ws, _ := seeded(t, 1500, 3)
	ctx := t.Context()
	orders, err := db.Writer.SalesOrder.Query().Where(salesorder.WorkspaceID(ws)).WithLines().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ships, err := db.Writer.Shipment.Query().Where(shipment.WorkspaceID(ws)).WithEvents(func(q *ent.ShipmentEventQuery) {
		q.Order(ent.Asc(shipmentevent.FieldOccurredAt))
	}).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pays, err := db.Writer.Payment.Query().Where(payment.WorkspaceID(ws)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rets, err := db.Writer.ReturnRequest.Query().Where(returnrequest.WorkspaceID(ws)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stores, err := db.Writer.Store.Query().Where(store.WorkspaceID(ws)).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shippedByLine := map[string]int64{}
	shipsByOrder := map[string][]*ent.Shipment{}
	for _, s := range ships {
		shipsByOrder[s.SalesOrderID] = append(shipsByOrder[s.SalesOrderID], s)
		for _, l := range s.Lines {
			shippedByLine[l.OrderLineID] += l.QtyMilli
		}
		if len(s.Edges.Events) == 0 {
			t.Fatalf("shipment %s has no tracking events", s.Number)
		}
		last := s.Edges.Events[len(s.Edges.Events)-1]
		if (s.Status == shipment.StatusDelivered) != (last.Status == "delivered") || (s.Status == shipment.StatusDelivered) != (s.DeliveredAt != nil) {
			t.Fatalf("shipment %s is %s but its timeline ends with %s", s.Number, s.Status, last.Status)
		}
	}
	paysByOrder := map[string][]*ent.Payment{}
	for _, p := range pays {
		paysByOrder[p.SalesOrderID] = append(paysByOrder[p.SalesOrderID], p)
		if p.Kind == payment.KindCapture && (p.FeeCents == 0 || p.Receipt == nil || p.Receipt.Number == "") {
			t.Fatalf("capture %s without fee or receipt", p.ID)
		}
	}
	byID := map[string]*ent.SalesOrder{}
	kinds := map[string]int{}
	online := 0
	for _, o := range orders {
		byID[o.ID] = o
		var incl int64
		for _, l := range o.Edges.Lines {
			incl += l.AmountInclVatCents
			if shippedByLine[l.ID] != l.ShippedQtyMilli || l.ShippedQtyMilli > l.QtyMilli {
				t.Fatalf("%s line %d: shipped_qty_milli %d of %d, shipments carry %d", o.Number, l.Position, l.ShippedQtyMilli, l.QtyMilli, shippedByLine[l.ID])
			}
		}
		if incl != o.AmountInclVatCents {
			t.Fatalf("%s: total %d, lines add up to %d", o.Number, o.AmountInclVatCents, incl)
		}
		if len(shipsByOrder[o.ID]) > 0 != (o.Status == "shipped" || o.Status == "partially_shipped" || o.Status == "delivered") {
			t.Fatalf("%s is %s with %d shipments", o.Number, o.Status, len(shipsByOrder[o.ID]))
		}
		if !o.Online {
			if o.ChannelID != nil || o.PaymentStatus != nil || o.ShippingStatus != nil || len(paysByOrder[o.ID]) > 0 {
				t.Fatalf("offline order %s has online fields", o.Number)
			}
			continue
		}
		online++
		if o.ChannelID == nil || !slices.Contains(stores, *o.ChannelID) || o.PaymentStatus == nil || o.ShippingStatus == nil {
			t.Fatalf("online order %s lacks its store, payment or shipping status", o.Number)
		}
		if want := map[string]string{"shipped": "shipped", "partially_shipped": "partially_shipped", "delivered": "delivered"}[string(o.Status)]; want != "" && string(*o.ShippingStatus) != want ||
			want == "" && *o.ShippingStatus != "not_shipped" {
			t.Fatalf("online order %s is %s but shipping_status %s", o.Number, o.Status, *o.ShippingStatus)
		}
		var captured, refunded int64
		for _, p := range paysByOrder[o.ID] {
			kinds[string(p.Kind)]++
			switch p.Kind {
			case payment.KindCapture:
				captured += p.AmountCents
			case payment.KindRefund:
				refunded += p.AmountCents
			}
			if p.StoreID == nil || *p.StoreID != *o.ChannelID {
				t.Fatalf("payment %s is not of the order's store", p.ID)
			}
		}
		ps := string(*o.PaymentStatus)
		switch {
		case ps == "paid" && (captured != o.AmountInclVatCents || refunded != 0),
			ps == "partially_refunded" && (captured != o.AmountInclVatCents || refunded == 0 || refunded >= captured),
			ps == "refunded" && (refunded != captured || captured == 0),
			(ps == "authorized" || ps == "unpaid") && captured != 0:
			t.Fatalf("online order %s is %s: captured %d, refunded %d of %d", o.Number, ps, captured, refunded, o.AmountInclVatCents)
		}
	}
	if online == 0 || online == len(orders) {
		t.Fatalf("%d online orders of %d", online, len(orders))
	}
	for _, k := range []string{"authorize", "capture", "refund", "void"} {
		if kinds[k] == 0 {
			t.Errorf("no %s payment among %v", k, kinds)
		}
	}
	if len(rets) == 0 {
		t.Fatal("no returns")
	}
	for _, r := range rets {
		o := byID[r.SalesOrderID]
		if o == nil || !o.Online || o.Status != "delivered" {
			t.Fatalf("return %s is not on a delivered online order", r.Number)
		}
		for _, rl := range r.Lines {
			found := false
			for _, l := range o.Edges.Lines {
				found = found || (l.ID == rl.OrderLineID && rl.QtyMilli <= l.ShippedQtyMilli)
			}
			if !found {
				t.Fatalf("return %s returns %+v, which %s did not ship", r.Number, rl, o.Number)
			}
		}
		if (r.Status == "refunded") != (r.RefundCents > 0) || (r.Status == "refunded") != (r.RefundedAt != nil) {
			t.Fatalf("return %s is %s with refund %d", r.Number, r.Status, r.RefundCents)
		}
		var refunded int64
		for _, p := range paysByOrder[o.ID] {
			if p.Kind == payment.KindRefund {
				refunded += p.AmountCents
			}
		}
		if refunded != r.RefundCents {
			t.Fatalf("return %s refunds %d, the order's refund payments %d", r.Number, r.RefundCents, refunded)
		}
	}
}

func TestCatalogPromotionsGiftCardsStoresAndClientsAreWellFormed(t *testing.T) {
	t.Parallel()
	db, ws, _ := seeded(t, 600, 4)
	ctx := t.Context()

	products, err := db.Writer.Item.Query().Where(item.WorkspaceID(ws), item.IsProduct(true)).WithVariants().WithCategories().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	variable := 0
	for _, p := range products {
		want := 1
		for _, a := range p.VariantAxes {
			want *= len(a.Values)
		}
		if len(p.VariantAxes) == 0 {
			want = 0
		} else {
			variable++
		}
		if len(p.Edges.Variants) != want {
			t.Fatalf("%s has %d variants for axes %+v", p.Number, len(p.Edges.Variants), p.VariantAxes)
		}
		keys := map[string]bool{}
		for _, v := range p.Edges.Variants {
			if v.OptionsKey != shape.OptionsKey(v.Options) || keys[v.OptionsKey] || v.Sku == p.Number {
				t.Fatalf("%s: variant %s options_key %q (options %v) is not canonical, unique and with its own SKU", p.Number, v.Sku, v.OptionsKey, v.Options)
			}
			keys[v.OptionsKey] = true
		}
		if len(p.Edges.Categories) == 0 || len(p.Listings) == 0 || len(p.Media) == 0 {
			t.Fatalf("%s has no category, listing or media", p.Number)
		}
	}
	if variable == 0 || variable == len(products) {
		t.Fatalf("%d variable products of %d", variable, len(products))
	}
	cats, err := db.Writer.Category.Query().Where(category.WorkspaceID(ws)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roots := 0
	for _, c := range cats {
		if c.ParentID == nil {
			roots++
		}
	}
	if roots == 0 || roots == len(cats) {
		t.Fatalf("%d roots among %d categories: not a tree", roots, len(cats))
	}

	promos, err := db.Writer.Promotion.Query().Where(promotion.WorkspaceID(ws)).WithCodes().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range promos {
		seen[string(p.Kind)], seen[string(p.Status)] = true, true
		var used int64
		for _, c := range p.Edges.Codes {
			used += c.TimesUsed
			if c.CodeKey != strings.ToLower(c.Code) {
				t.Fatalf("code %s has key %s", c.Code, c.CodeKey)
			}
		}
		if p.Kind == promotion.KindCode && (len(p.Edges.Codes) == 0 || used != p.TimesUsed) ||
			p.Kind == promotion.KindAutomatic && len(p.Edges.Codes) > 0 {
			t.Fatalf("promotion %s (%s) used %d times, its %d codes %d", p.Name, p.Kind, p.TimesUsed, len(p.Edges.Codes), used)
		}
	}
	for _, k := range []string{"automatic", "code", "active", "scheduled", "expired", "archived"} {
		if !seen[k] {
			t.Errorf("no %s promotion", k)
		}
	}

	cards, err := db.Writer.GiftCard.Query().Where(giftcard.WorkspaceID(ws)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hexHash := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, c := range cards {
		if !hexHash.MatchString(c.CodeHash) || len(c.CodeLast4) != 4 {
			t.Fatalf("gift card %s: code_hash %q, code_last4 %q", c.ID, c.CodeHash, c.CodeLast4)
		}
		var sum int64
		for _, e := range c.Ledger {
			sum += e.AmountCents
			if e.BalanceAfterCents != sum {
				t.Fatalf("gift card %s: ledger balance %d after %+v, want %d", c.ID, e.BalanceAfterCents, e, sum)
			}
		}
		if sum != c.BalanceCents || c.Ledger[0].AmountCents != c.InitialBalanceCents || (c.BalanceCents == 0) != (c.Status == giftcard.StatusDepleted) {
			t.Fatalf("gift card %s (%s): balance %d, ledger says %d", c.ID, c.Status, c.BalanceCents, sum)
		}
	}

	sts, err := db.Writer.Store.Query().Where(store.WorkspaceID(ws)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var live, none int
	for _, s := range sts {
		if s.CustomDomain != nil && s.CustomDomainVerified && s.CustomDomainActive {
			live++
		}
		if s.CustomDomain == nil {
			none++
		}
	}
	if live == 0 || none == 0 {
		t.Fatalf("stores: %d with a live custom domain, %d without any", live, none)
	}

	clients, err := db.Writer.Customer.Query().Where(customer.WorkspaceID(ws)).WithAddresses().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		var billing, shipping int
		for _, a := range c.Edges.Addresses {
			if a.DefaultBilling {
				billing++
				if a.Kind != address.KindBilling {
					t.Fatalf("%s: default billing address of kind %s", c.Name, a.Kind)
				}
			}
			if a.DefaultShipping {
				shipping++
			}
		}
		if billing != 1 || shipping != 1 {
			t.Fatalf("%s has %d default billing and %d default shipping addresses", c.Name, billing, shipping)
		}
	}
}

// The same seed and clock give the same records (ids aside), and ids sort
// like creation times.
func TestSameSeedSameContentAndIDsSortByCreation(t *testing.T) {
	t.Parallel()
	dbA, wsA, _ := seeded(t, 200, 9)
	_, wsB, _ := seeded(t, 200, 9)
	_, wsC, _ := seeded(t, 200, 10)
	project := func(ws string) []string {
		invs, err := dbA.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws)).Order(ent.Asc(invoice.FieldID)).All(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(invs))
		for i, v := range invs {
			if i > 0 && v.CreatedAt.Before(invs[i-1].CreatedAt) {
				t.Fatalf("ids do not sort like created_at: %s (%s) after %s (%s)", v.ID, v.CreatedAt, invs[i-1].ID, invs[i-1].CreatedAt)
			}
			out[i] = fmt.Sprint(v.Number, v.Status, v.ClientName, v.AmountInclVatCents, v.PaidCents, v.CreatedAt.UTC())
		}
		return out
	}
	a, b, c := project(wsA), project(wsB), project(wsC)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the same seed gave different invoices")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("another seed gave the same invoices")
	}
}

func TestASecondRunIntoTheSameWorkspaceAddsMore(t *testing.T) {
	t.Parallel()
	db, ws, first := seeded(t, 100, 5)
	second, err := demo.Run(t.Context(), db, ws, demo.Options{Invoices: 100, Seed: 5, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.Writer.Item.Query().Where(item.WorkspaceID(ws)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n != first["items"]+second["items"] {
		t.Fatalf("%d items after two runs of %d and %d", n, first["items"], second["items"])
	}
}
