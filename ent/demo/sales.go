package demo

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/shape"
)

var (
	companyA  = []string{"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay", "Soylent", "Tyrell", "Cyberdyne", "Wonka", "Gringotts", "Oscorp", "Aperture", "Massive", "Dunder", "Pied Piper", "Sterling", "Bluth", "Prestige", "Monarch", "Nakatomi", "Virtucon", "Zorg", "Ollivander", "Duff", "Krusty", "Gekko", "Ajax"}
	companyB  = []string{"Industries", "Corporation", "Holdings", "Trading", "Logistics", "Labs", "Foods", "Partners", "Studio", "Systems", "Group", "& Co", "Supply", "Consulting", "Media", "Design", "Robotics", "Textiles", "Energy", "Bakery"}
	firstName = []string{"Alice", "Bruno", "Chloé", "David", "Emma", "Farid", "Grace", "Hugo", "Inès", "Jules", "Karim", "Léa", "Mohamed", "Nora", "Omar", "Paula", "Quentin", "Rania", "Sofia", "Tom"}
	lastName  = []string{"Martin", "Bernard", "Dubois", "Haddad", "Smith", "Nguyen", "Garcia", "Rossi", "Müller", "Benali", "Laurent", "Moreau", "Kowalski", "Okafor", "Petit"}
	streets   = []string{"Rue de la Paix", "Avenue Victor Hugo", "Main Street", "Baker Street", "Boulevard Haussmann", "Rue du Faubourg", "Kingsway", "Quai des Chartrons", "Via Roma", "Market Street"}
	cities    = []string{"75002 Paris, FR", "69002 Lyon, FR", "33000 Bordeaux, FR", "London W1U, GB", "10115 Berlin, DE", "1000 Bruxelles, BE", "20121 Milano, IT", "New York, NY 10001, US", "Casablanca 20250, MA", "Montréal QC H2X, CA"}
	terms     = []string{"NET30", "NET30", "NET15", "NET60", "DUE_ON_RECEIPT"}
	languages = []any{nil, nil, "en", "fr", "fr", "ar", "bilingual"}
)

func (g *gen) personName() string { return g.pick(firstName) + " " + g.pick(lastName) }

func (g *gen) street() string {
	return fmt.Sprintf("%d %s, %s", 1+g.rng.IntN(180), g.pick(streets), g.pick(cities))
}

func (g *gen) currency() string {
	switch r := g.rng.IntN(20); {
	case r < 2:
		return "USD"
	case r < 3:
		return "GBP"
	}
	return "EUR"
}

func (g *gen) phone() string {
	return fmt.Sprintf("+33 1 %02d %02d %02d %02d", g.rng.IntN(100), g.rng.IntN(100), g.rng.IntN(100), g.rng.IntN(100))
}

// clients writes clients, each with a default billing and a default
// shipping address, some with a second shipping address and an external_ref.
func (g *gen) clients() {
	n := count(g.o.Clients, g.n, 40, 5)
	for i := 0; i < n; i++ {
		at := g.rosterTime(i, n)
		id := g.id("cli", at)
		name := g.pick(companyA) + " " + g.pick(companyB)
		cur := g.currency()
		contact := g.personName()
		num := g.next("client")
		email := fmt.Sprintf("billing%d@%s.example.com", num, slugify(name))
		billing := g.street()
		lang := languages[g.rng.IntN(len(languages))]
		var sys, conn, ext, key any
		if g.chance(0.15) {
			s, c, e := "shopify", "main", fmt.Sprintf("%d", 7_000_000+num)
			if g.chance(0.3) {
				s, c = "hubspot", ""
			}
			sys, conn, ext, key = s, nullable(c), e, s+"\x1f"+c+"\x1f"+e
		}
		g.t.clients.row(append(g.base(id, at, at), name, email, g.phone(), contact, billing, cur,
			g.pick(terms), "", !g.chance(0.04), lang, sys, conn, ext, key)...)
		g.clientsL = append(g.clientsL, party{id: id, name: name, currency: cur})

		addr := func(kind string, defB, defS bool, label, text string) {
			g.t.addresses.row(append(g.base(g.id("adr", at), at, at), id, kind, defB, defS,
				label, email, "", contact, text, cur, "", "", true, lang)...)
		}
		addr("billing", true, false, name, billing)
		shipping := billing
		if g.chance(0.4) {
			shipping = g.street()
		}
		addr("shipping", false, true, name+" – deliveries", shipping)
		if g.chance(0.2) {
			addr("shipping", false, false, name+" – warehouse", g.street())
		}
	}
}

