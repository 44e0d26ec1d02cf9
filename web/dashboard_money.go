package web

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// money is an amount in one currency.
type money struct {
	Currency string
	Cents    int64
}

func (m money) String() string { return amountText(m.Cents, m.Currency) }

// figure is one number of the dashboard and the list of exactly the
// records it adds up.
type figure struct {
	Label   string
	N       int64
	Amounts []money // per currency; none for a count alone
	Href    string
}

func (f *figure) add(currency string, n, cents int64) {
	f.N += n
	for i := range f.Amounts {
		if f.Amounts[i].Currency == currency {
			f.Amounts[i].Cents += cents
			return
		}
	}
	f.Amounts = append(f.Amounts, money{Currency: currency, Cents: cents})
	slices.SortFunc(f.Amounts, func(a, b money) int { return strings.Compare(a.Currency, b.Currency) })
}

// amountText is the figure's amounts, one per currency: "€1,200.00 · $80.00".
func (f figure) amountText() string {
	if len(f.Amounts) == 0 {
		return "0" // no currency: nothing to show decimals of
	}
	parts := make([]string, len(f.Amounts))
	for i, m := range f.Amounts {
		parts[i] = m.String()
	}
	return strings.Join(parts, " · ")
}

func (f figure) countText(singular, plural string) string {
	if f.N == 1 {
		return "1 " + singular
	}
	return group(strconv.FormatInt(f.N, 10)) + " " + plural
}

// monthBar is one month of the sales chart.
type monthBar struct {
	Month string // 2026-03
	Label string // Mar
	figure
}

// moneyView is what the workspace is owed and owes, and what it invoiced.
type moneyView struct {
	Open, NotDue, Overdue figure
	Aging                 []figure // by days past due: 0–30, 31–60, 61–90, over 90
	Bills, BillsPastDue   figure
	ToShip                figure
	Months                []monthBar // the last 12, oldest first
	ChartCurrency         string     // the currency the chart draws (the largest)
	OtherCurrencies       bool
	Today                 string
}

// Which statuses make what: they are the documents' declared states.
var (
	openInvoiceStates = []string{"sent", "partially_paid", "overdue"}
	notDueStates      = []string{"sent", "partially_paid"}
	issuedStates      = []string{"sent", "partially_paid", "paid", "overdue"}
	openBillStates    = []string{"open", "partially_paid"}
	toShipStates      = []string{"confirmed", "partially_shipped"}
)

// agingBuckets are the ranges of days past due; the first has no upper end
// and the last no lower one, so together they hold every overdue invoice.
var agingBuckets = []struct {
	Label    string
	From, To int // days past due, inclusive; -1: open
}{{"0–30 days", -1, 30}, {"31–60 days", 31, 60}, {"61–90 days", 61, 90}, {"Over 90 days", 91, -1}}

// listURL is the record list of r filtered by params (in the order given).
func listURL(ws *ent.Workspace, r *resource.Resource, params ...string) string {
	var q []string
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] != "" {
			q = append(q, url.QueryEscape(params[i])+"="+url.QueryEscape(params[i+1]))
		}
	}
	u := wsURL(ws, "records", r.Name)
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	return u
}

