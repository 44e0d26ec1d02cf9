package document

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/pdf"
	"github.com/ledgerbase/ledgerbase/assets/fonts"
)

// families are the embedded fonts, parsed once per process: Noto Sans for
// Latin, then Noto Sans Arabic.
var families = sync.OnceValues(func() ([2]pdf.Family, error) {
	var f [4]*pdf.Font
	for i, data := range [][]byte{fonts.SansRegular, fonts.ArabicRegular, fonts.SansBold, fonts.ArabicBold} {
		var err error
		if f[i], err = pdf.ParseFont(data); err != nil {
			return [2]pdf.Family{}, err
		}
	}
	return [2]pdf.Family{{f[0], f[1]}, {f[2], f[3]}}, nil
})

// A4 portrait, in points.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 42.0
	contentW     = pageW - 2*margin

	sizeBody  = 9.0
	sizeSmall = 7.5
	sizeTable = 8.5
	sizeTitle = 20.0
	leading   = 1.35 // line height, times the font size

	maxFooterLines = 6 // a longer footer is cut: pages are for the lines
)

var (
	muted  = pdf.Color{R: 0.38, G: 0.38, B: 0.40}
	rule   = pdf.Color{R: 0.80, G: 0.80, B: 0.82}
	shade  = pdf.Color{R: 0.93, G: 0.94, B: 0.95}
	accent = pdf.Color{R: 0.13, G: 0.20, B: 0.33}
)

// WritePDF writes d as a PDF: A4, the seller with the logo, the title and
// dates, the buyer, the lines (repeating their header on every page),
// totals and the VAT summary, payment instructions, notes, the footer and
// "Page n of m" on every page. An Arabic document is mirrored, right to
// left; a bilingual one shows every label in English and in Arabic.
func WritePDF(w io.Writer, d *Doc) error {
	fams, err := families()
	if err != nil {
		return err
	}
	l := &layout{d: d, sh: pdf.NewShaper(), doc: pdf.New(), regular: fams[0], bold: fams[1],
		rtl: d.Lang.RTL(), sides: d.Lang.Sides()}
	defer l.sh.Release()
	l.doc.Title = d.Lang.Text(d.Kind.Title()) + " " + d.Number
	l.doc.Lang = string(l.sides[0])
	l.footer()
	l.newPage()
	l.header()
	l.table()
	if d.Kind != Shipment {
		l.totals()
	}
	if d.Kind != Shipment && d.PaymentInstructions != "" {
		l.paragraph(PaymentInstr, d.PaymentInstructions)
	}
	if d.Notes != "" {
		l.paragraph(Notes, d.Notes)
	}
	l.finish()
	return l.doc.Write(w)
}

type layout struct {
	d             *Doc
	sh            *pdf.Shaper
	doc           *pdf.Document
	page          *pdf.Page
	pages         []*pdf.Page
	regular, bold pdf.Family
	rtl           bool
	sides         []Lang
	y             float64 // where the next block starts, from the page's top
	bottom        float64 // where the footer starts
	footLines     []string
	cols          []column
}

// bilingual reports whether labels show in two languages.
func (l *layout) bilingual() bool { return len(l.sides) > 1 }

func (l *layout) fam(bold bool) pdf.Family {
	if bold {
		return l.bold
	}
	return l.regular
}

// label is k in each of the document's languages.
func (l *layout) label(k Label, args ...any) []string {
	out := make([]string, len(l.sides))
	for i, s := range l.sides {
		out[i] = s.Text(k, args...)
	}
	return out
}

// rtlText reports whether s reads right to left: everything in an Arabic
// document; elsewhere, text whose first letter is Arabic.
func (l *layout) rtlText(s string) bool {
	if l.rtl {
		return true
	}
	for _, r := range s {
		if unicode.IsLetter(r) {
			return unicode.In(r, unicode.Arabic, unicode.Hebrew)
		}
	}
	return false
}

