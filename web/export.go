package web

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// A CSV export is a list as people read it: amounts as plain decimals in
// their currency's unit with the currency beside, quantities as decimals,
// rates as percentages, the number or name of each record an id points
// to beside the id. It streams: rows are written a batch at a time as the
// records engine reads them (records.Engine.Each, keyset pages), so a
// list of any length is never held.

// csvBatch is how many records an export names and writes at a time.
const csvBatch = 500

// exportFlushed, when set (tests), hears each batch written and flushed.
var exportFlushed func(rows int)

// csvCol is one column of an export.
type csvCol struct {
	field  string // the record's field
	header string
	// ref, for a name column, is the resource the field's id points to.
	ref *resource.Resource
}

// csvColumns are the columns of r's export: every scalar field its
// records show, then beside an id of another record its number or name
// (unless the record keeps it: client_name).
func csvColumns(r *resource.Resource) []csvCol {
	fields := records.Sortable(r)
	var out []csvCol
	for _, f := range fields {
		h := f
		switch {
		case strings.HasSuffix(f, "_cents"):
			h = strings.TrimSuffix(f, "_cents")
		case strings.HasSuffix(f, "_milli"):
			h = strings.TrimSuffix(f, "_milli")
		case strings.HasSuffix(f, "_bp"):
			h = strings.TrimSuffix(f, "_bp") + "_percent"
		}
		out = append(out, csvCol{field: f, header: h})
		base, ok := strings.CutSuffix(f, "_id")
		if !ok {
			continue
		}
		to := bySingular(base)
		if to == nil || labelColumn(to) == "" {
			continue
		}
		named := base + "_" + labelColumn(to)
		if !slices.Contains(fields, named) {
			out = append(out, csvCol{field: f, header: named, ref: to})
		}
	}
	return out
}

// bySingular is the browsable resource a field's name calls it by:
// "sales_order" is the sales orders.
func bySingular(name string) *resource.Resource {
	for _, r := range browsable() {
		if strings.ReplaceAll(r.Singular, " ", "_") == name {
			return r
		}
	}
	return nil
}

// csvRecord is a record's fields as /v1 wrote them: only the scalar
// ones an export shows are read, never its lines or other nested values.
type csvRecord map[string]json.RawMessage

// get is a scalar field's value as decodeRecord reads it: a string, a
// json.Number, a bool, or nil.
func (r csvRecord) get(name string) any {
	raw := r[name]
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return s
	case string(raw) == "true" || string(raw) == "false":
		return string(raw) == "true"
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return json.Number(raw)
	}
	return nil
}

// csvRow is rec's cells in cols' order.
func csvRow(cols []csvCol, rec csvRecord, names map[string]string) []string {
	cur := textOf(rec.get("currency_code"))
	out := make([]string, len(cols))
	for i, c := range cols {
		v := rec.get(c.field)
		if c.ref != nil {
			out[i] = names[textOf(v)]
			continue
		}
		out[i] = csvCell(c.field, v, cur)
	}
	return out
}

// csvCell is one value as a cell; text that a spreadsheet would run as a
// formula starts with an apostrophe.
func csvCell(field string, v any, cur string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		n, err := x.Int64()
		switch {
		case err != nil:
			return x.String()
		case strings.HasSuffix(field, "_cents"):
			return pricing.Plain(n, cur)
		case strings.HasSuffix(field, "_milli"):
			return pricing.Decimal(n, 3, uiLang)
		case strings.HasSuffix(field, "_bp"):
			return pricing.Decimal(n, 2, uiLang)
		}
		return x.String()
	case string:
		if x != "" && strings.ContainsRune("=+-@\t\r", rune(x[0])) {
			return "'" + x
		}
		return x
	}
	return ""
}

// csvName is an export's file name: invoices-2026-11-27.csv.
func csvName(what string, at time.Time) string {
	return what + "-" + at.UTC().Format(time.DateOnly) + ".csv"
}

// exportList answers a list as CSV (the list's address with
// format=csv), as filtered, searched and sorted.
func (u *UI) exportList(c *fiber.Ctx, r *resource.Resource) error {
	ws := workspaceOf(c)
	if err := access.GatePlan(access.WorkspaceOf(ws), r); err != nil {
		return u.fail(c, http.StatusForbidden, "Not available", gateMessage(err))
	}
	c.Context().QueryArgs().Del("format")
	pg, err := listPage(c, r)
	if err != nil {
		return u.fail(c, http.StatusBadRequest, "Cannot export", gateMessage(err))
	}
	u.streamCSV(c, csvName(r.Name, time.Now()), func(ctx context.Context, w io.Writer) error {
		return u.writeCSV(ctx, w, ws, r, func(fn func([]byte) error) error {
			return u.core.Records.Each(ctx, r, recordsWorkspace(ws), pg, fn)
		})
	})
	return nil
}

// streamCSV answers a CSV download written by write as the response goes
// out: the handler returns first, then fasthttp calls the writer, so it
// must not touch c.
func (u *UI) streamCSV(c *fiber.Ctx, name string, write func(ctx context.Context, w io.Writer) error) {
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	log := u.log
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// The request's context ends with the handler; a client that goes
		// away fails a flush, which ends the export.
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := write(ctx, flusher{w}); err != nil {
			log.Warn("admin export stopped", "file", name, "err", err)
		}
	})
}

// flusher sends what a CSV writer wrote at each Flush.
type flusher struct{ w *bufio.Writer }

func (f flusher) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f flusher) Flush() error                { return f.w.Flush() }

// writeCSV writes the header and every record each yields, a batch at a
// time: the batch's ids are named with one read per resource, written and
// flushed to the client.
func (u *UI) writeCSV(ctx context.Context, w io.Writer, ws *ent.Workspace, r *resource.Resource, each func(func([]byte) error) error) error {
	cols := csvColumns(r)
	cw := csv.NewWriter(w)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.header
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	batch := make([]csvRecord, 0, csvBatch)
	rows := 0
	flush := func() error {
		var ids []string
		for _, rec := range batch {
			for _, c := range cols {
				if id := textOf(rec.get(c.field)); c.ref != nil && id != "" {
					ids = append(ids, id)
				}
			}
		}
		names, err := u.namesOf(ctx, ws, ids)
		if err != nil {
			return err
		}
		for _, rec := range batch {
			if err := cw.Write(csvRow(cols, rec, names)); err != nil {
				return err
			}
		}
		rows += len(batch)
		batch = batch[:0]
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
		if exportFlushed != nil {
			exportFlushed(rows)
		}
		return nil
	}
	err := each(func(b []byte) error {
		var rec csvRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return err
		}
		if batch = append(batch, rec); len(batch) == csvBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
