package pdf

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"

	gofont "github.com/go-text/typesetting/font"

	"github.com/ledgerbase/ledgerbase/assets/fonts"
)

var testFonts = sync.OnceValue(func() Family {
	var fam Family
	for _, data := range [][]byte{fonts.SansRegular, fonts.ArabicRegular} {
		f, err := ParseFont(data)
		if err != nil {
			panic(err)
		}
		fam = append(fam, f)
	}
	return fam
})

// runText is the text of a run's glyphs, in the order they are drawn.
func runText(r GlyphRun) string {
	var b strings.Builder
	for _, g := range r.Glyphs {
		b.WriteString(g.Text)
	}
	return b.String()
}

func TestShapeArabicJoinsAndLigatures(t *testing.T) {
	fam := testFonts()
	s := NewShaper()
	defer s.Release()

	// فاتورة: joined forms, not the letters' own glyphs.
	word := "فاتورة"
	tx := s.Shape(word, fam, true)
	if len(tx.Runs) != 1 || tx.Runs[0].Font != fam[1] {
		t.Fatalf("%s: %d runs, want one in the Arabic font", word, len(tx.Runs))
	}
	joined := 0
	for _, g := range tx.Runs[0].Glyphs {
		r := []rune(g.Text)
		if len(r) == 1 {
			if nominal, _ := fam[1].shaper.NominalGlyph(r[0]); uint16(nominal) != g.ID {
				joined++
			}
		}
	}
	if joined < 3 {
		t.Errorf("%s: %d glyphs in a joined form, want most", word, joined)
	}
	// Drawn right to left: the glyphs' text read backwards is the word.
	got := []rune(runText(tx.Runs[0]))
	slices.Reverse(got)
	if string(got) != word {
		t.Errorf("glyph text reversed = %q, want %q", string(got), word)
	}

	// لا is one ligature glyph that stands for both letters.
	tx = s.Shape("لا", fam, true)
	if g := tx.Runs[0].Glyphs; len(g) != 1 || g[0].Text != "ال" {
		t.Errorf("lam-alef: %+v, want one glyph for both letters", g)
	}
}

func TestShapeBidi(t *testing.T) {
	fam := testFonts()
	s := NewShaper()
	defer s.Release()
	for _, c := range []struct {
		text string
		rtl  bool
		want []string // each run's glyph text, left to right on the page
	}{
		// A Latin number inside Arabic stays left to right, on the left.
		{"المرجع INV-000042", true, []string{"INV-000042", " عجرملا"}},
		// A phone number isolated keeps its groups in order.
		{"الهاتف: \u2066+33 1 23 45\u2069", true, []string{"+33 1 23 45", " :فتاهلا"}},
		// Without the isolate, the bidi algorithm reverses the groups:
		// which is why documents isolate their values.
		{"الهاتف: +33 1 23", true, []string{"23", " ", "1", " ", "33", "+", " :فتاهلا"}},
		// Arabic inside an English sentence is turned around on its own
		// (the space after it set in the Arabic font, its neighbour's).
		{"Client شركة Acme", false, []string{"Client ", "ةكرش", " ", "Acme"}},
	} {
		tx := s.Shape(c.text, fam, c.rtl)
		var got []string
		for _, r := range tx.Runs {
			got = append(got, runText(r))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: runs %q, want %q", c.text, got, c.want)
		}
		if tx.Width <= 0 {
			t.Errorf("%q: no width", c.text)
		}
	}
}

func TestWrap(t *testing.T) {
	fam := testFonts()
	s := NewShaper()
	defer s.Release()
	text := "Installation of the new frames on site, including hinges and handles\nsecond paragraph"
	lines := s.Wrap(text, fam, false, 10, 120)
	if len(lines) < 4 {
		t.Fatalf("lines %q", lines)
	}
	for _, l := range lines {
		if w := s.Shape(l, fam, false).WidthAt(10); w > 120 {
			t.Errorf("%q is %.1f points wide, over 120", l, w)
		}
	}
	if got := strings.Join(lines, " "); got != strings.ReplaceAll(text, "\n", " ") {
		t.Errorf("wrapped text lost words: %q", got)
	}
	if lines[len(lines)-1] != "second paragraph" {
		t.Errorf("a line break in the text does not start a line: %q", lines)
	}
	long := strings.Repeat("x", 200)
	for _, l := range s.Wrap(long, fam, false, 10, 50) {
		if s.Shape(l, fam, false).WidthAt(10) > 50 {
			t.Errorf("a word longer than a line is not cut: %q", l)
		}
	}
}