// data marks a value (a name, a number, a date, an amount) as a whole on
// a page with Arabic: an isolate keeps a Latin name, a phone number or an
// amount left to right and its punctuation where it belongs (left to right
// when it has no Arabic letter, else in the direction of its first letter).
func (l *layout) data(s string) string {
	arabic := strings.ContainsFunc(s, func(r rune) bool { return unicode.In(r, unicode.Arabic, unicode.Hebrew) && unicode.IsLetter(r) })
	switch {
	case s == "" || !(l.rtl || l.bilingual() || arabic):
		return s
	case arabic:
		return "\u2068" + s + "\u2069"
	}
	return "\u2066" + s + "\u2069"
}

// shape lays out one line of text.
func (l *layout) shape(s string, bold bool) *pdf.Text {
	return l.sh.Shape(s, l.fam(bold), l.rtlText(s))
}

type align int

const (
	start align = iota // left, or right on an Arabic page
	end
	center
)

// px is where a box at logical x (from the start edge of the content)
// of width w is on the page: an Arabic page is mirrored.
func (l *layout) px(x, w float64) float64 {
	if l.rtl {
		return margin + contentW - x - w
	}
	return margin + x
}

// put draws one line in the box at logical x of width w, baseline y.
func (l *layout) put(t *pdf.Text, x, w, y, size float64, a align, c pdf.Color) {
	tw := t.WidthAt(size)
	left := l.px(x, w)
	if l.rtl {
		a = map[align]align{start: end, end: start, center: center}[a]
	}
	switch a {
	case end:
		left += w - tw
	case center:
		left += (w - tw) / 2
	}
	l.page.Text(t, left, y, size, c)
}

func (l *layout) text(s string, x, w, y, size float64, bold bool, a align, c pdf.Color) {
	l.put(l.shape(s, bold), x, w, y, size, a, c)
}

// wrap breaks text into lines that fit w at size.
func (l *layout) wrap(s string, w, size float64, bold bool) []string {
	return l.sh.Wrap(s, l.fam(bold), l.rtlText(s), size, w)
}

// pair draws a label in the box: alone at the start, or English at the
// start and Arabic at the end of the box, side by side.
func (l *layout) pair(k Label, x, w, y, size float64, bold bool, c pdf.Color) {
	texts := l.label(k)
	l.text(texts[0], x, w, y, size, bold, start, c)
	if len(texts) > 1 {
		l.text(texts[1], x, w, y, size, bold, end, c)
	}
}

// rowGap is the space between the texts of a row.
const rowGap = 10.0

// rowWidth is how wide row draws texts.
func (l *layout) rowWidth(texts []string, size float64, bold bool) float64 {
	total := rowGap * float64(len(texts)-1)
	for _, s := range texts {
		total += l.shape(s, bold).WidthAt(size)
	}
	return total
}

// row draws texts one after the other, rowGap apart, aligned in the box
// as one: a label in English beside the same in Arabic.
func (l *layout) row(texts []string, x, w, y, size float64, bold bool, a align, c pdf.Color) {
	shaped := make([]*pdf.Text, len(texts))
	for i, s := range texts {
		shaped[i] = l.shape(s, bold)
	}
	total := l.rowWidth(texts, size, bold)
	at := 0.0 // from the start of the group
	switch a {
	case end:
		at = w - total
	case center:
		at = (w - total) / 2
	}
	for _, t := range shaped {
		tw := t.WidthAt(size)
		l.put(t, x+at, tw, y, size, start, c)
		at += tw + rowGap
	}
}

func (l *layout) newPage() {
	l.page = l.doc.AddPage(pageW, pageH)
	l.pages = append(l.pages, l.page)
	l.y = margin
	if len(l.pages) > 1 { // a running head: title and number, seller
		l.row(append(l.label(l.d.Kind.Title()), l.data(l.d.Number)), 0, contentW, l.y+sizeBody, sizeBody, true, start, accent)
		l.text(l.data(l.d.Seller.Name), 0, contentW, l.y+sizeBody, sizeBody, false, end, muted)
		l.y += sizeBody*leading + 10
	}
}

// room starts a new page unless h more points fit on this one.
func (l *layout) room(h float64) bool {
	if l.y+h <= l.bottom {
		return false
	}
	l.newPage()
	return true
}