func (g *gen) vendors() {
	n := scale(g.n, 100, 3)
	for i := 0; i < n; i++ {
		at := g.rosterTime(i, n)
		id := g.id("ven", at)
		name := g.pick(companyA) + " " + g.pick([]string{"Supplies", "Wholesale", "Print", "Freight", "Software", "Textiles", "Packaging"})
		cur := g.currency()
		g.t.vendors.row(append(g.base(id, at, at), name, fmt.Sprintf("ap%d@%s.example.com", g.next("vendor"), slugify(name)),
			g.phone(), cur, "", languages[g.rng.IntN(len(languages))])...)
		g.vendorsL = append(g.vendorsL, party{id: id, name: name, currency: cur})
	}
}

func (g *gen) clientAt(at time.Time) party {
	k := before(len(g.clientsL), func(i int) time.Time { return g.rosterTime(i, len(g.clientsL)) }, at)
	return g.clientsL[g.rng.IntN(k)]
}

func (g *gen) itemAt(at time.Time, products bool) *item {
	k := before(len(g.items), func(i int) time.Time { return g.items[i].created }, at)
	if !products {
		return &g.items[g.rng.IntN(k)]
	}
	// the products among the first k items of the roster
	p := g.products[g.rng.IntN(max(1, sort.SearchInts(g.products, k)))]
	return &g.items[p]
}

type totals struct{ excl, vat, incl int64 }

func (t *totals) add(l shape.DocLine) {
	t.excl += l.AmountExclVATCents
	t.vat += l.VATAmountCents
	t.incl += l.AmountInclVATCents
}

// amounts prices qty (thousandths) at price with a VAT rate in basis points.
func amounts(qty, price, bp int64) (excl, vat int64) {
	excl = (qty*price + 500) / 1000
	vat = (excl*bp + 5000) / 10000
	return
}

// docLines makes 1 to 3 lines (most often one) of items that existed at `at`.
func (g *gen) docLines(at time.Time) ([]shape.DocLine, totals) {
	k := []int{1, 1, 1, 1, 1, 2, 2, 2, 3, 3}[g.rng.IntN(10)]
	lines := make([]shape.DocLine, k)
	var t totals
	for i := range lines {
		it := g.itemAt(at, false)
		qty := int64(1+g.rng.IntN(5)) * 1000
		if !it.product {
			qty = int64(1+g.rng.IntN(16)) * 500
		}
		bp := int64(2000)
		if g.chance(0.1) {
			bp = 1000
		}
		excl, vat := amounts(qty, it.price, bp)
		id := it.id
		lines[i] = shape.DocLine{ItemID: &id, Description: it.name, QtyMilli: qty, UnitPriceCents: it.price,
			VATRateBasisPoints: bp, AmountExclVATCents: excl, VATAmountCents: vat, AmountInclVATCents: excl + vat}
		t.add(lines[i])
	}
	return lines, t
}

// outcome is where a receivable or payable document stands.
type outcome int

const (
	outDraft outcome = iota
	outOpen
	outOverdue
	outPartial
	outPaid
	outVoid
)

type settlement struct {
	at        time.Time
	amount    int64
	remaining int64 // open balance after it
	status    string
}

