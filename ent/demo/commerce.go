package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

type orderLine struct {
	id                string
	qty, shipped      int64
	price, excl, vat  int64
	itemID, variantID any
	sku, description  string
	returnable        bool
}

type plannedShipment struct {
	lines    []shape.ShipmentLine
	shipped  time.Time
	status   string
	delivery time.Time // zero unless delivered
}

var carriers = []struct{ name, service, prefix string }{
	{"DHL", "Express", "JD01"}, {"UPS", "Standard", "1Z"}, {"Colissimo", "Domicile", "6A"}, {"La Poste", "Lettre suivie", "LS"}, {"FedEx", "Ground", "FX"},
}

// salesOrders writes orders with their lines, shipments (with a tracking
// timeline), payments and returns that agree with them.
func (g *gen) salesOrders() {
	n := count(g.o.SalesOrders, g.n, 20, 40)
	ages := make([]time.Duration, len(recentOrders))
	for r, o := range recentOrders {
		ages[r] = o.age
	}
	for i := 0; i < n; i++ {
		if i%10_000 == 0 && g.t.orders.s.stopped() {
			return
		}
		at, rank := g.recent(i, n, ages)
		var f *orderCase
		if rank >= 0 {
			f = &recentOrders[rank]
		}
		g.order(at, f)
	}
}

// orderCase is a newest order's set state: status is confirmed (nothing
// shipped; an online one is paid, as it is two days after its date),
// partially_shipped or draft.
type orderCase struct {
	online bool
	status string
	age    time.Duration
}

// recentOrders are the newest orders, by rank (0 the newest): every scale
// has orders to confirm, to ship, and online ones paid but not shipped.
var recentOrders = []orderCase{
	{true, "confirmed", 3 * oneDay},
	{false, "confirmed", 4 * oneDay},
	{false, "partially_shipped", 9 * oneDay},
	{false, "draft", oneDay},
	{true, "confirmed", 60 * time.Hour},
	{true, "partially_shipped", 10 * oneDay},
	{false, "confirmed", 6 * oneDay},
}

