package pdf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	gofont "github.com/go-text/typesetting/font"
)

// Font is one TrueType font, parsed once per process and shared by every
// document (it is read-only): go-text's font for shaping, and the raw
// tables a document's subset is cut from.
type Font struct {
	name   string // PostScript name
	shaper *gofont.Font
	upem   float64

	tables    map[string][]byte
	glyf      []byte
	loca      []uint32 // numGlyphs+1 offsets into glyf
	advances  []uint16 // per glyph, font units
	lsbs      []int16
	numGlyphs int

	// In thousandths of an em, as PDF font descriptors want them.
	ascent, descent, capHeight float64
	bbox                       [4]float64
	bold                       bool
}

// ParseFont reads a TrueType (glyf) font.
func ParseFont(data []byte) (*Font, error) {
	face, err := gofont.ParseTTF(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("pdf: parse font: %w", err)
	}
	f := &Font{shaper: face.Font, tables: map[string][]byte{}}
	if len(data) < 12 {
		return nil, errors.New("pdf: font too short")
	}
	n := int(binary.BigEndian.Uint16(data[4:]))
	for i := 0; i < n; i++ {
		rec := data[12+16*i:]
		off, ln := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
		if uint64(off)+uint64(ln) > uint64(len(data)) {
			return nil, fmt.Errorf("pdf: font table %q out of bounds", rec[:4])
		}
		f.tables[string(rec[:4])] = data[off : off+ln]
	}
	for _, t := range []string{"head", "hhea", "hmtx", "maxp", "loca", "glyf"} {
		if f.tables[t] == nil {
			return nil, fmt.Errorf("pdf: font has no %s table (only TrueType outlines are supported)", t)
		}
	}
	head, hhea, maxp := f.tables["head"], f.tables["hhea"], f.tables["maxp"]
	f.upem = float64(binary.BigEndian.Uint16(head[18:]))
	scale := 1000 / f.upem
	for i := range f.bbox {
		f.bbox[i] = math.Round(float64(int16(binary.BigEndian.Uint16(head[36+2*i:]))) * scale)
	}
	f.bold = binary.BigEndian.Uint16(head[44:])&1 != 0
	f.ascent = float64(int16(binary.BigEndian.Uint16(hhea[4:]))) * scale
	f.descent = float64(int16(binary.BigEndian.Uint16(hhea[6:]))) * scale
	f.capHeight = f.ascent
	if os2 := f.tables["OS/2"]; len(os2) >= 90 && binary.BigEndian.Uint16(os2) >= 2 {
		f.capHeight = float64(int16(binary.BigEndian.Uint16(os2[88:]))) * scale
	}
	f.numGlyphs = int(binary.BigEndian.Uint16(maxp[4:]))
	longLoca := binary.BigEndian.Uint16(head[50:]) == 1
	loca := f.tables["loca"]
	f.loca = make([]uint32, f.numGlyphs+1)
	for i := range f.loca {
		if longLoca {
			if 4*i+4 > len(loca) {
				return nil, errors.New("pdf: font loca too short")
			}
			f.loca[i] = binary.BigEndian.Uint32(loca[4*i:])
		} else {
			if 2*i+2 > len(loca) {
				return nil, errors.New("pdf: font loca too short")
			}
			f.loca[i] = 2 * uint32(binary.BigEndian.Uint16(loca[2*i:]))
		}
	}
	f.glyf = f.tables["glyf"]
	if int(f.loca[f.numGlyphs]) > len(f.glyf) {
		return nil, errors.New("pdf: font glyf too short")
	}
	nh := int(binary.BigEndian.Uint16(hhea[34:]))
	hmtx := f.tables["hmtx"]
	if nh == 0 || len(hmtx) < 4*nh {
		return nil, errors.New("pdf: font hmtx too short")
	}
	f.advances = make([]uint16, f.numGlyphs)
	f.lsbs = make([]int16, f.numGlyphs)
	for g := 0; g < f.numGlyphs; g++ {
		if g < nh {
			f.advances[g] = binary.BigEndian.Uint16(hmtx[4*g:])
			f.lsbs[g] = int16(binary.BigEndian.Uint16(hmtx[4*g+2:]))
		} else {
			f.advances[g] = f.advances[nh-1]
			if o := 4*nh + 2*(g-nh); o+2 <= len(hmtx) {
				f.lsbs[g] = int16(binary.BigEndian.Uint16(hmtx[o:]))
			}
		}
	}
	f.name = postScriptName(f.tables["name"])
	if f.name == "" {
		f.name = "Font"
	}
	return f, nil
}