// settle decides a document's outcome from its age and lists its payments:
// completed ones add up to the paid amount; a failed attempt applies nothing.
func (g *gen) settle(at, due time.Time, total int64) (outcome, []settlement) {
	age := g.now.Sub(at)
	r := g.rng.Float64()
	switch {
	case r < 0.03:
		return outVoid, nil
	case age < 10*24*time.Hour && r < 0.25:
		return outDraft, nil
	case age < 24*time.Hour:
		return outOpen, nil
	}
	paid := 0.85
	if age < 30*24*time.Hour {
		paid = 0.3
	} else if age < 60*24*time.Hour {
		paid = 0.6
	}
	var out []settlement
	remaining := total
	pay := func(amount int64, status string) {
		last := at
		if len(out) > 0 {
			last = out[len(out)-1].at
		}
		if status == "completed" {
			remaining -= amount
		}
		out = append(out, settlement{at: g.after(last, 2, 45), amount: amount, remaining: remaining, status: status})
	}
	r = g.rng.Float64()
	switch {
	case r < paid:
		if g.chance(0.03) {
			pay(total, "failed")
		}
		if total > 100 && g.chance(0.1) {
			first := total * int64(30+g.rng.IntN(40)) / 100
			pay(first, "completed")
			pay(total-first, "completed")
		} else {
			pay(total, "completed")
		}
		return outPaid, out
	case r < paid+0.25*(1-paid) && total > 100:
		pay(total*int64(20+g.rng.IntN(60))/100, "completed")
		return outPartial, out
	case due.Before(g.now):
		return outOverdue, nil
	}
	return outOpen, nil
}

// paidOf is what the completed payments paid, and what they left open of
// the balance open before them (nothing, on a void document).
func paidOf(out outcome, pays []settlement, open int64) (paid, remaining int64) {
	for _, p := range pays {
		if p.status == "completed" {
			paid += p.amount
		}
	}
	if out == outVoid {
		return paid, 0
	}
	return paid, open - paid
}

var invoiceStatus = [...]string{outDraft: "draft", outOpen: "sent", outOverdue: "overdue", outPartial: "partially_paid", outPaid: "paid", outVoid: "void"}

// actionable is one of the newest documents of a stream, whose outcome is
// set rather than drawn so that every scale has some to act on: it lists
// the outcomes by rank (0 the newest) and how long ago each was made.
type actionable struct {
	outcomes []outcome
	ages     []time.Duration
}

// outcome is the forced outcome of rank r, or false past the list.
func (a actionable) outcome(r int) (outcome, bool) {
	if r < 0 || r >= len(a.outcomes) {
		return 0, false
	}
	return a.outcomes[r], true
}

// recentInvoices: one sent and not yet due (due 30 days after its date),
// a draft, one past due, another sent (the first ones, at a small scale).
var recentInvoices = actionable{
	outcomes: []outcome{outOpen, outDraft, outOverdue, outOpen},
	ages:     []time.Duration{6 * oneDay, 2 * oneDay, 45 * oneDay, 15 * oneDay},
}