// TestSubset reads the subset font back with go-text's own parser: the
// glyphs keep their advances and outlines, composite glyphs their
// components (renumbered).
func TestSubset(t *testing.T) {
	f := testFonts()[0]
	var used []uint16
	for _, r := range "Aé€Wx" { // é is a composite glyph in Noto Sans
		g, ok := f.shaper.NominalGlyph(r)
		if !ok {
			t.Fatalf("no glyph for %q", r)
		}
		used = append(used, uint16(g))
	}
	file, newID := f.subset(used)
	sub, err := gofont.ParseTTF(bytes.NewReader(file))
	if err != nil {
		t.Fatalf("the subset does not parse: %v", err)
	}
	orig := gofont.NewFace(f.shaper)
	again, err := ParseFont(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := again.numGlyphs; n <= len(used) || n > 20 {
		t.Errorf("subset has %d glyphs for %d used (and their components)", n, len(used))
	}
	for _, g := range used {
		ng := gofont.GID(newID[g])
		if a, b := sub.HorizontalAdvance(ng), orig.HorizontalAdvance(gofont.GID(g)); a != b {
			t.Errorf("glyph %d: advance %v, was %v", g, a, b)
		}
		o1, ok1 := sub.GlyphDataOutline(ng)
		o2, ok2 := orig.GlyphDataOutline(gofont.GID(g))
		if !ok1 || !ok2 || len(o1.Segments) == 0 || len(o1.Segments) != len(o2.Segments) {
			t.Errorf("glyph %d: outline of %d segments, was %d", g, len(o1.Segments), len(o2.Segments))
			continue
		}
		for i := range o1.Segments {
			if o1.Segments[i] != o2.Segments[i] {
				t.Errorf("glyph %d: segment %d differs", g, i)
				break
			}
		}
	}
	if len(file) > 8000 {
		t.Errorf("a 5-glyph subset is %d bytes", len(file))
	}
}

// TestWriteDeterministic writes one document from several goroutines: the
// fonts are shared, the shapers pooled, and the bytes always the same.
func TestWriteDeterministic(t *testing.T) {
	fam := testFonts()
	img, err := LoadImage("image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="red"/></svg>`))
	if err != nil {
		t.Fatal(err)
	}
	write := func() []byte {
		s := NewShaper()
		defer s.Release()
		d := New()
		d.Title = "فاتورة INV-1"
		for range 3 {
			p := d.AddPage(595, 842)
			p.Image(img, 40, 40, 50, 50)
			p.Text(s.Shape("Invoice فاتورة 1,234.50 €", fam, false), 40, 120, 12, Black)
			p.Rect(40, 130, 100, 10, Color{0.9, 0.9, 0.9})
			p.Line(40, 150, 300, 150, 0.5, Black)
		}
		var b bytes.Buffer
		if err := d.Write(&b); err != nil {
			t.Error(err)
		}
		return b.Bytes()
	}
	want := write()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := write(); !bytes.Equal(got, want) {
				t.Error("the same document written twice differs")
			}
		})
	}
	wg.Wait()
	if !bytes.HasPrefix(want, []byte("%PDF-1.7")) || !bytes.HasSuffix(want, []byte("%%EOF\n")) {
		t.Errorf("not a PDF: %q…", want[:20])
	}
}

func TestLoadImageRefusesOthers(t *testing.T) {
	for _, c := range []struct{ mt, data string }{
		{"image/png", "not a png"}, {"image/jpeg", "not a jpeg"}, {"image/gif", "GIF89a"}, {"image/svg+xml", "<svg"},
	} {
		if _, err := LoadImage(c.mt, []byte(c.data)); err == nil {
			t.Errorf("%s %q: no error", c.mt, c.data)
		}
	}
}

// TestLoadImageShrinks keeps a large logo at most maxSide pixels, a JPEG
// still a JPEG, a PNG's transparency as a soft mask.
func TestLoadImageShrinks(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 2000, 1000))
	for y := 0; y < 1000; y++ {
		for x := 0; x < 2000; x++ {
			src.Set(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: 90, A: uint8(128 + x%128)})
		}
	}
	var pb, jb bytes.Buffer
	if err := png.Encode(&pb, src); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jb, src, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mt    string
		data  []byte
		dct   bool
		alpha bool
	}{{"image/png", pb.Bytes(), false, true}, {"image/jpeg", jb.Bytes(), true, false}} {
		im, err := LoadImage(c.mt, c.data)
		if err != nil {
			t.Fatal(err)
		}
		if im.W != maxSide || im.H != maxSide/2 || im.dct != c.dct || (im.alpha != nil) != c.alpha {
			t.Errorf("%s: %dx%d dct %v alpha %v", c.mt, im.W, im.H, im.dct, im.alpha != nil)
		}
		if again, _ := LoadImage(c.mt, c.data); again != im {
			t.Errorf("%s: decoded again, not kept", c.mt)
		}
	}
}
