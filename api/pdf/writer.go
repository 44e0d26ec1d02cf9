// Package pdf writes PDF documents of shaped text, lines, rectangles and
// images: fonts embedded as subsets (Type0/CIDFontType2, Identity-H, a
// CIDToGIDMap, a ToUnicode map from each glyph to the text it came from,
// so text extracts in logical order, Arabic included), streams compressed.
// It draws what it is told where it is told; laying a document out is the
// caller's.
package pdf

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
)

// Color is an RGB colour, each part from 0 to 1.
type Color struct{ R, G, B float64 }

// Black is the colour of text.
var Black = Color{}

// Document is a PDF being built: pages drawn in any order, written once.
type Document struct {
	Title string
	Lang  string // BCP 47, the natural language of its text
	pages []*Page
	fonts map[*Font]*fontUse
	order []*Font
	imgs  map[*Image]string
}

// fontUse is what a document used of a font: its resource name and each
// glyph with the text it shows.
type fontUse struct {
	res    string
	glyphs map[uint16]string
}

// New is an empty document.
func New() *Document {
	return &Document{fonts: map[*Font]*fontUse{}, imgs: map[*Image]string{}}
}

// Page is one page; coordinates are points from its top left corner.
type Page struct {
	doc  *Document
	W, H float64
	buf  []byte
}

// AddPage adds a page of w×h points.
func (d *Document) AddPage(w, h float64) *Page {
	p := &Page{doc: d, W: w, H: h}
	d.pages = append(d.pages, p)
	return p
}

func (p *Page) num(v float64) {
	p.buf = strconv.AppendFloat(p.buf, float64(int64(v*1000+copysign(0.5, v)))/1000, 'f', -1, 64)
	p.buf = append(p.buf, ' ')
}

func copysign(a, b float64) float64 {
	if b < 0 {
		return -a
	}
	return a
}

func (p *Page) op(s string) { p.buf = append(p.buf, s...); p.buf = append(p.buf, '\n') }

func (p *Page) color(c Color, op string) {
	p.num(c.R)
	p.num(c.G)
	p.num(c.B)
	p.op(op)
}

// Text draws t at size with its left end at x and its baseline y from the top.
func (p *Page) Text(t *Text, x, y, size float64, c Color) {
	if len(t.Runs) == 0 {
		return
	}
	p.color(c, "rg")
	p.op("BT")
	p.num(x)
	p.num(p.H - y)
	p.op("Td")
	rise := 0.0
	for _, run := range t.Runs {
		use := p.doc.use(run.Font)
		p.buf = append(p.buf, '/')
		p.buf = append(p.buf, use.res...)
		p.buf = append(p.buf, ' ')
		p.num(size)
		p.op("Tf")
		p.buf = append(p.buf, '[')
		open := false // inside <…>
		adjust := func(v float64) {
			if v = float64(int64(v*100)) / 100; v == 0 {
				return
			}
			if open {
				p.buf = append(p.buf, '>')
				open = false
			}
			p.buf = strconv.AppendFloat(p.buf, v, 'f', -1, 64)
		}
		for _, g := range run.Glyphs {
			if g.YOffset != rise {
				if open {
					p.buf = append(p.buf, '>')
					open = false
				}
				p.op("]TJ")
				rise = g.YOffset
				p.num(rise * size / 1000)
				p.op("Ts")
				p.buf = append(p.buf, '[')
			}
			// TJ moves by the glyph's width in the font; shaping says where
			// the glyph goes and where the next one starts.
			adjust(-g.XOffset)
			if !open {
				p.buf = append(p.buf, '<')
				open = true
			}
			p.buf = append(p.buf, hex4(g.ID)...)
			if _, ok := use.glyphs[g.ID]; !ok || use.glyphs[g.ID] == "" {
				use.glyphs[g.ID] = g.Text
			}
			adjust(run.Font.width(g.ID) - g.Advance + g.XOffset)
		}
		if open {
			p.buf = append(p.buf, '>')
		}
		p.op("]TJ")
	}
	if rise != 0 {
		p.op("0 Ts")
	}
	p.op("ET")
}

func hex4(v uint16) []byte {
	const digits = "0123456789ABCDEF"
	return []byte{digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15]}
}

// Rect fills a rectangle whose top left corner is x, y.
func (p *Page) Rect(x, y, w, h float64, c Color) {
	p.color(c, "rg")
	p.num(x)
	p.num(p.H - y - h)
	p.num(w)
	p.num(h)
	p.op("re f")
}

// Line strokes a line of width lw.
func (p *Page) Line(x1, y1, x2, y2, lw float64, c Color) {
	p.color(c, "RG")
	p.num(lw)
	p.op("w")
	p.num(x1)
	p.num(p.H - y1)
	p.op("m")
	p.num(x2)
	p.num(p.H - y2)
	p.op("l S")
}