// invoices writes the invoices with their payments, the quotes some came
// from and credit notes, by the writes' rules: remaining = incl - paid -
// credited never goes below 0.
func (g *gen) invoices() {
	for i := 0; i < g.n; i++ {
		if i%10_000 == 0 && g.t.invoices.s.stopped() {
			return
		}
		at, rank := g.recent(i, g.n, recentInvoices.ages)
		c := g.clientAt(at)
		lines, tot := g.docLines(at)
		due := at.AddDate(0, 0, 30)
		out, forced := recentInvoices.outcome(rank)
		var pays []settlement
		if !forced {
			out, pays = g.settle(at, due, tot.incl)
		}
		id := g.id("inv", at)
		number := fmt.Sprintf("INV-%06d", g.next("inv"))
		var quoteID any
		if g.chance(0.06) {
			qat := at.Add(-time.Duration(3+g.rng.IntN(20)) * 24 * time.Hour)
			qid := g.id("quo", qat)
			quoteID = qid
			g.t.quotes.row(append(g.base(qid, qat, at), fmt.Sprintf("QUO-%06d", g.next("quo")), day(qat),
				day(qat.AddDate(0, 0, 30)), c.currency, js(lines), "", tot.excl, tot.vat, tot.incl,
				c.id, c.name, "invoiced", id)...)
		}
		var note creditNote
		switch {
		case out == outPaid && g.chance(0.08):
			note = g.creditNote(at, lines[0], "")
		case (out == outOpen || out == outOverdue) && g.first("credit note to apply", 1):
			// An issued credit note on an unpaid invoice, of at most its
			// balance: one that can be applied.
			note = g.creditNote(at, lines[0], "issued")
		}
		var credited int64
		if note.status == "applied" {
			// Only a paid invoice gets an applied note: it was applied
			// before the payments, which paid what it left.
			credited = note.line.AmountInclVATCents
			pays = g.lessenBy(pays, tot.incl, credited)
			if len(pays) > 0 && pays[0].at.Before(note.at) {
				note.at = at.Add(pays[0].at.Sub(at) / 2).Truncate(time.Millisecond)
			}
		}
		paid, remaining := paidOf(out, pays, tot.incl-credited)
		updated := at
		if len(pays) > 0 {
			updated = pays[len(pays)-1].at
		}
		if credited > 0 && note.at.After(updated) {
			updated = note.at
		}
		status := invoiceStatus[out]
		// Past due with money open reads overdue, as the serving process's
		// sweep would make it (api/writes/overdue.go).
		if (status == "sent" || status == "partially_paid") && remaining > 0 && day(due) < day(g.now) {
			status = "overdue"
		}
		g.t.invoices.row(append(g.base(id, at, updated), number, day(at), day(due), c.currency, js(lines), "",
			tot.excl, tot.vat, tot.incl, c.id, c.name, status, paid, remaining, credited, quoteID)...)
		for _, p := range pays {
			excl := p.amount * tot.excl / max(1, tot.incl)
			g.t.invoicePayments.row(append(g.base(g.id("ipay", p.at), p.at, p.at), id,
				fmt.Sprintf("PMT-%07d", g.next("ipay")), fmt.Sprintf("RCPT-%06d", g.seq["ipay"]), p.status, day(p.at), nil,
				c.currency, p.remaining, "", c.id, c.name, excl, p.amount-excl, p.amount)...)
		}
		if note.status != "" {
			g.t.credit.row(append(g.base(g.id("crn", note.at), note.at, note.at), note.number, day(note.at), nil,
				c.currency, js([]shape.DocLine{note.line}), "Returned goods", note.line.AmountExclVATCents, note.line.VATAmountCents,
				note.line.AmountInclVATCents, c.id, c.name, note.status, id)...)
		}
	}
}

// lessenBy is the payments of a document of total once a credit of amount
// was applied before them: the completed ones pay amount less, the last
// ones first, an attempt is of at most what was open (one of nothing is
// dropped), and each leaves the balance open after it.
func (g *gen) lessenBy(pays []settlement, total, amount int64) []settlement {
	left := amount
	for i := len(pays) - 1; i >= 0 && left > 0; i-- {
		if pays[i].status == "completed" {
			cut := min(pays[i].amount, left)
			pays[i].amount -= cut
			left -= cut
		}
	}
	balance := total - amount
	out := pays[:0]
	for _, p := range pays {
		if p.status != "completed" {
			p.amount = min(p.amount, balance)
		}
		if p.amount == 0 {
			continue
		}
		if p.status == "completed" {
			balance -= p.amount
		}
		p.remaining = balance
		out = append(out, p)
	}
	return out
}

// creditNote is a credit note against an invoice, written with it.
type creditNote struct {
	at     time.Time
	number string
	line   shape.DocLine
	status string // "" for none
}

