package records

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/jsonout"
)

func newDests(cols []column, extra int) []any {
	d := make([]any, 0, len(cols)+extra)
	for i := 0; i < extra; i++ {
		d = append(d, new(string))
	}
	for _, c := range cols {
		switch c.kind {
		case kInt:
			d = append(d, new(sql.NullInt64))
		case kBool:
			d = append(d, new(sql.NullBool))
		case kTime:
			d = append(d, new(sql.NullTime))
		case kJSON:
			d = append(d, new([]byte))
		case kFloat:
			d = append(d, new(sql.NullFloat64))
		default:
			d = append(d, new(sql.NullString))
		}
	}
	return d
}

// value returns a scanned column as a plain Go value (nil for NULL).
func value(d any) any {
	switch x := d.(type) {
	case *sql.NullString:
		if x.Valid {
			return x.String
		}
	case *sql.NullInt64:
		if x.Valid {
			return x.Int64
		}
	case *sql.NullBool:
		if x.Valid {
			return x.Bool
		}
	case *sql.NullTime:
		if x.Valid {
			return x.Time
		}
	case *sql.NullFloat64:
		if x.Valid {
			return x.Float64
		}
	case *[]byte:
		if *x != nil {
			return *x
		}
	case *string:
		return *x
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

// encode writes one record; embedded holds each embed's JSON array by name.
func (p *plan) encode(b []byte, ws Workspace, dests []any, embedded [][]byte) []byte {
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
		b = append(b, ':')
		if embedded[i] == nil {
			b = append(b, '[', ']')
		} else {
			b = append(b, embedded[i]...)
		}
	}
	return append(b, '}')
}

// scanned is a fully read page: each row's column buffers.
type scanned struct {
	rows [][]any
	ids  []string
}

// Querier runs the engine's queries: the read pool, or a write's
// transaction, which must see its own rows before they are committed.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (e *Engine) query(ctx context.Context, qr Querier, p *plan, q string, args []any) (*scanned, error) {
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
	return out, nil
}

// loadEmbeds fetches every embed of a page in one query each (never per row)
// and returns, per row, the JSON array of each embed.
func (e *Engine) loadEmbeds(ctx context.Context, qr Querier, p *plan, ws Workspace, s *scanned) ([][][]byte, error) {
	out := make([][][]byte, len(s.rows))
	if len(p.embeds) == 0 || len(s.ids) == 0 {
		return out, nil
	}
	for i := range out {
		out[i] = make([][]byte, len(p.embeds))
	}
	pos := make(map[string]int, len(s.ids))
	for i, id := range s.ids {
		pos[id] = i
	}
	args, in := anys(s.ids), marks(len(s.ids))
	for ei, ep := range p.embeds {
		if ep.e.Commerce && !ws.Commerce {
			continue
		}
		rs, err := qr.QueryContext(ctx, e.db.Rebind(fmt.Sprintf(ep.sql, in)), args...)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		d := newDests(ep.cols, 1)
		for rs.Next() {
			if err := rs.Scan(d...); err != nil {
				rs.Close()
				return nil, apierr.Internal(err)
			}
			i := pos[*d[0].(*string)]
			b := out[i][ei]
			if b == nil {
				b = append(b, '[')
			} else {
				b = append(b, ',')
			}
			b = append(b, '{')
			for ci, c := range ep.cols {
				if ci > 0 {
					b = append(b, ',')
				}
				b = appendColumn(b, c, d[ci+1])
			}
			out[i][ei] = append(b, '}')
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, apierr.Internal(err)
		}
	}
	for i := range out {
		for ei, b := range out[i] {
			if b != nil {
				out[i][ei] = append(b, ']')
			}
		}
	}
	return out, nil
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

// Exists reports whether the workspace has a record of r with this id
