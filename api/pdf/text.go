package pdf

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/go-text/typesetting/bidi"
	"github.com/go-text/typesetting/di"
	gofont "github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/language"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

// Family is the fonts one style of text is set in, in order of
// preference: a letter takes the first font that has it (Latin, then
// Arabic), and spaces, digits and punctuation stay in their neighbour's.
type Family []*Font

// Text is one line shaped: its glyph runs in visual order, left to right.
// Sizes are in thousandths of an em, so one shaping serves every font size.
type Text struct {
	Runs  []GlyphRun
	Width float64
}

// WidthAt is the line's width in points at size.
func (t *Text) WidthAt(size float64) float64 { return t.Width * size / 1000 }

// GlyphRun is glyphs of one font, in visual order.
type GlyphRun struct {
	Font   *Font
	Glyphs []Glyph
}

// Glyph is one shaped glyph: its id in the font, where it goes, and the
// text it shows (a ligature or joined form: all its characters; the second
// glyph of a cluster: none), for the PDF's ToUnicode map.
type Glyph struct {
	ID               uint16
	Advance          float64
	XOffset, YOffset float64
	Text             string
}

// Shaper lays out lines of text: bidi (runs in visual order, numbers and
// Latin names inside Arabic kept left to right), fonts per script, then
// HarfBuzz shaping (go-text's port) of each run. One is used by one
// document at a time (NewShaper takes one from a pool, Release gives it
// back); it remembers the lines it shaped.
type Shaper struct {
	hb    shaping.HarfbuzzShaper
	faces map[*Font]*gofont.Face
	para  bidi.Paragraph
	cache map[shapeKey]*Text
}

type shapeKey struct {
	fam  *Font
	n    int
	rtl  bool
	text string
}

var shapers = sync.Pool{New: func() any {
	return &Shaper{faces: map[*Font]*gofont.Face{}, cache: map[shapeKey]*Text{}}
}}

// NewShaper is a shaper for one document.
func NewShaper() *Shaper { return shapers.Get().(*Shaper) }

// Release gives the shaper back; it must not be used after.
func (s *Shaper) Release() {
	clear(s.cache)
	shapers.Put(s)
}

func (s *Shaper) face(f *Font) *gofont.Face {
	fc := s.faces[f]
	if fc == nil {
		fc = gofont.NewFace(f.shaper)
		s.faces[f] = fc
	}
	return fc
}

// ignored are characters that steer bidi but show nothing.
func ignored(r rune) bool {
	switch {
	case r == 0x061C, r == 0xFEFF, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2069:
		return true
	}
	return false
}

// Shape lays out one line of text in fam; rtl is the paragraph's direction
// (an Arabic document's), which decides where neutral characters go.
func (s *Shaper) Shape(text string, fam Family, rtl bool) *Text {
	key := shapeKey{fam[0], len(fam), rtl, text}
	if t, ok := s.cache[key]; ok {
		return t
	}
	t := s.shape(text, fam, rtl)
	s.cache[key] = t
	return t
}

type item struct {
	start, end int
	level      bidi.Level
	font       int
}

func (s *Shaper) shape(text string, fam Family, rtl bool) *Text {
	raw := []rune(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r == '\r' {
			return ' '
		}
		return r
	}, text))
	if len(raw) == 0 {
		return &Text{}
	}
	dir := bidi.LeftToRight
	if rtl {
		dir = bidi.RightToLeft
	}
	runs := s.para.Segment(raw, dir)
	levels := make([]bidi.Level, len(raw))
	for i := 0; i < runs.NumRuns(); i++ {
		r := runs.Run(i)
		for j := r.Start; j < r.End; j++ {
			levels[j] = r.Level
		}
	}
	// Bidi controls have done their work; they show nothing.
	runes := raw[:0:0]
	lv := levels[:0:0]
	for i, r := range raw {
		if !ignored(r) {
			runes = append(runes, r)
			lv = append(lv, levels[i])
		}
	}
	fonts := pickFonts(runes, fam)
	var items []item
	for i := range runes {
		if n := len(items); n > 0 && items[n-1].level == lv[i] && items[n-1].font == fonts[i] {
			items[n-1].end = i + 1
			continue
		}
		items = append(items, item{i, i + 1, lv[i], fonts[i]})
	}
	// Rule L2 of UAX #9: from the highest level down to the lowest odd
	// one, reverse every sequence of items at that level or higher.
	var hi, lo bidi.Level = 0, 127
	for _, it := range items {
		hi = max(hi, it.level)
		if it.level%2 == 1 {
			lo = min(lo, it.level)
		}
	}
	for l := hi; l >= lo && l > 0; l-- {
		for i := 0; i < len(items); {
			if items[i].level < l {
				i++
				continue
			}
			j := i
			for j < len(items) && items[j].level >= l {
				j++
			}
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				items[a], items[b] = items[b], items[a]
			}
			i = j
		}
	}
	t := &Text{Runs: make([]GlyphRun, 0, len(items))}
	for _, it := range items {
		f := fam[it.font]
		face := s.face(f)
		in := shaping.Input{
			Text: runes, RunStart: it.start, RunEnd: it.end,
			Direction: di.DirectionLTR, Face: face, Size: fixed.I(1000),
			Script: language.Latin, Language: language.NewLanguage("en"),
		}
		if it.level%2 == 1 {
			in.Direction = di.DirectionRTL
		}
		for _, r := range runes[it.start:it.end] {
			if sc := language.LookupScript(r); sc.Strong() {
				in.Script = sc
				if sc == language.Arabic {
					in.Language = language.NewLanguage("ar")
				}
				break
			}
		}
		out := s.hb.ShapeNoExtents(in)
		run := GlyphRun{Font: f, Glyphs: make([]Glyph, len(out.Glyphs))}
		for i, g := range out.Glyphs {
			run.Glyphs[i] = Glyph{
				ID:      uint16(g.GlyphID),
				Advance: float64(g.Advance) / 64,
				XOffset: float64(g.XOffset) / 64,
				YOffset: float64(g.YOffset) / 64,
			}
			t.Width += run.Glyphs[i].Advance
		}
		clusterText(run.Glyphs, out.Glyphs, runes, face, in.Direction == di.DirectionRTL)
		t.Runs = append(t.Runs, run)
	}
	return t
}