// width is glyph g's advance in thousandths of an em.
func (f *Font) width(g uint16) float64 {
	if int(g) >= f.numGlyphs {
		return 0
	}
	return float64(f.advances[g]) * 1000 / f.upem
}

// postScriptName reads name ID 6 from the name table.
func postScriptName(name []byte) string {
	if len(name) < 6 {
		return ""
	}
	count := int(binary.BigEndian.Uint16(name[2:]))
	strs := int(binary.BigEndian.Uint16(name[4:]))
	for i := 0; i < count; i++ {
		r := name[6+12*i:]
		if len(r) < 12 {
			break
		}
		platform, id := binary.BigEndian.Uint16(r), binary.BigEndian.Uint16(r[6:])
		ln, off := int(binary.BigEndian.Uint16(r[8:])), int(binary.BigEndian.Uint16(r[10:]))
		if id != 6 || strs+off+ln > len(name) {
			continue
		}
		s := name[strs+off : strs+off+ln]
		var out []byte
		if platform == 1 {
			out = s
		} else {
			for j := 0; j+1 < len(s); j += 2 {
				out = append(out, s[j+1])
			}
		}
		clean := out[:0]
		for _, c := range out {
			if c > 32 && c < 127 && !bytes.ContainsRune([]byte("[](){}<>/%"), rune(c)) {
				clean = append(clean, c)
			}
		}
		return string(clean)
	}
	return ""
}

// glyph is glyph g's outline data.
func (f *Font) glyph(g uint16) []byte {
	if int(g) >= f.numGlyphs {
		return nil
	}
	return f.glyf[f.loca[g]:f.loca[g+1]]
}

// Composite glyph flags.
const (
	argWords       = 0x0001
	haveScale      = 0x0008
	moreComponents = 0x0020
	haveXYScale    = 0x0040
	have2x2        = 0x0080
	haveInstr      = 0x0100
)

// components calls fn with the offset of each component's glyph index in
// composite glyph data, and returns where the components end.
func components(data []byte, fn func(off int)) int {
	p := 10
	for p+4 <= len(data) {
		flags := binary.BigEndian.Uint16(data[p:])
		fn(p + 2)
		p += 4
		if flags&argWords != 0 {
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&haveScale != 0:
			p += 2
		case flags&haveXYScale != 0:
			p += 4
		case flags&have2x2 != 0:
			p += 8
		}
		if flags&moreComponents == 0 {
			break
		}
	}
	return min(p, len(data))
}

