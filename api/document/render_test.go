package document

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ledgerbase/ledgerbase/api/money"
)

// tool is the path of an independent checker; under CI=true a missing one
// fails the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s on PATH: the PDF checks cannot run (apt-get install poppler-utils qpdf)", name)
		}
		t.Skipf("no %s on PATH: skipping the PDF checks (apt-get install poppler-utils qpdf to run them)", name)
	}
	return p
}

func logoPNG(t *testing.T) *Logo {
	img := image.NewNRGBA(image.Rect(0, 0, 120, 40))
	for y := 0; y < 40; y++ {
		for x := 0; x < 120; x++ {
			a := uint8(255)
			if x < 20 { // a transparent edge, for the soft mask
				a = uint8(x * 12)
			}
			img.Set(x, y, color.NRGBA{R: 20, G: uint8(60 + x), B: 140, A: a})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return &Logo{MediaType: "image/png", Data: b.Bytes()}
}

func logoJPEG(t *testing.T) *Logo {
	img := image.NewRGBA(image.Rect(0, 0, 90, 90))
	for y := 0; y < 90; y++ {
		for x := 0; x < 90; x++ {
			img.Set(x, y, color.RGBA{R: uint8(2 * x), G: 90, B: uint8(2 * y), A: 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return &Logo{MediaType: "image/jpeg", Data: b.Bytes()}
}

// sample is a document of n lines in lang and currency, priced as
// api/money would: amounts excluding VAT, VAT per rate.
func sample(kind Kind, lang Lang, currency string, n int, descs ...string) *Doc {
	d := &Doc{
		Kind: kind, Lang: lang, Number: "INV-000042", Currency: currency,
		Date:    time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
		DueDate: time.Date(2026, 4, 3, 0, 0, 0, 0, time.UTC), Reference: "SO-000007",
		Seller: Party{Name: "Ledgerbase Demo SARL", Address: "12 rue de la Paix\n75002 Paris", Country: "FR",
			VATNumber: "FR12345678901", RegistrationNumber: "RCS Paris 123 456 789", Email: "billing@demo.example",
			Phone: "+33 1 23 45 67 89", Website: "demo.example"},
		Buyer:               Party{Name: "Acme Trading LLC", Address: "PO Box 1234\nDubai", Country: "AE", VATNumber: "AE100200300400500"},
		PaymentInstructions: "IBAN FR76 3000 6000 0112 3456 7890 189, BIC AGRIFRPP",
		Notes:               "Thank you for your business.",
		Footer:              "Ledgerbase Demo SARL, capital 10 000 EUR, RCS Paris 123 456 789",
	}
	vat := map[int64]*VATRate{}
	for i := 0; i < n; i++ {
		desc := fmt.Sprintf("Item %03d consulting services", i+1)
		if i < len(descs) {
			desc = descs[i]
		}
		ln := Line{Description: desc, QtyMilli: int64(1000 + 500*(i%3)), UnitPriceCents: int64(12345 + 100*i),
			DiscountBP: int64(500 * (i % 2)), VATRateBP: []int64{2000, 550}[i%2]}
		ln.AmountCents = ln.QtyMilli * ln.UnitPriceCents / 1000 * (10000 - ln.DiscountBP) / 10000
		d.Lines = append(d.Lines, ln)
		r := vat[ln.VATRateBP]
		if r == nil {
			r = &VATRate{RateBP: ln.VATRateBP}
			vat[ln.VATRateBP] = r
			d.VATSummary = append(d.VATSummary, VATRate{})
		}
		r.BaseCents += ln.AmountCents
	}
	for i, rate := range []int64{2000, 550}[:len(d.VATSummary)] {
		r := vat[rate]
		r.VATCents = r.BaseCents * rate / 10000
		d.VATSummary[i] = *r
		d.SubtotalCents += r.BaseCents
		d.VATCents += r.VATCents
	}
	d.TotalCents = d.SubtotalCents + d.VATCents
	d.PaidCents = d.TotalCents / 3
	d.CreditedCents = 1000
	d.RemainingCents = d.TotalCents - d.PaidCents - d.CreditedCents
	return d
}

// rendered is a document written, its file, and the text the tools read.
type rendered struct {
	path          string
	layout, plain string
}

var marks = regexp.MustCompile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")

// norm is text as compared: no bidi marks, every space one space.
func norm(s string) string {
	s = marks.ReplaceAllString(s, "")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\t' || r == '\n' || r == '\r'
	}), " ")
}

func render(t *testing.T, name string, d *Doc) rendered {
	t.Helper()
	pdftotext, qpdf := tool(t, "pdftotext"), tool(t, "qpdf")
	var b bytes.Buffer
	if err := WritePDF(&b, d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), name+".pdf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(qpdf, "--check", path).CombinedOutput(); err != nil {
		t.Errorf("%s: qpdf --check: %v\n%s", name, err, out)
	}
	// A4 portrait, titled.
	info, err := exec.Command(tool(t, "pdfinfo"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: pdfinfo: %v\n%s", name, err, info)
	}
	if !strings.Contains(string(info), "595.28 x 841.89 pts (A4)") || !strings.Contains(string(info), "Title:") {
		t.Errorf("%s: not an A4 portrait document with a title:\n%s", name, info)
	}
	// Every font embedded as a subset with a ToUnicode map.
	fonts, err := exec.Command(tool(t, "pdffonts"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: pdffonts: %v\n%s", name, err, fonts)
	}
	rows := strings.Split(strings.TrimSpace(string(fonts)), "\n")[2:]
	if len(rows) == 0 {
		t.Errorf("%s: no fonts", name)
	}
	for _, row := range rows {
		if f := strings.Fields(row); len(f) < 8 || strings.Join(f[len(f)-5:len(f)-2], " ") != "yes yes yes" || f[len(f)-6] != "Identity-H" {
			t.Errorf("%s: a font not embedded as a subset with ToUnicode:\n%s", name, fonts)
		}
	}
	run := func(args ...string) string {
		out, err := exec.Command(pdftotext, append(args, path, "-")...).Output()
		if err != nil {
			t.Fatalf("%s: pdftotext %v: %v", name, args, err)
		}
		return string(out)
	}
	return rendered{path: path, layout: run("-layout"), plain: run()}
}

// has checks that each of want appears in both extractions, its
// characters in logical order. Where digits sit inside Arabic text,
// poppler moves the spaces around them, so there the spaces are not
// compared.
func (r rendered) has(t *testing.T, name string, want ...string) {
	t.Helper()
	for _, got := range []struct{ how, text string }{{"pdftotext -layout", r.layout}, {"pdftotext", r.plain}} {
		text := norm(got.text)
		for _, w := range want {
			w = norm(w)
			if strings.Contains(text, w) {
				continue
			}
			mixed := strings.ContainsFunc(w, unicode.IsDigit) && strings.ContainsFunc(w, func(r rune) bool { return unicode.Is(unicode.Arabic, r) })
			if mixed && strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(w, " ", "")) {
				continue
			}
			t.Errorf("%s: %s has no %q", name, got.how, w)
		}
	}
}

func TestWritePDFLanguages(t *testing.T) {
	for _, c := range []struct {
		lang     Lang
		currency string
		logo     func(*testing.T) *Logo
	}{{"en", "EUR", logoPNG}, {"fr", "EUR", logoJPEG}, {"en", "JPY", nil}, {"fr", "KWD", logoPNG}, {"ar", "KWD", logoPNG}, {"bilingual", "KWD", logoJPEG}} {
		name := string(c.lang) + "-" + c.currency
		d := sample(Invoice, c.lang, c.currency, 3, "Conseil en stratégie, atelier d’une journée", "استشارات", "Widget")
		if c.logo != nil {
			d.Logo = c.logo(t)
		}
		if c.lang == "ar" {
			d.Buyer.Name = "شركة النور للتجارة"
		}
		r := render(t, name, d)
		if testing.Verbose() {
			os.WriteFile("/tmp/"+name+".pdf", mustRead(t, r.path), 0o644)
			t.Logf("%s\n%s", name, r.layout)
		}
		lang := string(c.lang.Sides()[0])
		want := []string{d.Seller.Name, d.Buyer.Name, d.Number, d.Buyer.VATNumber,
			d.Date.Format(c.lang.Text(DateLayout)), d.DueDate.Format(c.lang.Text(DateLayout)),
			money.Format(d.SubtotalCents, d.Currency, lang), money.Format(d.VATCents, d.Currency, lang),
			money.Format(d.TotalCents, d.Currency, lang), money.Format(d.RemainingCents, d.Currency, lang),
			"IBAN FR76 3000 6000 0112 3456 7890 189", d.Notes, "Page 1 of 1"}
		if c.lang == "fr" {
			want[len(want)-1] = "Page 1 sur 1"
		}
		if c.lang == "ar" {
			want[len(want)-1] = "صفحة 1 من 1"
		}
		for _, ln := range d.Lines {
			want = append(want, ln.Description, money.Format(ln.AmountCents, d.Currency, lang))
		}
		for _, side := range c.lang.Sides() {
			for _, k := range []Label{TitleInvoice, Description, Subtotal, Total, VATSummaryT, Remaining, PaymentInstr, Notes} {
				want = append(want, side.Text(k))
			}
		}
		r.has(t, name, want...)
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWritePDFPaginates(t *testing.T) {
	long := "A very long description that has to wrap over several lines of the table, " +
		"because it names every part of the delivery: frames, hinges, screws, handles and the installation on site"
	var huge []string // a description longer than a page
	for i := range 700 {
		huge = append(huge, fmt.Sprintf("part%04d", i))
	}
	d := sample(Invoice, "en", "EUR", 200, "Widget", long, strings.Join(huge, " "))
	d.Logo = logoPNG(t)
	r := render(t, "long", d)
	pages := strings.Split(strings.TrimRight(r.layout, "\f"), "\f")
	if len(pages) < 4 {
		t.Fatalf("200 lines on %d pages", len(pages))
	}
	for i, p := range pages {
		for _, w := range []string{"Description", "Quantity", "Unit price", "Amount", fmt.Sprintf("Page %d of %d", i+1, len(pages))} {
			if !strings.Contains(p, w) {
				t.Errorf("page %d has no %q", i+1, w)
			}
		}
	}
	want := []string{money.Format(d.TotalCents, "EUR", "en"), money.Format(d.RemainingCents, "EUR", "en")}
	for _, ln := range d.Lines[3:] {
		want = append(want, ln.Description)
	}
	want = append(want, strings.Fields(long)...)
	want = append(want, huge...)
	r.has(t, "long", want...)
	if last := pages[len(pages)-1]; !strings.Contains(last, "Amount due") {
		t.Errorf("the totals are not on the last page:\n%s", last)
	}
}

func TestWritePDFPackingSlip(t *testing.T) {
	d := sample(Shipment, "fr", "EUR", 3, "Vis inox", "Charnières")
	d.Logo = &Logo{MediaType: "image/svg+xml", Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 80"><rect x="70" y="20" width="120" height="40" fill="#1f3355"/><circle cx="40" cy="40" r="24" fill="#e8a13a"/></svg>`)}
	r := render(t, "slip", d)
	r.has(t, "slip", "Bon de livraison", "Livré à", d.Buyer.Name, d.Seller.Name, d.Number, "Désignation", "Quantité", "Vis inox", "Charnières", "1,5", d.Notes)
	for _, absent := range []string{"€", "Prix unitaire", "Total", "Taux de TVA", "Récapitulatif de TVA", "Reste à payer", "IBAN"} {
		if strings.Contains(r.layout, absent) {
			t.Errorf("a packing slip shows %q:\n%s", absent, r.layout)
		}
	}
	if out := images(t, r.path); !strings.Contains(out, "image") || !strings.Contains(out, "smask") {
		t.Errorf("the SVG logo is not an image with a soft mask:\n%s", out)
	}
}

// images is pdfimages -list of the PDF.
func images(t *testing.T, path string) string {
	out, err := exec.Command(tool(t, "pdfimages"), "-list", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v\n%s", err, out)
	}
	return string(out)
}

func TestWritePDFLogoAndPicture(t *testing.T) {
	pdftoppm := tool(t, "pdftoppm")
	for _, c := range []struct {
		name string
		logo *Logo
		want []string // in pdfimages -list
	}{{"png", logoPNG(t), []string{"image", "smask"}}, {"jpeg", logoJPEG(t), []string{"jpeg"}}} {
		d := sample(Invoice, "ar", "EUR", 3)
		d.Logo = c.logo
		r := render(t, c.name, d)
		out := images(t, r.path)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: pdfimages -list has no %s:\n%s", c.name, w, out)
			}
		}
		prefix := filepath.Join(t.TempDir(), "page")
		if msg, err := exec.Command(pdftoppm, "-r", "50", "-f", "1", "-l", "1", "-png", r.path, prefix).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm: %v\n%s", err, msg)
		}
		matches, _ := filepath.Glob(prefix + "*.png")
		if len(matches) != 1 {
			t.Fatalf("pdftoppm wrote %v", matches)
		}
		img, err := png.Decode(bytes.NewReader(mustRead(t, matches[0])))
		if err != nil {
			t.Fatal(err)
		}
		// Ink on the page: dark pixels (text) and coloured ones (the logo).
		dark, colour := 0, 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if cr+cg+cb < 3*0x6000 {
					dark++
				}
				if max(cr, cg, cb)-min(cr, cg, cb) > 0x3000 {
					colour++
				}
			}
		}
		if dark < 500 || colour < 100 {
			t.Errorf("%s: page 1 looks blank: %d dark and %d coloured pixels of %d", c.name, dark, colour, b.Dx()*b.Dy())
		}
	}
}

// TestWritePDFOddInput: an empty document, and text neither font has
// (emoji, CJK), control characters and unbalanced bidi controls, still
// make a valid PDF.
func TestWritePDFOddInput(t *testing.T) {
	render(t, "empty", &Doc{})
	for _, lang := range []Lang{"en", "ar", "bilingual", "xx"} {
		d := sample(CreditNote, lang, "XYZ", 2, "emoji 🎉 and 日本語 \x00\x07 tab\there", "\u2067unbalanced \u202e bidi")
		d.Buyer.Name = strings.Repeat("Very Long Company Name ", 12)
		d.Logo = &Logo{MediaType: "image/png", Data: []byte("not a png")} // left out, not an error
		r := render(t, "odd-"+string(lang), d)
		r.has(t, "odd-"+string(lang), d.Number, "Very Long Company Name", "emoji")
	}
}