// moneyOf reads the figures from the kept sums (shortcut.Sums) and the
// kept per-status counts: a few hundred small rows whatever the number of
// invoices.
func (u *UI) moneyOf(ctx context.Context, ws *ent.Workspace, now time.Time) (moneyView, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	day := func(daysAgo int) string { return today.AddDate(0, 0, -daysAgo).Format(time.DateOnly) }
	inv, bills, orders := resource.Invoices, resource.Bills, resource.SalesOrders
	v := moneyView{Today: today.Format(time.DateOnly)}
	v.Open = figure{Label: "Open", Href: listURL(ws, inv, "status", strings.Join(openInvoiceStates, ","))}
	v.NotDue = figure{Label: "Not yet due", Href: listURL(ws, inv, "status", strings.Join(notDueStates, ","))}
	v.Overdue = figure{Label: "Overdue", Href: listURL(ws, inv, "status", "overdue")}
	// Each bucket's due dates, inclusive; "" is an open end.
	froms, tos := make([]string, len(agingBuckets)), make([]string, len(agingBuckets))
	for i, b := range agingBuckets {
		if b.To >= 0 {
			froms[i] = day(b.To) // due this many days ago at the most
		}
		if b.From >= 0 {
			tos[i] = day(b.From)
		}
		v.Aging = append(v.Aging, figure{Label: b.Label,
			Href: listURL(ws, inv, "status", "overdue", "due_date_from", froms[i], "due_date_to", tos[i])})
	}
	open, err := shortcut.Of(u.db).SumsOf(ctx, ws.ID, "invoices.open")
	if err != nil {
		return v, err
	}
	for _, r := range open {
		v.Open.add(r.Currency, r.N, r.Cents)
		if r.Status != "overdue" {
			v.NotDue.add(r.Currency, r.N, r.Cents)
			continue
		}
		v.Overdue.add(r.Currency, r.N, r.Cents)
		// Bucket by the same dates the links filter on.
		for i := range agingBuckets {
			if (froms[i] == "" || r.By >= froms[i]) && (tos[i] == "" || r.By <= tos[i]) {
				v.Aging[i].add(r.Currency, r.N, r.Cents)
				break
			}
		}
	}

	v.Bills = figure{Label: "Open bills", Href: listURL(ws, bills, "status", strings.Join(openBillStates, ","))}
	v.BillsPastDue = figure{Label: "Past due", Href: listURL(ws, bills, "status", strings.Join(openBillStates, ","), "due_date_to", day(1))}
	owed, err := shortcut.Of(u.db).SumsOf(ctx, ws.ID, "bills.open")
	if err != nil {
		return v, err
	}
	yesterday := day(1)
	for _, r := range owed {
		v.Bills.add(r.Currency, r.N, r.Cents)
		if r.By != "" && r.By <= yesterday {
			v.BillsPastDue.add(r.Currency, r.N, r.Cents)
		}
	}

	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -11, 0)
	for i := 0; i < 12; i++ {
		m := first.AddDate(0, i, 0)
		last := m.AddDate(0, 1, -1)
		v.Months = append(v.Months, monthBar{Month: m.Format("2006-01"), Label: m.Format("Jan"), figure: figure{
			Label: m.Format("January 2006"),
			Href: listURL(ws, inv, "status", strings.Join(issuedStates, ","),
				"date_from", m.Format(time.DateOnly), "date_to", last.Format(time.DateOnly)),
		}})
	}
	issued, err := shortcut.Of(u.db).SumsOf(ctx, ws.ID, "invoices.issued")
	if err != nil {
		return v, err
	}
	byCurrency := map[string]int64{}
	for _, r := range issued {
		i := slices.IndexFunc(v.Months, func(b monthBar) bool { return b.Month == r.By })
		if i < 0 {
			continue
		}
		v.Months[i].add(r.Currency, r.N, r.Cents)
		byCurrency[r.Currency] += r.Cents
	}
	for c, total := range byCurrency {
		if v.ChartCurrency == "" || total > byCurrency[v.ChartCurrency] || (total == byCurrency[v.ChartCurrency] && c < v.ChartCurrency) {
			v.ChartCurrency = c
		}
	}
	v.OtherCurrencies = len(byCurrency) > 1

	// Orders waiting to ship: the per-status counts GET /v1/sales-orders?status=… answers its total from.
	v.ToShip = figure{Label: "Orders to ship", Href: listURL(ws, orders, "status", strings.Join(toShipStates, ","))}
	env, _, err := u.list(ctx, ws, orders, records.Page{Limit: 1,
		Filters: []records.FilterValue{{Column: "status", Value: toShipStates}}})
	if err != nil {
		return v, err
	}
	v.ToShip.N = int64(env.Meta.Total)
	return v, nil
}

// chart is the sales chart's geometry: bars of the chart currency scaled
// to the largest month, with a few round gridlines.
type chart struct {
	W, H, Left, Bottom, Top float64
	Bars                    []chartBar
	Grid                    []chartLine
}