// footer measures the footer so every page keeps room for it.
func (l *layout) footer() {
	if l.d.Footer != "" {
		l.footLines = l.wrap(l.d.Footer, contentW, sizeSmall, false)
		l.footLines = l.footLines[:min(len(l.footLines), maxFooterLines)]
	}
	l.bottom = pageH - margin - float64(len(l.footLines)+1)*sizeSmall*leading - 8
}

// finish draws the footer and "Page n of m" on every page.
func (l *layout) finish() {
	n := len(l.pages)
	for i, p := range l.pages {
		l.page = p
		y := l.bottom + 8
		l.page.Line(margin, y, margin+contentW, y, 0.5, rule)
		for _, s := range l.footLines {
			y += sizeSmall * leading
			l.text(l.data(s), 0, contentW, y, sizeSmall, false, center, muted)
		}
		y += sizeSmall * leading
		l.row(l.label(PageOf, i+1, n), 0, contentW, y, sizeSmall, false, end, muted)
	}
}

// date is t in the document's language.
func (l *layout) date(t time.Time) string { return t.Format(l.d.Lang.Text(DateLayout)) }

// money is minor units of the document's currency as its reader reads them.
func (l *layout) money(minor int64) string {
	return money.Format(minor, l.d.Currency, string(l.sides[0]))
}

// partyLines are a party's lines under its name.
func (l *layout) partyLines(p Party, seller bool) []string {
	var out []string
	for _, s := range strings.Split(p.Address, "\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	add := func(k Label, v string) {
		if v != "" {
			out = append(out, l.d.Lang.Text(Field, strings.Join(l.label(k), " / "), l.data(v)))
		}
	}
	add(VATNumber, p.VATNumber)
	if seller {
		add(RegistrationNumber, p.RegistrationNumber)
	}
	add(Email, p.Email)
	add(Phone, p.Phone)
	if seller {
		add(Website, p.Website)
	}
	return out
}

// header draws the seller (with the logo) at the start, the title and the
// document's dates at the end, then the buyer.
func (l *layout) header() {
	d := l.d
	top := l.y
	// Seller, under the logo.
	sellerW := contentW * 0.5
	y := top
	if d.Logo != nil && len(d.Logo.Data) > 0 {
		img, err := pdf.LoadImage(d.Logo.MediaType, d.Logo.Data)
		if err != nil {
			slog.Warn("document: logo left out", "number", d.Number, "err", err)
		} else {
			const boxW, boxH = 150.0, 56.0
			s := min(boxW/float64(img.W), boxH/float64(img.H))
			w, h := float64(img.W)*s, float64(img.H)*s
			l.page.Image(img, l.px(0, w), y, w, h)
			y += h + 10
		}
	}
	for i, line := range l.wrap(d.Seller.Name, sellerW, 11, true) {
		if i > 0 {
			y += 11 * 1.2
		} else {
			y += 11
		}
		l.text(l.data(line), 0, sellerW, y, 11, true, start, pdf.Black)
	}
	for _, s := range l.partyLines(d.Seller, true) {
		for _, line := range l.wrap(s, sellerW, sizeSmall+0.5, false) {
			y += (sizeSmall + 0.5) * leading
			l.text(l.data(line), 0, sellerW, y, sizeSmall+0.5, false, start, muted)
		}
	}
	sellerEnd := y

	// Title and the document's facts, at the end.
	boxW := contentW * 0.42
	if l.bilingual() {
		boxW = contentW * 0.5
	}
	boxX := contentW - boxW
	y = top + sizeTitle
	titles, size := l.label(d.Kind.Title()), sizeTitle
	if w := l.rowWidth(titles, size, true); w > boxW { // a long title in a narrow box
		size = max(12, size*boxW/w)
	}
	l.row(titles, boxX, boxW, y, size, true, end, accent)
	y += 8
	labelW := boxW * 0.55
	row := func(k Label, v string) {
		y += sizeBody * leading
		l.pair(k, boxX, labelW, y, sizeBody, false, muted)
		l.text(l.data(v), boxX+labelW, boxW-labelW, y, sizeBody, false, end, pdf.Black)
	}
	row(Number, d.Number)
	if !d.Date.IsZero() {
		row(Date, l.date(d.Date))
	}
	if !d.DueDate.IsZero() {
		k := DueDate
		if d.Kind == Quote {
			k = ValidUntil
		}
		row(k, l.date(d.DueDate))
	}
	if d.Reference != "" {
		row(Reference, d.Reference)
	}
	y = max(y, sellerEnd) + 22

	// Buyer.
	buyerW := contentW * 0.5
	k := BillTo
	if d.Kind == Shipment {
		k = ShipTo
	}
	l.pair(k, 0, buyerW, y, sizeSmall, true, muted)
	y += 4
	for _, line := range l.wrap(d.Buyer.Name, buyerW, 10, true) {
		y += 10 * 1.25
		l.text(l.data(line), 0, buyerW, y, 10, true, start, pdf.Black)
	}
	for _, s := range l.partyLines(d.Buyer, false) {
		for _, line := range l.wrap(s, buyerW, sizeBody, false) {
			y += sizeBody * leading
			l.text(l.data(line), 0, buyerW, y, sizeBody, false, start, pdf.Black)
		}
	}
	l.y = y + 24
}

