package web_test

import (
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/bill"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// seeded is one invoice the dashboard test writes, as the test knows it.
type seeded struct {
	number, status, currency string
	due                      int // days from today (negative: past)
	date                     string
	remaining, excl          int64
}

// money is an amount of the test's currencies (EUR, USD) as the pages
// print it in English: €1,234.56.
func money(cents int64, cur string) string {
	s := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	whole, frac, _ := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return map[string]string{"EUR": "€", "USD": "$"}[cur] + whole + "." + frac
}

// amounts prints per-currency sums as the dashboard does: "€12.00 · $3.00".
func amounts(by map[string]int64) string {
	var curs []string
	for c := range by {
		curs = append(curs, c)
	}
	slices.Sort(curs)
	var parts []string
	for _, c := range curs {
		parts = append(parts, money(by[c], c))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " · ")
}

var listedNumber = regexp.MustCompile(`>(INV-T\d+)<`)

// listed follows a dashboard link and returns the invoice numbers the list
// shows (the test's invoices have numbers INV-T…).
func listed(t *testing.T, c *webtest.Client, href string) []string {
	t.Helper()
	p := c.Get(html.UnescapeString(href))
	if p.Status != 200 {
		t.Fatalf("%s: %d\n%s", href, p.Status, p.Body)
	}
	var out []string
	for _, m := range listedNumber.FindAllStringSubmatch(p.Body, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// The dashboard's money figures equal the sums of the records behind them,
// and each links to a list of exactly those records.
func TestDashboardMoneyFigures(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	other := env.Workspace(t, "business", true, true)
	ctx := t.Context()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	thisMonth := today.Format("2006-01") + "-01"
	twoAgo := time.Date(today.Year(), today.Month()-2, 15, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	old := today.AddDate(-2, 0, 0).Format(time.DateOnly) // outside the chart's 12 months
	invoices := []seeded{
		{"INV-T01", "overdue", "EUR", -1, thisMonth, 10000, 9000},
		{"INV-T02", "overdue", "EUR", -30, twoAgo, 5000, 4000},
		{"INV-T03", "overdue", "EUR", -31, twoAgo, 3000, 3000},
		{"INV-T04", "overdue", "USD", -45, twoAgo, 700, 700},
		{"INV-T05", "overdue", "EUR", -60, old, 2500, 2000},
		{"INV-T06", "overdue", "EUR", -61, old, 1100, 1000},
		{"INV-T07", "overdue", "EUR", -90, old, 900, 800},
		{"INV-T08", "overdue", "EUR", -91, old, 400, 400},
		{"INV-T09", "overdue", "EUR", -400, old, 123, 100},
		{"INV-T10", "sent", "EUR", 10, thisMonth, 7000, 6000},
		{"INV-T11", "partially_paid", "EUR", 3, thisMonth, 2500, 5000},
		{"INV-T12", "paid", "EUR", -20, thisMonth, 0, 8000},
		{"INV-T13", "draft", "EUR", 20, thisMonth, 9999, 9999},
		{"INV-T14", "void", "EUR", -50, twoAgo, 0, 7777},
	}
	for _, w := range []*apitest.Workspace{ws, other} {
		for _, s := range invoices {
			if err := env.DB.Writer.Invoice.Create().SetWorkspaceID(w.ID).SetNumber(s.number).SetDate(s.date).SetDueDate(day(s.due)).
				SetCurrencyCode(s.currency).SetStatus(invoice.Status(s.status)).SetClientName("Dash Client").
				SetAmountExclVatCents(s.excl).SetAmountInclVatCents(s.excl + s.excl/5).SetRemainingCents(s.remaining).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Bills and orders of the workspace: open ones, one past due, and
	// orders waiting to ship among others.
	for i, b := range []struct {
		status    string
		due       int
		remaining int64
	}{{"open", -3, 4000}, {"partially_paid", 5, 1500}, {"paid", -10, 0}, {"draft", 1, 900}} {
		if err := env.DB.Writer.Bill.Create().SetWorkspaceID(ws.ID).SetNumber(fmt.Sprintf("BILL-T%d", i)).SetDate(day(-30)).
			SetDueDate(day(b.due)).SetStatus(bill.Status(b.status)).SetVendorName("Dash Vendor").SetRemainingCents(b.remaining).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, st := range []string{"confirmed", "partially_shipped", "confirmed", "draft", "shipped", "cancelled"} {
		if err := env.DB.Writer.SalesOrder.Create().SetWorkspaceID(ws.ID).SetNumber(fmt.Sprintf("SO-T%d", i)).SetDate(day(-2)).
			SetStatus(salesorder.Status(st)).SetClientName("Dash Client").Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	c := webtest.SignedIn(t, env)
	page := c.Get("/admin/w/" + ws.ID)
	if page.Status != 200 {
		t.Fatalf("dashboard: %d\n%s", page.Status, page.Body)
	}
	body := page.Body

	// What the test expects, from its own records.
	type want struct {
		n       int
		amounts map[string]int64
		numbers []string
	}
	expect := func(keep func(s seeded) bool, amount func(s seeded) int64) want {
		w := want{amounts: map[string]int64{}}
		for _, s := range invoices {
			if keep(s) {
				w.n++
				w.amounts[s.currency] += amount(s)
				w.numbers = append(w.numbers, s.number)
			}
		}
		slices.Sort(w.numbers)
		return w
	}
	remaining := func(s seeded) int64 { return s.remaining }
	isOpen := func(s seeded) bool {
		return s.status == "sent" || s.status == "partially_paid" || s.status == "overdue"
	}
	buckets := []struct {
		label    string
		from, to int // days past due, inclusive
	}{{"0–30 days", 0, 30}, {"31–60 days", 31, 60}, {"61–90 days", 61, 90}, {"Over 90 days", 91, 1 << 30}}
	var total int
	for _, b := range buckets {
		w := expect(func(s seeded) bool { return s.status == "overdue" && -s.due >= b.from && -s.due <= b.to }, remaining)
		total += w.n
		row := regexp.MustCompile(`<th scope="row"><a href="([^"]+)">` + b.label + `</a></th><td class="num">([^<]*)</td><td class="num">([^<]*)</td>`).FindStringSubmatch(body)
		if row == nil {
			t.Fatalf("no aging row %q on the dashboard", b.label)
		}
		if row[2] != strconv.Itoa(w.n) || html.UnescapeString(row[3]) != amounts(w.amounts) {
			t.Errorf("%s: the dashboard shows %s invoices, %s; the records add up to %d, %s", b.label, row[2], html.UnescapeString(row[3]), w.n, amounts(w.amounts))
		}
		if got := listed(t, c, row[1]); !slices.Equal(got, w.numbers) {
			t.Errorf("%s links to %s listing %v; want %v", b.label, row[1], got, w.numbers)
		}
	}
	if total != 9 {
		t.Fatalf("the buckets hold %d overdue invoices, want all 9", total)
	}
	card := func(label string) (href, amount, count string) {
		t.Helper()
		m := regexp.MustCompile(`<a class="card figure" href="([^"]+)"><div class="label">` + label + `</div><div class="n">([^<]*)</div><div class="label">([^<]*)</div>`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %q figure on the dashboard", label)
		}
		return m[1], html.UnescapeString(m[2]), m[3]
	}
	for _, f := range []struct {
		label string
		keep  func(s seeded) bool
	}{
		{"Open", isOpen},
		{"Not yet due", func(s seeded) bool { return s.status == "sent" || s.status == "partially_paid" }},
		{"Overdue", func(s seeded) bool { return s.status == "overdue" }},
	} {
		w := expect(f.keep, remaining)
		href, amount, count := card(f.label)
		if amount != amounts(w.amounts) || !strings.HasPrefix(count, strconv.Itoa(w.n)+" ") {
			t.Errorf("%s: shows %s, %s; want %s, %d", f.label, amount, count, amounts(w.amounts), w.n)
		}
		if got := listed(t, c, href); !slices.Equal(got, w.numbers) {
			t.Errorf("%s links to %s listing %v; want %v", f.label, href, got, w.numbers)
		}
	}
	if _, amount, count := card("Open bills"); amount != money(5500, "EUR") || count != "2 open bills" {
		t.Errorf("open bills: %s, %s", amount, count)
	}
	if href, amount, count := card("Past due"); amount != money(4000, "EUR") || count != "1 bill past due" {
		t.Errorf("bills past due: %s, %s", amount, count)
	} else if p := c.Get(html.UnescapeString(href)); !strings.Contains(p.Body, ">BILL-T0<") || strings.Contains(p.Body, ">BILL-T1<") {
		t.Errorf("past-due bills link %s lists the wrong bills", href)
	}
	toShip := regexp.MustCompile(`<a class="card figure" href="([^"]+)"><div class="label">Orders to ship</div><div class="n">(\d+)</div>`).FindStringSubmatch(body)
	if toShip == nil || toShip[2] != "3" {
		t.Fatalf("orders to ship: %v", toShip)
	}
	if p := c.Get(html.UnescapeString(toShip[1])); !strings.Contains(p.Body, "1–3 of 3") {
		t.Errorf("orders-to-ship link %s does not list 3 orders", toShip[1])
	}

	// Sales per month: drafts and void left out, by invoice date, links
	// to the month's invoices.
	for _, m := range []string{thisMonth[:7], twoAgo[:7]} {
		w := expect(func(s seeded) bool {
			return strings.HasPrefix(s.date, m) && s.status != "draft" && s.status != "void"
		}, func(s seeded) int64 { return s.excl })
		label, _ := time.Parse("2006-01", m)
		row := regexp.MustCompile(`<th scope="row"><a href="([^"]+)">` + label.Format("January 2006") + `</a></th><td class="num">([^<]*)</td><td class="num">([^<]*)</td>`).FindStringSubmatch(body)
		if row == nil {
			t.Fatalf("no chart row for %s", m)
		}
		if row[2] != strconv.Itoa(w.n) || html.UnescapeString(row[3]) != amounts(w.amounts) {
			t.Errorf("%s: shows %s, %s; want %d, %s", m, row[2], html.UnescapeString(row[3]), w.n, amounts(w.amounts))
		}
		if got := listed(t, c, row[1]); !slices.Equal(got, w.numbers) {
			t.Errorf("%s links to %s listing %v; want %v", m, row[1], got, w.numbers)
		}
	}
	// Two drawings, wide and narrow (a phone's), each an accessible SVG of
	// the 12 months whose gridlines read in money.
	for _, d := range []struct{ class, id string }{{"wide", "chart"}, {"narrow", "narrow-chart"}} {
		svg := regexp.MustCompile(`(?s)<svg class="` + d.class + `" viewBox=.*?</svg>`).FindString(body)
		if !strings.Contains(svg, `role="img" aria-labelledby="`+d.id+`-title `+d.id+`-desc"`) ||
			!strings.Contains(svg, `<title id="`+d.id+`-title">Sales invoiced per month, EUR</title>`) {
			t.Errorf("the %s chart is not an accessible SVG drawing EUR:\n%.300s", d.class, svg)
		}
		if n := strings.Count(svg, `<rect class="bar"`); n != 12 {
			t.Errorf("the %s chart has %d bars, want 12", d.class, n)
		}
		if !regexp.MustCompile(`<text class="axis"[^>]*>€\d`).MatchString(svg) {
			t.Errorf("the %s chart's gridlines are not labelled in euros", d.class)
		}
	}
}
