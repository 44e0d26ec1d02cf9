package records

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strconv"

	"entgo.io/ent/schema/field"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/jsonout"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// The scan buffer types, in the order bufOf numbers them.
const (
	bufString = iota
	bufInt
	bufFloat
	bufBool
	bufTime
	bufJSON
	bufTypes
)

// bufOf is the scan buffer a column of type t reads into.
func bufOf(t field.Type) int {
	switch {
	case t.Integer():
		return bufInt
	case t.Float():
		return bufFloat
	case t == field.TypeBool:
		return bufBool
	case t == field.TypeTime:
		return bufTime
	case t == field.TypeJSON:
		return bufJSON
	}
	return bufString
}

// newDests allocates the scan buffers of cols, with room for one more: one
// array per buffer type rather than one allocation per column, as every
// row of a page needs buffers of its own.
func newDests(cols []column) []any {
	var n [bufTypes]int
	for _, c := range cols {
		n[c.buf]++
	}
	strs, ints, floats := make([]sql.NullString, n[bufString]), make([]sql.NullInt64, n[bufInt]), make([]sql.NullFloat64, n[bufFloat])
	bools, times, jsons := make([]sql.NullBool, n[bufBool]), make([]sql.NullTime, n[bufTime]), make([][]byte, n[bufJSON])
	d := make([]any, len(cols), len(cols)+1)
	var at [bufTypes]int
	for i, c := range cols {
		k := at[c.buf]
		at[c.buf]++
		switch c.buf {
		case bufInt:
			d[i] = &ints[k]
		case bufFloat:
			d[i] = &floats[k]
		case bufBool:
			d[i] = &bools[k]
		case bufTime:
			d[i] = &times[k]
		case bufJSON:
			d[i] = &jsons[k]
		default:
			d[i] = &strs[k]
		}
	}
	return d
}

// value returns a scanned column as a plain Go value (nil for NULL).
func value(d any) any {
	switch x := d.(type) {
	case driver.Valuer: // the sql.Null types
		v, _ := x.Value()
		return v
	case *[]byte:
		if *x != nil {
			return *x
		}
	}
	return nil
}

func appendColumn(b []byte, c column, d any) []byte {
	b = jsonout.String(b, c.name)
	b = append(b, ':')
	switch x := d.(type) {
	case *sql.NullString:
		if x.Valid {
			return jsonout.String(b, x.String)
		}
	case *sql.NullInt64:
		if x.Valid {
			return strconv.AppendInt(b, x.Int64, 10)
		}
	case *sql.NullBool:
		if x.Valid {
			return strconv.AppendBool(b, x.Bool)
		}
	case *sql.NullTime:
		if x.Valid {
			return jsonout.Time(b, x.Time)
		}
	case *sql.NullFloat64:
		if x.Valid {
			return strconv.AppendFloat(b, x.Float64, 'f', -1, 64)
		}
	case *[]byte:
		if len(*x) > 0 {
			return append(b, *x...)
		}
	}
	return append(b, "null"...)
}

// encode writes the record of s's row.
func (p *plan) encode(b []byte, ws Workspace, s *scanned, row int) []byte {
	dests := s.rows[row]
	commerce := true
	if p.flag >= 0 {
		commerce = ws.Commerce && value(dests[p.flag]) == true
	}
	b = append(b, '{')
	first := true
	for i, c := range p.cols {
		if c.hidden || (c.commerce && !commerce) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendColumn(b, c, dests[i])
	}
	for _, cf := range p.r.Computed {
		b = append(b, ',')
		b = jsonout.String(b, cf.Name)
		b = append(b, ':')
		b = jsonout.Any(b, cf.Value(func(name string) any {
			if i, ok := p.colIndex[name]; ok {
				return value(dests[i])
			}
			return nil
		}))
	}
	for i, ep := range p.embeds {
		if ep.e.Commerce && !commerce {
			continue
		}
		b = append(b, ',')
		b = jsonout.String(b, ep.e.Name)
		b = append(b, ':', '[')
		b = append(b, s.embeds[row*len(p.embeds)+i]...)
		b = append(b, ']')
	}
	return append(b, '}')
}

// scanned is a fully read page: each row's column buffers and, per row
// and embed (row*len(embeds)+embed), the elements of the embed's array.
type scanned struct {
	rows   [][]any
	ids    []string
	embeds [][]byte
}

// Querier runs the engine's queries: the read pool, or a write's
// transaction, which must see its own rows before they are committed.
type Querier = database.Querier

// query reads the rows q selects, and their embeds.
func (e *Engine) query(ctx context.Context, qr Querier, p *plan, ws Workspace, q string, args []any) (*scanned, error) {
	rs, err := qr.QueryContext(ctx, e.db.Rebind(q), args...)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	defer rs.Close()
	out := &scanned{}
	idIdx := p.colIndex["id"]
	for rs.Next() {
		d := p.dests()
		if err := rs.Scan(d...); err != nil {
			return nil, apierr.Internal(err)
		}
		out.rows = append(out.rows, d)
		out.ids = append(out.ids, d[idIdx].(*sql.NullString).String)
	}
	if err := rs.Err(); err != nil {
		return nil, apierr.Internal(err)
	}
	// rs closed itself when Next returned false: qr's connection is free.
	if err := e.loadEmbeds(ctx, qr, p, ws, out); err != nil {
		return nil, err
	}
	return out, nil
}

// loadEmbeds fetches every embed of a page in one query each (never per row).
func (e *Engine) loadEmbeds(ctx context.Context, qr Querier, p *plan, ws Workspace, s *scanned) error {
	n := len(p.embeds)
	if n == 0 || len(s.ids) == 0 {
		return nil
	}
	s.embeds = make([][]byte, len(s.ids)*n)
	pos := make(map[string]int, len(s.ids))
	for i, id := range s.ids {
		pos[id] = i
	}
	args, in := anys(s.ids), marks(len(s.ids))
	for ei, ep := range p.embeds {
		if ep.e.Commerce && !ws.Commerce {
			continue
		}
		d := append([]any{new(string)}, newDests(ep.cols)...) // the parent's id first
		err := database.EachRow(ctx, qr, e.db.Rebind(fmt.Sprintf(ep.sql, in)), args, d, func() {
			k := pos[*d[0].(*string)]*n + ei
			b := s.embeds[k]
			if b != nil {
				b = append(b, ',')
			}
			b = append(b, '{')
			for ci, c := range ep.cols {
				if ci > 0 {
					b = append(b, ',')
				}
				b = appendColumn(b, c, d[ci+1])
			}
			s.embeds[k] = append(b, '}')
		})
		if err != nil {
			return apierr.Internal(err)
		}
	}
	return nil
}

// joinParts appends the records' JSON, comma-separated; nil parts (rows
// deleted meanwhile) are left out.
func joinParts(b []byte, parts [][]byte) []byte {
	n := len(parts)
	for _, part := range parts {
		n += len(part)
	}
	b = slices.Grow(b, n+64) // room for the meta that follows
	first := true
	for _, part := range parts {
		if part == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, part...)
	}
	return b
}