type chartBar struct {
	X, Y, W, H float64
	Label      string // month; "" where a narrow chart has no room for it
	Title      string // "March 2026: €12,345.00, 31 invoices"
	Href       string
}

type chartLine struct {
	Y     float64
	Label string
}

// chartShape is a chart's drawing size, in the units its text is drawn
// in: drawn on a phone, the narrow one keeps its text about the size of
// the page's rather than scaling a wide drawing's text down by half.
type chartShape struct {
	W, H, Font float64
	Every      int // a month label every so many bars
}

var (
	wideChart   = chartShape{W: 720, H: 260, Font: 12, Every: 1}
	narrowChart = chartShape{W: 340, H: 230, Font: 13, Every: 2}
)

func (v moneyView) chart(s chartShape) chart {
	c := chart{W: s.W, H: s.H, Bottom: s.Font + 16, Top: 12}
	var top int64
	amount := func(b monthBar) int64 {
		for _, m := range b.Amounts {
			if m.Currency == v.ChartCurrency {
				return m.Cents
			}
		}
		return 0
	}
	for _, b := range v.Months {
		top = max(top, amount(b))
	}
	step := niceStep(top)
	scaleTop := step * 4
	if scaleTop == 0 {
		scaleTop = 1
	}
	plotH := c.H - c.Bottom - c.Top
	// The gridlines' labels set the left margin: the longest fits.
	widest := 0
	for k := int64(0); k <= 4; k++ {
		label := shortMoney(k*step, v.ChartCurrency)
		widest = max(widest, len([]rune(label)))
		c.Grid = append(c.Grid, chartLine{Y: c.Top + plotH - plotH*float64(k*step)/float64(scaleTop), Label: label})
	}
	c.Left = 10 + float64(widest)*s.Font*0.62
	right := 1.6 * s.Font // half the latest month's label, centred on its bar
	slot := (c.W - c.Left - right) / float64(len(v.Months))
	for i, b := range v.Months {
		h := plotH * float64(amount(b)) / float64(scaleTop)
		title := b.figure.Label + ": " + b.amountText() + ", " + b.countText("invoice", "invoices")
		bar := chartBar{X: c.Left + float64(i)*slot + slot*0.15, W: slot * 0.7, Y: c.Top + plotH - h, H: h, Title: title, Href: b.Href}
		if (len(v.Months)-1-i)%s.Every == 0 { // the latest month always labelled
			bar.Label = b.Month[5:] + "/" + b.Month[2:4]
		}
		c.Bars = append(c.Bars, bar)
	}
	return c
}

// niceStep is a round gridline step (1, 2 or 5 × 10ⁿ minor units) such
// that four steps reach top.
func niceStep(top int64) int64 {
	if top <= 0 {
		return 0
	}
	need := (top + 3) / 4
	for p := int64(100); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= need {
				return m * p
			}
		}
	}
}

// shortMoney writes minor units of currency in whole units, shortened, as
// money.Format writes the currency: €1.2k, €3.4M, KWD 500.
func shortMoney(minor int64, currency string) string {
	units := float64(minor) / math.Pow10(pricing.Digits(currency))
	n := strconv.FormatFloat(units, 'f', -1, 64)
	switch {
	case units >= 1e6:
		n = strconv.FormatFloat(units/1e6, 'f', -1, 64) + "M"
	case units >= 1e3:
		n = strconv.FormatFloat(units/1e3, 'f', -1, 64) + "k"
	}
	if currency == "" {
		return n
	}
	// The currency's symbol or code where money.Format puts it, around the number.
	zero := pricing.Format(0, currency, uiLang)
	first := strings.IndexFunc(zero, func(r rune) bool { return r >= '0' && r <= '9' })
	last := strings.LastIndexFunc(zero, func(r rune) bool { return r >= '0' && r <= '9' })
	if first < 0 {
		return n
	}
	return zero[:first] + n + zero[last+1:]
}

func px(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