// subset is a TrueType font of the glyphs used (and their components),
// renumbered from 1 in the order of used (0 stays .notdef), without
// hinting (PDF viewers do not need it; it is a third of the outlines):
// the font file and, for each old glyph id, its new one.
func (f *Font) subset(used []uint16) ([]byte, map[uint16]uint16) {
	newID := map[uint16]uint16{0: 0}
	order := []uint16{0}
	add := func(g uint16) {
		if _, ok := newID[g]; !ok && int(g) < f.numGlyphs {
			newID[g] = uint16(len(order))
			order = append(order, g)
		}
	}
	for _, g := range used {
		add(g)
	}
	for i := 0; i < len(order); i++ { // components, transitively
		if d := f.glyph(order[i]); len(d) >= 10 && int16(binary.BigEndian.Uint16(d)) < 0 {
			components(d, func(off int) { add(binary.BigEndian.Uint16(d[off:])) })
		}
	}

	var glyf []byte
	loca := make([]byte, 0, 4*(len(order)+1))
	hmtx := make([]byte, 0, 4*len(order))
	for _, g := range order {
		loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))
		hmtx = binary.BigEndian.AppendUint16(hmtx, f.advances[g])
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(f.lsbs[g]))
		glyf = appendGlyph(glyf, f.glyph(g), newID)
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
	}
	loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))

	head := slices.Clone(f.tables["head"])
	binary.BigEndian.PutUint32(head[8:], 0) // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1)
	hhea := slices.Clone(f.tables["hhea"])
	binary.BigEndian.PutUint16(hhea[34:], uint16(len(order)))
	maxp := slices.Clone(f.tables["maxp"])
	binary.BigEndian.PutUint16(maxp[4:], uint16(len(order)))

	// PDF finds glyphs by id, but font parsers want a cmap: an empty one.
	cmap := []byte{0, 0, 0, 1, 0, 3, 0, 1, 0, 0, 0, 12,
		0, 4, 0, 24, 0, 0, 0, 2, 0, 2, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0, 1, 0, 0}
	out := sfnt(map[string][]byte{"cmap": cmap, "glyf": glyf, "head": head, "hhea": hhea, "hmtx": hmtx, "loca": loca, "maxp": maxp})
	return out, newID
}

// appendGlyph appends glyph data without its instructions, composite
// components renumbered.
func appendGlyph(dst, d []byte, newID map[uint16]uint16) []byte {
	if len(d) < 10 {
		return dst
	}
	n := int(int16(binary.BigEndian.Uint16(d)))
	if n >= 0 { // simple: drop the instructions after the contour ends
		p := 10 + 2*n
		if p+2 > len(d) {
			return append(dst, d...)
		}
		il := int(binary.BigEndian.Uint16(d[p:]))
		if p+2+il > len(d) {
			return append(dst, d...)
		}
		dst = append(dst, d[:p]...)
		dst = append(dst, 0, 0)
		return append(dst, d[p+2+il:]...)
	}
	start := len(dst)
	var last int
	end := components(d, func(off int) { last = off - 2 })
	dst = append(dst, d[:end]...)
	components(dst[start:], func(off int) {
		g := binary.BigEndian.Uint16(dst[start+off:])
		binary.BigEndian.PutUint16(dst[start+off:], newID[g])
	})
	flags := binary.BigEndian.Uint16(dst[start+last:])
	binary.BigEndian.PutUint16(dst[start+last:], flags&^haveInstr)
	return dst
}

// sfnt assembles a font file from its tables, with their checksums.
func sfnt(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	n := len(tags)
	es := 0
	for 1<<(es+1) <= n {
		es++
	}
	out := binary.BigEndian.AppendUint32(nil, 0x00010000)
	out = binary.BigEndian.AppendUint16(out, uint16(n))
	out = binary.BigEndian.AppendUint16(out, uint16(16<<es))
	out = binary.BigEndian.AppendUint16(out, uint16(es))
	out = binary.BigEndian.AppendUint16(out, uint16(16*n-16<<es))
	off := 12 + 16*n
	for _, t := range tags {
		d := tables[t]
		out = append(out, t...)
		out = binary.BigEndian.AppendUint32(out, checksum(d))
		out = binary.BigEndian.AppendUint32(out, uint32(off))
		out = binary.BigEndian.AppendUint32(out, uint32(len(d)))
		off += (len(d) + 3) &^ 3
	}
	headAt := 0
	for _, t := range tags {
		if t == "head" {
			headAt = len(out)
		}
		out = append(out, tables[t]...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	return out
}

func checksum(d []byte) uint32 {
	var s uint32
	for i := 0; i < len(d); i += 4 {
		var w [4]byte
		copy(w[:], d[i:])
		s += binary.BigEndian.Uint32(w[:])
	}
	return s
}
