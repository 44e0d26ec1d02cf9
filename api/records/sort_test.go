package records_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/invoicepayment"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

type row map[string]any

func decodeRows(t *testing.T, b []byte) ([]row, int) {
	t.Helper()
	var env struct {
		Data []row
		Meta struct{ Total int }
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return env.Data, env.Meta.Total
}

// compareValues orders two JSON values as the databases do: NULL first,
// numbers as numbers, text byte by byte (the test databases collate so).
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if x, ok := a.(json.Number); ok {
		xf, _ := x.Float64()
		yf, _ := b.(json.Number).Float64()
		return cmp.Compare(xf, yf)
	}
	if x, ok := a.(bool); ok {
		y := b.(bool)
		return cmp.Compare(map[bool]int{false: 0, true: 1}[x], map[bool]int{false: 0, true: 1}[y])
	}
	return cmp.Compare(a.(string), b.(string))
}

// A sorted list pages in the order asked, ties broken by id, NULLs first
// ascending and last descending, on every strategy as on the plain path;
// Each reads the same records in the same order (by keyset in an indexed
// order, by one sorted read in another), with q, filters and a record
// deleted between two of its pages.
func TestSortedListsAndEach(t *testing.T) {
	db, url := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Sorted", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: 1300, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	// Half the invoices of no client: client_id is indexed and may be
	// NULL, the keyset's hardest case; a page of Each ends inside the NULLs
	// both ways.
	if err := db.Writer.Invoice.Update().Where(invoice.WorkspaceID(ws.ID), invoice.Or(invoice.NumberHasSuffix("1"), invoice.NumberHasSuffix("3"),
		invoice.NumberHasSuffix("5"), invoice.NumberHasSuffix("7"), invoice.NumberHasSuffix("9"))).ClearClientID().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	w := records.Workspace{ID: ws.ID, Commerce: true}
	plain := engine(t, openOff(t, url, shortcut.Names...))
	plain.SetCache(0)
	records.Only(plain)
	all := engine(t, db)
	sorts := []records.Sort{{Column: "number"}, {Column: "amount_incl_vat_cents", Desc: true}, {Column: "status"},
		{Column: "client_name", Desc: true}, {Column: "due_date"}, {Column: "due_date", Desc: true}, {Column: "quote_id"},
		{Column: "quote_id", Desc: true}, {Column: "created_at"}, {Column: "id", Desc: true},
		{Column: "client_id"}, {Column: "client_id", Desc: true}}
	for _, s := range sorts {
		for _, pg := range []records.Page{{Sort: s}, {Sort: s, Q: "inv"}, {Sort: s, Filters: []records.FilterValue{{Column: "status", Value: "paid"}}}} {
			var paged []string
			var prev row
			total := -1
			for off := 0; ; off += 100 {
				pg.Limit, pg.Offset = 100, off
				want, err := plain.List(ctx, resource.Invoices, w, pg)
				if err != nil {
					t.Fatal(err)
				}
				for round := range 2 { // the second from the render cache
					got, err := all.List(ctx, resource.Invoices, w, pg)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("round %d, %+v:\n got %.300s\nwant %.300s", round, pg, got, want)
					}
				}
				rows, n := decodeRows(t, want)
				total = n
				for _, r := range rows {
					if prev != nil {
						c := compareValues(prev[s.Column], r[s.Column])
						if c == 0 {
							c = cmp.Compare(prev["id"].(string), r["id"].(string))
						}
						if s.Desc {
							c = -c
						}
						if c >= 0 {
							t.Fatalf("%+v: %v (%v) before %v (%v)", s, prev[s.Column], prev["id"], r[s.Column], r["id"])
						}
					}
					prev = r
					paged = append(paged, r["id"].(string))
				}
				if len(rows) < 100 {
					break
				}
			}
			if len(paged) != total || total == 0 {
				t.Fatalf("%+v: paged %d of %d", pg, len(paged), total)
			}
			pg.Limit, pg.Offset = 0, 0
			var each []string
			err := all.Each(ctx, resource.Invoices, w, pg, func(b []byte) error {
				var r row
				if err := json.Unmarshal(b, &r); err != nil {
					return err
				}
				each = append(each, r["id"].(string))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(each, paged) {
				t.Fatalf("%+v: Each read %d records, not the %d pages' in their order", pg, len(each), len(paged))
			}
		}
	}
	// A record deleted while Each writes the page it ends: the next page
	// starts after the newest of that page still there, nothing twice.
	var before []string
	if err := all.Each(ctx, resource.Invoices, w, records.Page{}, func(b []byte) error {
		var r row
		_ = json.Unmarshal(b, &r)
		before = append(before, r["id"].(string))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	gone := before[497:500] // the last three of the first page
	err = all.Each(ctx, resource.Invoices, w, records.Page{}, func(b []byte) error {
		var r row
		_ = json.Unmarshal(b, &r)
		got = append(got, r["id"].(string))
		if len(got) == 499 {
			if _, err := db.Writer.InvoicePayment.Delete().Where(invoicepayment.InvoiceIDIn(gone...)).Exec(ctx); err != nil {
				return err
			}
			if _, err := db.Writer.Invoice.Delete().Where(invoice.IDIn(gone...)).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The page held was written whole; the next starts after before[496].
	if !slices.Equal(got, before) {
		t.Fatalf("after a delete Each read %d records, want %d", len(got), len(before))
	}
}