// creditNote credits part of an invoice's first line; status is drawn
// when empty.
func (g *gen) creditNote(invoiced time.Time, l shape.DocLine, status string) creditNote {
	at := g.after(invoiced, 24, 30)
	l.QtyMilli = max(500, l.QtyMilli/2)
	l.AmountExclVATCents, l.VATAmountCents = amounts(l.QtyMilli, l.UnitPriceCents, l.VATRateBasisPoints)
	l.AmountInclVATCents = l.AmountExclVATCents + l.VATAmountCents
	l.Description = "Credit: " + l.Description
	if status == "" {
		status = []string{"issued", "issued", "issued", "applied", "applied", "draft", "void"}[g.rng.IntN(7)]
	}
	return creditNote{at: at, number: fmt.Sprintf("CN-%06d", g.next("crn")), line: l, status: status}
}

// recentQuotes are the newest standalone quotes' statuses and ages: one
// sent, one draft and one accepted, still to invoice.
var recentQuotes = struct {
	status []string
	ages   []time.Duration
}{[]string{"sent", "draft", "accepted"}, []time.Duration{4 * oneDay, oneDay, 12 * oneDay}}

// standaloneQuotes are quotes that did not become invoices.
func (g *gen) standaloneQuotes() {
	n := scale(g.n, 80, 5)
	for i := 0; i < n; i++ {
		at, rank := g.recent(i, n, recentQuotes.ages)
		c := g.clientAt(at)
		lines, tot := g.docLines(at)
		status := "expired"
		switch r := g.rng.Float64(); {
		case rank >= 0:
			status = recentQuotes.status[rank]
		case g.now.Sub(at) < 30*24*time.Hour:
			status = "sent"
			if r < 0.3 {
				status = "draft"
			}
		case r < 0.3:
			status = "accepted"
		case r < 0.55:
			status = "declined"
		}
		g.t.quotes.row(append(g.base(g.id("quo", at), at, at), fmt.Sprintf("QUO-%06d", g.next("quo")), day(at),
			day(at.AddDate(0, 0, 30)), c.currency, js(lines), "", tot.excl, tot.vat, tot.incl,
			c.id, c.name, status, nil)...)
	}
}

var billStatus = [...]string{outDraft: "draft", outOpen: "open", outOverdue: "open", outPartial: "partially_paid", outPaid: "paid", outVoid: "void"}

// recentBills: one open and not yet due (due 45 days after its date), a
// draft, one open past its due date.
var recentBills = actionable{
	outcomes: []outcome{outOpen, outDraft, outOverdue},
	ages:     []time.Duration{5 * oneDay, 2 * oneDay, 70 * oneDay},
}

// bills writes vendors' bills with the payments that settle them.
func (g *gen) bills() {
	n := scale(g.n, 20, 5)
	for i := 0; i < n; i++ {
		if i%10_000 == 0 && g.t.bills.s.stopped() {
			return
		}
		at, rank := g.recent(i, n, recentBills.ages)
		v := g.vendorsL[g.rng.IntN(before(len(g.vendorsL), func(i int) time.Time { return g.rosterTime(i, len(g.vendorsL)) }, at))]
		lines, tot := g.docLines(at)
		for j := range lines {
			lines[j].Description = "Purchase: " + lines[j].Description
		}
		due := at.AddDate(0, 0, 45)
		out, forced := recentBills.outcome(rank)
		var pays []settlement
		if !forced {
			out, pays = g.settle(at, due, tot.incl)
		}
		id := g.id("bill", at)
		paid, remaining := paidOf(out, pays, tot.incl)
		num := g.next("bill")
		g.t.bills.row(append(g.base(id, at, at), fmt.Sprintf("BILL-%06d", num), day(at), day(due), v.currency, js(lines),
			"Vendor ref "+strings.ToUpper(slugify(v.name))[:3]+fmt.Sprint(num), tot.excl, tot.vat, tot.incl,
			v.id, v.name, billStatus[out], paid, remaining)...)
		for _, p := range pays {
			g.t.billPayments.row(append(g.base(g.id("bpay", p.at), p.at, p.at), id,
				fmt.Sprintf("BPMT-%07d", g.next("bpay")), fmt.Sprintf("OUT-%06d", g.seq["bpay"]), p.status, day(p.at), nil,
				v.currency, p.amount, p.remaining, v.id, v.name)...)
		}
	}
}