// Image draws img in the box whose top left corner is x, y.
func (p *Page) Image(img *Image, x, y, w, h float64) {
	name, ok := p.doc.imgs[img]
	if !ok {
		name = "Im" + strconv.Itoa(len(p.doc.imgs)+1)
		p.doc.imgs[img] = name
	}
	p.op("q")
	p.num(w)
	p.op("0 0")
	p.num(h)
	p.num(x)
	p.num(p.H - y - h)
	p.op("cm")
	p.op("/" + name + " Do Q")
}

func (d *Document) use(f *Font) *fontUse {
	u := d.fonts[f]
	if u == nil {
		u = &fontUse{res: "F" + strconv.Itoa(len(d.fonts)+1), glyphs: map[uint16]string{}}
		d.fonts[f] = u
		d.order = append(d.order, f)
	}
	return u
}

// writer numbers objects and remembers where each starts.
type writer struct {
	w       *bufio.Writer
	n       int64
	offsets []int64
	err     error
	zbuf    bytes.Buffer
}

func (w *writer) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	w.err = err
	return n, err
}

func (w *writer) printf(format string, args ...any) { fmt.Fprintf(w, format, args...) }

// alloc reserves an object number.
func (w *writer) alloc() int {
	w.offsets = append(w.offsets, 0)
	return len(w.offsets)
}

// obj writes object id with its dictionary (and a stream, if not nil).
func (w *writer) obj(id int, dict string, stream []byte) {
	w.offsets[id-1] = w.n
	if stream == nil {
		w.printf("%d 0 obj\n%s\nendobj\n", id, dict)
		return
	}
	w.printf("%d 0 obj\n<<%s /Length %d>>\nstream\n", id, dict, len(stream))
	w.Write(stream)
	w.printf("\nendstream\nendobj\n")
}

var zlibs = sync.Pool{New: func() any { z, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed); return z }}

// deflate compresses a stream (the bytes are valid until the next call).
func (w *writer) deflate(b []byte) []byte {
	w.zbuf.Reset()
	z := zlibs.Get().(*zlib.Writer)
	z.Reset(&w.zbuf)
	z.Write(b)
	z.Close()
	zlibs.Put(z)
	return w.zbuf.Bytes()
}