// column is one column of the lines table.
type column struct {
	label Label
	w     float64
	a     align
	cell  func(Line) string
}

func (l *layout) columns() []column {
	lang := string(l.sides[0])
	desc := column{Description, 0, start, func(ln Line) string { return ln.Description }}
	qty := column{Quantity, 56, end, func(ln Line) string { return money.Decimal(ln.QtyMilli, 3, lang) }}
	if l.d.Kind == Shipment {
		qty.w = 90
		desc.w = contentW - qty.w
		return []column{desc, qty}
	}
	pct := func(bp int64) string { return money.Decimal(bp, 2, lang) + " %" }
	cols := []column{desc, qty,
		{UnitPrice, 78, end, func(ln Line) string { return l.money(ln.UnitPriceCents) }},
		{Discount, 50, end, func(ln Line) string { return pct(ln.DiscountBP) }},
		{VATRateCol, 50, end, func(ln Line) string { return pct(ln.VATRateBP) }},
		{Amount, 84, end, func(ln Line) string { return l.money(ln.AmountCents) }},
	}
	cols[0].w = contentW
	for _, c := range cols[1:] {
		cols[0].w -= c.w
	}
	return cols
}

const cellPad = 4.0

// tableHeader draws the lines table's header row.
func (l *layout) tableHeader() {
	type cell struct {
		lines []string
		bold  []bool
	}
	cells := make([]cell, len(l.cols))
	rows := 0
	for i, c := range l.cols {
		for j, s := range l.label(c.label) {
			for _, line := range l.wrap(s, c.w-2*cellPad, sizeSmall+0.5, j == 0) {
				cells[i].lines = append(cells[i].lines, line)
				cells[i].bold = append(cells[i].bold, j == 0)
			}
		}
		rows = max(rows, len(cells[i].lines))
	}
	lh := (sizeSmall + 0.5) * leading
	h := float64(rows)*lh + 2*cellPad
	l.room(h + 30)
	l.page.Rect(margin, l.y, contentW, h, shade)
	x := 0.0
	for i, c := range l.cols {
		y := l.y + cellPad + sizeSmall
		for j, s := range cells[i].lines {
			l.text(s, x+cellPad, c.w-2*cellPad, y, sizeSmall+0.5, cells[i].bold[j], c.a, accent)
			y += lh
		}
		x += c.w
	}
	l.y += h
}

// table draws the lines, wrapping descriptions; a row that does not fit
// goes to a new page under the header again (one longer than a page is
// split, its numbers on its first part).
func (l *layout) table() {
	l.cols = l.columns()
	l.tableHeader()
	lh := sizeTable * leading
	descW := l.cols[0].w - 2*cellPad
	for _, ln := range l.d.Lines {
		desc := l.wrap(ln.Description, descW, sizeTable, false)
		for first := true; first || len(desc) > 0; first = false {
			n := len(desc)
			if l.room(float64(max(n, 1))*lh + 2*cellPad) {
				l.tableHeader()
			}
			if fit := int((l.bottom - l.y - 2*cellPad) / lh); n > fit {
				n = max(fit, 1)
			}
			y := l.y + cellPad + sizeTable
			for i, s := range desc[:n] {
				l.text(l.data(s), cellPad, descW, y+float64(i)*lh, sizeTable, false, start, pdf.Black)
			}
			desc = desc[n:]
			if first {
				x := l.cols[0].w
				for _, c := range l.cols[1:] {
					l.text(l.data(c.cell(ln)), x+cellPad, c.w-2*cellPad, y, sizeTable, false, c.a, pdf.Black)
					x += c.w
				}
			}
			l.y += float64(max(n, 1))*lh + 2*cellPad
			l.page.Line(margin, l.y, margin+contentW, l.y, 0.4, rule)
		}
	}
	l.y += 16
}