// clusterText gives each glyph the text it shows: in a cluster, a glyph
// that is the font's own glyph for one of the cluster's characters (a
// mark, a plain letter) shows that one; the first other glyph shows the
// rest (a ligature, a joined form: all of its characters). Text extractors
// read a page in visual order and turn right-to-left runs around, so the
// characters of a right-to-left ligature are given in visual order too.
func clusterText(glyphs []Glyph, out []shaping.Glyph, runes []rune, face *gofont.Face, rtl bool) {
	for i := 0; i < len(out); {
		c := out[i].TextIndex()
		j := i
		for j < len(out) && out[j].TextIndex() == c {
			j++
		}
		n := out[i].RunesCount()
		if c < 0 || c+n > len(runes) {
			i = j
			continue
		}
		cr := runes[c : c+n]
		taken := make([]bool, len(cr))
		if j-i > 1 {
			for k := i; k < j; k++ {
				for m, r := range cr {
					if g, ok := face.NominalGlyph(r); ok && !taken[m] && uint16(g) == glyphs[k].ID {
						taken[m] = true
						glyphs[k].Text = string(r)
						break
					}
				}
			}
		}
		var rest []rune
		for m, r := range cr {
			if !taken[m] {
				rest = append(rest, r)
			}
		}
		if rtl {
			slices.Reverse(rest)
		}
		if len(rest) > 0 {
			for k := i; k < j; k++ {
				if glyphs[k].Text == "" {
					glyphs[k].Text = string(rest)
					break
				}
			}
		}
		i = j
	}
}

// pickFonts chooses each rune's font: letters the first font that has
// them; other characters their neighbour's when it has them, so a run of
// Arabic words stays one run.
func pickFonts(runes []rune, fam Family) []int {
	fonts := make([]int, len(runes))
	has := func(f int, r rune) bool { _, ok := fam[f].shaper.NominalGlyph(r); return ok }
	first := func(r rune) int {
		for f := range fam {
			if has(f, r) {
				return f
			}
		}
		return 0
	}
	for i, r := range runes {
		fonts[i] = -1
		if unicode.IsLetter(r) {
			fonts[i] = first(r)
		}
	}
	for i, r := range runes {
		if fonts[i] >= 0 {
			continue
		}
		if i > 0 && (unicode.Is(unicode.Mn, r) || has(fonts[i-1], r)) {
			fonts[i] = fonts[i-1]
			continue
		}
		fonts[i] = first(r)
		for j := i + 1; j < len(runes); j++ {
			if fonts[j] >= 0 && unicode.IsLetter(runes[j]) {
				if has(fonts[j], r) {
					fonts[i] = fonts[j]
				}
				break
			}
		}
	}
	return fonts
}

// Wrap breaks text into lines no wider than width points at size, at
// spaces (and at line breaks in the text); a word wider than a line is
// cut between characters.
func (s *Shaper) Wrap(text string, fam Family, rtl bool, size, width float64) []string {
	limit := width * 1000 / size
	var lines []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if s.Shape(para, fam, rtl).Width <= limit {
			lines = append(lines, para)
			continue
		}
		space := s.Shape(" ", fam, rtl).Width
		var cur []string
		w := 0.0
		for _, word := range strings.Fields(para) {
			ww := s.Shape(word, fam, rtl).Width
			if len(cur) > 0 && w+space+ww > limit {
				lines = append(lines, strings.Join(cur, " "))
				cur, w = nil, 0
			}
			for ww > limit { // cut a word longer than a line
				rs := []rune(word)
				n := len(rs) - 1
				for n > 1 && s.Shape(string(rs[:n]), fam, rtl).Width > limit {
					n--
				}
				lines = append(lines, string(rs[:n]))
				word = string(rs[n:])
				ww = s.Shape(word, fam, rtl).Width
			}
			if len(cur) > 0 {
				w += space
			}
			cur = append(cur, word)
			w += ww
		}
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, " "))
		}
	}
	return lines
}