// order writes an order made at; f, when set, is the state it must end in.
func (g *gen) order(at time.Time, f *orderCase) {
	id := g.id("so", at)
	c := g.clientAt(at)
	online := g.chance(0.6)
	if f != nil {
		online = f.online
	}
	cur := c.currency
	var st store
	if online {
		st = g.storeList[g.rng.IntN(len(g.storeList))]
		cur = "EUR"
	}
	k := 1 + g.rng.IntN(3)
	lines := make([]orderLine, k)
	var tot totals
	for j := range lines {
		it := g.itemAt(at, online)
		l := orderLine{id: g.id("sol", at), itemID: it.id, sku: it.sku, description: it.name, price: it.price, returnable: it.product}
		if len(it.variants) > 0 {
			v := it.variants[g.rng.IntN(len(it.variants))]
			l.variantID, l.sku, l.price, l.description = v.id, v.sku, v.price, it.name+" – "+v.label
		}
		l.qty = int64(1+g.rng.IntN(3)) * 1000
		if !it.product {
			l.qty = int64(1+g.rng.IntN(8)) * 500
		}
		if f != nil && f.status == "partially_shipped" && j == 0 {
			l.qty = max(l.qty, 2000) // half of it ships: not all of it
		}
		l.excl, l.vat = amounts(l.qty, l.price, 2000)
		tot.add(shape.DocLine{AmountExclVATCents: l.excl, VATAmountCents: l.vat, AmountInclVATCents: l.excl + l.vat})
		lines[j] = l
	}

	age := g.now.Sub(at)
	status := "confirmed"
	var ships []plannedShipment
	switch {
	case f != nil && f.status == "partially_shipped":
		ships = g.planShipments(at, lines, true)
		status = orderShipping(lines, ships)
	case f != nil:
		status = f.status
	case g.chance(0.04) || online && g.first("cancelled", 1):
		status = "cancelled"
	case !online && age < 7*24*time.Hour && g.chance(0.3):
		status = "draft"
	case age < 2*24*time.Hour || (age < 5*24*time.Hour && g.chance(0.5)):
	default:
		ships = g.planShipments(at, lines, age < 20*24*time.Hour && g.chance(0.1))
		status = orderShipping(lines, ships)
	}

	updated := at
	var payStatus, shipStatus any
	var pays []payment
	if online {
		shipStatus = "not_shipped"
		if len(ships) > 0 {
			shipStatus = status
		}
		payStatus, pays = g.onlinePayments(at, status, tot.incl)
	}
	for _, s := range ships {
		updated = later(updated, s.shipped, s.delivery)
	}
	if online && status == "delivered" {
		if len(g.shopOrders) < 5000 {
			g.shopOrders = append(g.shopOrders, id)
		}
		// Returns have no foreign key, so one can be written before its order.
		if g.chance(0.08) || g.first("return", 2) {
			delivered := ships[len(ships)-1].delivery
			if refund, refundedAt, whole := g.returnRequest(id, lines, delivered); refund > 0 {
				pays = append(pays, payment{kind: "refund", at: refundedAt, amount: refund})
				updated = later(updated, refundedAt)
				payStatus = "partially_refunded"
				if whole {
					payStatus = "refunded"
				}
			}
		}
	}
	g.t.orders.row(append(g.base(id, at, updated), fmt.Sprintf("SO-%06d", g.next("so")), status, day(at), online,
		nullable(st.id), payStatus, shipStatus, cur, g.street(), "", c.id, c.name, tot.excl, tot.vat, tot.incl)...)
	for j, l := range lines {
		g.t.orderLines.row(append(g.base(l.id, at, updated), id, j+1, l.itemID, l.variantID, l.sku, l.description,
			l.qty, l.shipped, l.price, l.excl, l.vat, l.excl+l.vat)...)
	}
	for _, s := range ships {
		g.shipment(id, s)
	}
	for _, p := range pays {
		g.payment(id, st.id, cur, p)
	}
}

func later(t time.Time, more ...time.Time) time.Time {
	for _, m := range more {
		if m.After(t) {
			t = m
		}
	}
	return t
}

// orderShipping is the order status its shipments give it.
func orderShipping(lines []orderLine, ships []plannedShipment) string {
	for _, l := range lines {
		if l.shipped < l.qty {
			return "partially_shipped"
		}
	}
	for _, s := range ships {
		if s.status != "delivered" {
			return "shipped"
		}
	}
	return "delivered"
}