// totals draws the VAT summary at the start and the totals at the end,
// side by side.
func (l *layout) totals() {
	d := l.d
	lh := sizeBody * leading
	type row struct {
		k    Label
		v    int64
		bold bool
	}
	rows := []row{{Subtotal, d.SubtotalCents, false}, {VAT, d.VATCents, false}, {Total, d.TotalCents, true}}
	if d.Kind == Invoice {
		rows = append(rows, row{Paid, d.PaidCents, false}, row{Credited, d.CreditedCents, false}, row{Remaining, d.RemainingCents, true})
	}
	sumH := float64(len(d.VATSummary)+1+len(l.sides))*lh + 12
	l.room(max(float64(len(rows))*lh+16, sumH))
	top := l.y

	// VAT summary: rate, taxable base, VAT.
	sumW, boxW := contentW*0.46, contentW*0.46
	if l.bilingual() {
		sumW, boxW = contentW*0.40, contentW*0.56
	}
	if len(d.VATSummary) > 0 {
		y := top + sizeBody
		l.pair(VATSummaryT, 0, sumW, y, sizeSmall+0.5, true, accent)
		y += 6
		ws := []float64{sumW * 0.24, sumW * 0.40, sumW * 0.36}
		heads := []Label{Rate, TaxableBase, VAT}
		y += lh
		for j := range l.sides {
			if j > 0 {
				y += sizeSmall * leading
			}
			x := 0.0
			for i, k := range heads {
				l.text(l.label(k)[j], x, ws[i], y, sizeSmall, false, end, muted)
				x += ws[i]
			}
		}
		l.page.Line(l.px(0, sumW), y+3, l.px(0, sumW)+sumW, y+3, 0.4, rule)
		lang := string(l.sides[0])
		for _, r := range d.VATSummary {
			y += lh
			cells := []string{money.Decimal(r.RateBP, 2, lang) + " %", l.money(r.BaseCents), l.money(r.VATCents)}
			x := 0.0
			for i, s := range cells {
				l.text(l.data(s), x, ws[i], y, sizeBody, false, end, pdf.Black)
				x += ws[i]
			}
		}
		l.y = max(l.y, y)
	}

	// Totals.
	boxX := contentW - boxW
	labelW := boxW * 0.64
	y := top
	for i, r := range rows {
		if r.k == Total || r.k == Paid {
			l.page.Line(l.px(boxX, boxW), y+3, l.px(boxX, boxW)+boxW, y+3, 0.6, rule)
			y += 4
		}
		if i > 0 && r.bold {
			y += 2
		}
		y += lh
		l.pair(r.k, boxX, labelW, y, sizeBody, r.bold, pdf.Black)
		l.text(l.data(l.money(r.v)), boxX+labelW, boxW-labelW, y, sizeBody, r.bold, end, pdf.Black)
	}
	l.y = max(l.y, y) + 24
}

// paragraph draws a heading and wrapped text, across pages if it must.
func (l *layout) paragraph(k Label, text string) {
	lh := sizeBody * leading
	l.room(lh * 3)
	l.pair(k, 0, contentW, l.y+sizeSmall, sizeSmall+0.5, true, accent)
	l.y += sizeSmall + 6
	for _, line := range l.wrap(text, contentW, sizeBody, false) {
		l.room(lh)
		l.y += lh
		l.text(l.data(line), 0, contentW, l.y, sizeBody, false, start, pdf.Black)
	}
	l.y += 18
}