// Write writes the document as PDF.
func (d *Document) Write(out io.Writer) error {
	w := &writer{w: bufio.NewWriterSize(out, 32<<10)}
	w.printf("%%PDF-1.7\n%%\xe2\xe3\xcf\xd3\n")
	catalog, pagesID := w.alloc(), w.alloc()
	fontIDs := map[*Font]int{}
	for _, f := range d.order {
		fontIDs[f] = w.alloc()
	}
	imgs := slices.Collect(maps.Keys(d.imgs))
	slices.SortFunc(imgs, func(a, b *Image) int { return cmpStr(d.imgs[a], d.imgs[b]) })
	imgIDs := map[*Image]int{}
	for _, im := range imgs {
		imgIDs[im] = w.alloc()
	}
	var res bytes.Buffer
	res.WriteString("<</ProcSet [/PDF /Text /ImageC]")
	if len(d.order) > 0 {
		res.WriteString(" /Font <<")
		for _, f := range d.order {
			fmt.Fprintf(&res, "/%s %d 0 R ", d.fonts[f].res, fontIDs[f])
		}
		res.WriteString(">>")
	}
	if len(imgs) > 0 {
		res.WriteString(" /XObject <<")
		for _, im := range imgs {
			fmt.Fprintf(&res, "/%s %d 0 R ", d.imgs[im], imgIDs[im])
		}
		res.WriteString(">>")
	}
	res.WriteString(">>")
	resID := w.alloc()
	w.obj(resID, res.String(), nil)

	kids := make([]int, len(d.pages))
	for i, p := range d.pages {
		kids[i] = w.alloc()
		content := w.alloc()
		w.obj(kids[i], fmt.Sprintf("<</Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %d 0 R /Contents %d 0 R>>",
			pagesID, fnum(p.W), fnum(p.H), resID, content), nil)
		w.obj(content, " /Filter /FlateDecode", w.deflate(p.buf))
	}
	var kb bytes.Buffer
	for _, k := range kids {
		fmt.Fprintf(&kb, "%d 0 R ", k)
	}
	w.obj(pagesID, fmt.Sprintf("<</Type /Pages /Kids [%s] /Count %d>>", kb.String(), len(kids)), nil)
	for _, f := range d.order {
		d.writeFont(w, f, d.fonts[f], fontIDs[f])
	}
	for _, im := range imgs {
		im.write(w, imgIDs[im])
	}
	lang := ""
	if d.Lang != "" {
		lang = " /Lang " + textString(d.Lang)
	}
	w.obj(catalog, fmt.Sprintf("<</Type /Catalog /Pages %d 0 R%s>>", pagesID, lang), nil)
	info := w.alloc()
	w.obj(info, fmt.Sprintf("<</Producer (Ledgerbase) /Title %s>>", textString(d.Title)), nil)

	xref := w.n
	w.printf("xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, o := range w.offsets {
		w.printf("%010d 00000 n \n", o)
	}
	w.printf("trailer\n<</Size %d /Root %d 0 R /Info %d 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(w.offsets)+1, catalog, info, xref)
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func cmpStr(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// textString is s as a PDF text string (UTF-16BE with its mark).
func textString(s string) string {
	b := []byte("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, hex4(u)...)
	}
	return string(append(b, '>'))
}

// writeFont writes a font's subset: the Type0 font (object id), its
// CIDFont, descriptor, file, CIDToGIDMap and ToUnicode map. CIDs are the
// font's own glyph ids, so pages are drawn before the subset is known.
func (d *Document) writeFont(w *writer, f *Font, u *fontUse, id int) {
	used := slices.Sorted(maps.Keys(u.glyphs))
	file, newID := f.subset(used)
	h := sha256.New()
	h.Write([]byte(f.name))
	for _, g := range used {
		h.Write(hex4(g))
	}
	sum := h.Sum(nil)
	tag := make([]byte, 6)
	for i := range tag {
		tag[i] = 'A' + sum[i]%26
	}
	base := string(tag) + "+" + f.name

	cid, desc, fileID, mapID, uniID := w.alloc(), w.alloc(), w.alloc(), w.alloc(), w.alloc()
	w.obj(id, fmt.Sprintf("<</Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R>>",
		base, cid, uniID), nil)

	var widths bytes.Buffer
	for i := 0; i < len(used); {
		j := i + 1
		for j < len(used) && used[j] == used[j-1]+1 {
			j++
		}
		fmt.Fprintf(&widths, "%d [", used[i])
		for _, g := range used[i:j] {
			fmt.Fprintf(&widths, "%s ", fnum(float64(int64(f.width(g)+0.5))))
		}
		widths.WriteString("] ")
		i = j
	}
	w.obj(cid, fmt.Sprintf("<</Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo <</Registry (Adobe) /Ordering (Identity) /Supplement 0>> /FontDescriptor %d 0 R /DW 0 /W [%s] /CIDToGIDMap %d 0 R>>",
		base, desc, widths.String(), mapID), nil)
	flags := 4 // symbolic: glyphs by id, not by a standard encoding
	stemV := 80
	if f.bold {
		flags |= 1 << 18
		stemV = 140
	}
	w.obj(desc, fmt.Sprintf("<</Type /FontDescriptor /FontName /%s /Flags %d /FontBBox [%s %s %s %s] /ItalicAngle 0 /Ascent %s /Descent %s /CapHeight %s /StemV %d /FontFile2 %d 0 R>>",
		base, flags, fnum(f.bbox[0]), fnum(f.bbox[1]), fnum(f.bbox[2]), fnum(f.bbox[3]),
		fnum(float64(int64(f.ascent))), fnum(float64(int64(f.descent))), fnum(float64(int64(f.capHeight))), stemV, fileID), nil)
	w.obj(fileID, fmt.Sprintf(" /Filter /FlateDecode /Length1 %d", len(file)), w.deflate(file))

	maxCID := 0
	if len(used) > 0 {
		maxCID = int(used[len(used)-1])
	}
	m := make([]byte, 2*(maxCID+1))
	for _, g := range used {
		n := newID[g]
		m[2*int(g)], m[2*int(g)+1] = byte(n>>8), byte(n)
	}
	w.obj(mapID, " /Filter /FlateDecode", w.deflate(m))

	var cm bytes.Buffer
	cm.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo <</Registry (Adobe) /Ordering (UCS) /Supplement 0>> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	var mapped []uint16
	for _, g := range used {
		if u.glyphs[g] != "" {
			mapped = append(mapped, g)
		}
	}
	for i := 0; i < len(mapped); i += 100 {
		chunk := mapped[i:min(i+100, len(mapped))]
		fmt.Fprintf(&cm, "%d beginbfchar\n", len(chunk))
		for _, g := range chunk {
			cm.WriteByte('<')
			cm.Write(hex4(g))
			cm.WriteString("> <")
			for _, c := range utf16.Encode([]rune(u.glyphs[g])) {
				cm.Write(hex4(c))
			}
			cm.WriteString(">\n")
		}
		cm.WriteString("endbfchar\n")
	}
	cm.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	w.obj(uniID, " /Filter /FlateDecode", w.deflate(cm.Bytes()))
}