// planShipments ships everything (in one or two shipments) or, when
// partial, only the first line or half of it; it records each line's
// shipped quantity.
func (g *gen) planShipments(at time.Time, lines []orderLine, partial bool) []plannedShipment {
	var groups [][]shape.ShipmentLine
	switch {
	case partial:
		q := lines[0].qty
		if len(lines) == 1 {
			q = max(500, q/2/500*500)
		}
		groups = [][]shape.ShipmentLine{{{OrderLineID: lines[0].id, QtyMilli: q}}}
	case len(lines) > 1 && g.chance(0.2):
		h := (len(lines) + 1) / 2
		groups = [][]shape.ShipmentLine{shipWhole(lines[:h]), shipWhole(lines[h:])}
	default:
		groups = [][]shape.ShipmentLine{shipWhole(lines)}
	}
	var out []plannedShipment
	from := at
	for _, grp := range groups {
		s := plannedShipment{lines: grp, shipped: g.after(from, 12, 4)}
		from = s.shipped
		since := g.now.Sub(s.shipped)
		switch {
		case since > 6*24*time.Hour && !g.chance(0.05):
			s.status, s.delivery = "delivered", g.after(s.shipped, 30, 5)
		case since > 24*time.Hour:
			s.status = "in_transit"
		default:
			s.status = "shipped"
		}
		for _, sl := range grp {
			for j := range lines {
				if lines[j].id == sl.OrderLineID {
					lines[j].shipped += sl.QtyMilli
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// shipWhole ships all of every line.
func shipWhole(lines []orderLine) []shape.ShipmentLine {
	var out []shape.ShipmentLine
	for _, l := range lines {
		out = append(out, shape.ShipmentLine{OrderLineID: l.id, QtyMilli: l.qty})
	}
	return out
}

// shipment writes a planned shipment and its tracking timeline, which
// reaches as far as the shipment's status.
func (g *gen) shipment(orderID string, s plannedShipment) {
	cr := carriers[g.rng.IntN(len(carriers))]
	num := g.next("shp")
	tracking := fmt.Sprintf("%s%09d", cr.prefix, num)
	pk := []shape.Package{{TrackingNo: tracking, WeightG: int64(200 + g.rng.IntN(4800))}}
	if len(s.lines) > 2 {
		pk = append(pk, shape.Package{TrackingNo: fmt.Sprintf("%s%09dB", cr.prefix, num), WeightG: int64(200 + g.rng.IntN(2000))})
	}
	id := g.id("shp", s.shipped)
	var delivered any
	last := s.shipped
	type ev struct {
		at                  time.Time
		status, desc, place string
	}
	evs := []ev{{s.shipped.Add(4 * time.Hour), "picked_up", "Picked up by " + cr.name, "Lyon, FR"}}
	if s.status != "shipped" {
		evs = append(evs, ev{s.shipped.Add(20 * time.Hour), "in_transit", "In transit to the destination hub", g.pick(cities)})
	}
	if s.status == "delivered" {
		delivered = g.tm(s.delivery)
		evs = append(evs, ev{s.delivery, "delivered", "Delivered", ""})
	}
	for i := range evs {
		e := &evs[i]
		if e.at.After(g.now) {
			e.at = g.now
		}
		if e.at.Before(last) {
			e.at = last
		}
		last = e.at
	}
	// The shipment goes first: its events refer to it.
	g.t.shipments.row(append(g.base(id, s.shipped, last), orderID, fmt.Sprintf("SHP-%06d", num), s.status,
		js(s.lines), js(pk), nil, cr.name, cr.service, tracking, nil, int64(490+g.rng.IntN(1500)), "",
		g.tm(s.shipped), delivered)...)
	for _, e := range evs {
		g.t.events.row(append(g.base(g.id("sev", e.at), e.at, e.at), id, fmt.Sprintf("%s-%d-%s", tracking, len(e.status), e.status),
			g.tm(e.at), e.status, e.desc, e.place)...)
	}
}

// returnRequest writes a return of one line of a delivered online order;
// it answers the refund (0 for none), its time, and whether all came back.
func (g *gen) returnRequest(orderID string, lines []orderLine, delivered time.Time) (int64, time.Time, bool) {
	var l *orderLine
	for j := range lines {
		if lines[j].returnable {
			l = &lines[j]
			break
		}
	}
	if l == nil {
		return 0, time.Time{}, false
	}
	at := g.after(delivered, 24, 14)
	qty := min(l.qty, 1000)
	excl, vat := amounts(qty, l.price, 2000)
	reason := g.pick([]string{"Wrong size", "Damaged in transit", "Not as described", "Changed my mind"})
	status, outcome := "requested", "pending"
	var refund int64
	var refundedAt time.Time
	switch since := g.now.Sub(at); {
	case since > 10*24*time.Hour && g.chance(0.1):
		status, outcome = "rejected", "rejected"
	case since > 10*24*time.Hour:
		status, outcome, refund = "refunded", "refunded", excl+vat
		refundedAt = g.after(at, 72, 10)
	case since > 5*24*time.Hour:
		status = "received"
	case since > 2*24*time.Hour:
		status = "approved"
	}
	var refunded any
	if refund > 0 {
		refunded = g.tm(refundedAt)
	}
	g.t.returns.row(append(g.base(g.id("ret", at), at, later(at, refundedAt)), orderID, fmt.Sprintf("RMA-%06d", g.next("ret")), status, reason,
		js([]shape.ReturnLine{{OrderLineID: l.id, QtyMilli: qty, Reason: reason}}), "EUR", refund, outcome, refunded)...)
	return refund, refundedAt, len(lines) == 1 && qty == l.qty
}

type payment struct {
	kind   string
	at     time.Time
	amount int64
}

// onlinePayments is what the store's payment provider did for an order.
func (g *gen) onlinePayments(at time.Time, status string, total int64) (string, []payment) {
	auth := payment{kind: "authorize", at: at.Add(time.Minute), amount: total}
	switch status {
	case "cancelled":
		return "unpaid", []payment{auth, {kind: "void", at: g.after(at, 1, 2), amount: total}}
	case "confirmed", "draft":
		if g.now.Sub(at) < 2*24*time.Hour {
			return "authorized", []payment{auth}
		}
	}
	return "paid", []payment{auth, {kind: "capture", at: g.after(at, 1, 1), amount: total}}
}

func (g *gen) payment(orderID, storeID, cur string, p payment) {
	var fee int64
	var receipt any
	if p.kind == "capture" {
		fee = p.amount*14/1000 + 25
	}
	if p.kind == "capture" || p.kind == "refund" {
		receipt = js(shape.Receipt{Number: fmt.Sprintf("RCT-%07d", g.next("receipt")), PostedAt: p.at.Format(time.RFC3339)})
	}
	provider, ref := "stripe", fmt.Sprintf("pi_%012x", g.rng.Uint64()>>16)
	if g.chance(0.2) {
		provider, ref = "paypal", fmt.Sprintf("PAYID-%012X", g.rng.Uint64()>>16)
	}
	g.t.payments.row(append(g.base(g.id("pay", p.at), p.at, p.at), orderID, nullable(storeID), p.kind, "succeeded", cur,
		p.amount, fee, provider, ref, receipt)...)
}

var promoWords = []string{"WELCOME", "SPRING", "SUMMER", "AUTUMN", "WINTER", "VIP", "FLASH", "BACK2SCHOOL", "BLACKFRIDAY", "NEWSLETTER"}

// promotions writes automatic and code promotions in every status; a code
// promotion's usage is the sum of its codes'.
func (g *gen) promotions() {
	n := scale(g.n, 2000, 6)
	statuses := []string{"active", "active", "scheduled", "expired", "archived", "active"}
	for i := 0; i < n; i++ {
		at := g.timeline(i, n)
		status := statuses[i%len(statuses)]
		kind := "code"
		if i%2 == 1 {
			kind = "automatic"
		}
		word := promoWords[g.rng.IntN(len(promoWords))]
		dtype, value := "percentage", int64(500*(1+g.rng.IntN(6)))
		name := fmt.Sprintf("%s %d%% off", strings.ToTitle(word[:1])+strings.ToLower(word[1:]), value/100)
		switch g.rng.IntN(4) {
		case 0:
			dtype, value = "fixed_amount", int64(500*(1+g.rng.IntN(4)))
			name = fmt.Sprintf("%s %d € off", strings.ToTitle(word[:1])+strings.ToLower(word[1:]), value/100)
		case 1:
			dtype, value, name = "free_shipping", 0, "Free shipping – "+strings.ToLower(word)
		}
		starts, ends := at, at.Add(time.Duration(30+g.rng.IntN(60))*24*time.Hour)
		switch status {
		case "active":
			starts = at
			if ends.Before(g.now) {
				ends = g.now.Add(time.Duration(10+g.rng.IntN(50)) * 24 * time.Hour)
			}
		case "scheduled":
			starts = g.now.Add(time.Duration(3+g.rng.IntN(30)) * 24 * time.Hour)
			ends = starts.Add(14 * 24 * time.Hour)
		case "expired", "archived":
			if ends.After(g.now) {
				ends = g.now.Add(-24 * time.Hour)
				if ends.Before(starts) {
					starts = ends.Add(-7 * 24 * time.Hour)
				}
			}
		}
		if status == "scheduled" {
			starts = starts.Truncate(time.Second)
		}
		id := g.id("pro", at)
		var used int64
		var codes [][]any // written after their promotion, which they refer to
		if kind == "code" {
			for c := 1 + g.rng.IntN(4); c > 0; c-- {
				code := fmt.Sprintf("%s%d-%d", word, value/100, g.next("code"))
				var maxUses, perCustomer any
				uses := int64(0)
				if status != "scheduled" {
					uses = int64(g.rng.IntN(200))
				}
				if g.chance(0.5) {
					left := int64(g.rng.IntN(300))
					if status == "active" {
						left++ // an active promotion's codes can still be used
					}
					maxUses = uses + left
				}
				if g.chance(0.5) {
					perCustomer = int64(1)
				}
				used += uses
				codes = append(codes, append(g.base(g.id("pcd", at), at, at), id, code, strings.ToLower(code), maxUses, perCustomer, g.tm(ends), uses))
			}
		} else if status != "scheduled" {
			used = int64(g.rng.IntN(2000))
		}
		perUse := value * 3 // a basket of ~30 € at value basis points
		switch dtype {
		case "fixed_amount":
			perUse = value
		case "free_shipping":
			perUse = 590
		}
		g.t.promotions.row(append(g.base(id, at, at), name, kind, status, dtype, value, "EUR", g.tm(starts), g.tm(ends), used, used*perUse)...)
		for _, c := range codes {
			g.t.codes.row(c...)
		}
	}
}

// giftCards writes cards whose balance is the end of their ledger; the
// code itself is kept only as its SHA-256 and its last four characters.
func (g *gen) giftCards() {
	n := scale(g.n, 200, 5)
	for i := 0; i < n; i++ {
		at := g.timeline(i, n)
		code := g.giftCode(i)
		sum := sha256.Sum256([]byte(code))
		initial := int64(2500 * (1 + g.rng.IntN(8)))
		bal := initial
		ledger := []shape.LedgerEntry{{At: at.Format(time.RFC3339), Kind: "issue", AmountCents: initial, BalanceAfterCents: bal}}
		last := at
		for r := g.rng.IntN(4); r > 0 && bal > 0; r-- {
			last = g.after(last, 24, 90)
			amt := min(bal, int64(500+g.rng.IntN(6000)))
			bal -= amt
			var order *string
			if len(g.shopOrders) > 0 {
				order = str(g.shopOrders[g.rng.IntN(len(g.shopOrders))])
			}
			ledger = append(ledger, shape.LedgerEntry{At: last.Format(time.RFC3339), Kind: "redeem", AmountCents: -amt, BalanceAfterCents: bal, SalesOrderID: order})
			if g.chance(0.1) {
				last = g.after(last, 24, 30)
				bal += amt
				ledger = append(ledger, shape.LedgerEntry{At: last.Format(time.RFC3339), Kind: "refund", AmountCents: amt, BalanceAfterCents: bal, SalesOrderID: order})
			}
		}
		expires := at.AddDate(2, 0, 0)
		status := "active"
		switch {
		case bal == 0:
			status = "depleted"
		case expires.Before(g.now):
			status = "expired"
		case g.chance(0.03):
			status = "disabled"
		}
		var client any
		if g.chance(0.5) {
			client = g.clientAt(at).id
		}
		g.t.giftCards.row(append(g.base(g.id("gc", at), at, last), hex.EncodeToString(sum[:]), code[len(code)-4:], status, "EUR",
			initial, bal, g.tm(expires), client, js(ledger))...)
	}
}

// giftCode derives a card's code from the workspace, seed and run, so codes
// never repeat across workspaces (their hashes are unique).
func (g *gen) giftCode(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%d/%d", g.ws, g.seed, g.run, i)))
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 16)
	for j := range b {
		b[j] = alphabet[sum[j]%32]
	}
	return string(b)
}
