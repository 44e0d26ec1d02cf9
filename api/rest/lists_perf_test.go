package rest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// seedInvoices inserts n invoices one second apart through ent (as bulk
// seeding does, bypassing the API), newest last.
func seedInvoices(t *testing.T, db *ent.Client, wsID string, n int, number func(i int) string) []string {
	t.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bulk := make([]*ent.InvoiceCreate, n)
	out := make([]string, n)
	for i := range bulk {
		at := base.Add(time.Duration(i) * time.Second)
		out[i] = ids.At("inv", at)
		st := invoice.StatusSent
		if i%3 == 0 {
			st = invoice.StatusDraft
		}
		bulk[i] = db.Invoice.Create().SetID(out[i]).SetWorkspaceID(wsID).SetNumber(number(i)).SetDate("2026-01-01").
			SetStatus(st).SetClientName(fmt.Sprintf("Client %d", i%4)).SetCreatedAt(at).SetUpdatedAt(at)
	}
	if err := db.Invoice.CreateBulk(bulk...).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}

type page struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	Meta struct{ Limit, Offset, Total int } `json:"meta"`
}

func (p page) ids() []string {
	var out []string
	for _, d := range p.Data {
		out = append(out, d.ID)
	}
	return out
}

func TestListTotalsStayExactThroughInsertsAndDeletes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "starter", false, false)
	seedInvoices(t, env.DB.Writer, other.ID, 4, func(i int) string { return fmt.Sprintf("O-%d", i) })
	made := seedInvoices(t, env.DB.Writer, ws.ID, 7, func(i int) string { return fmt.Sprintf("T-%d", i) })
	total := func() int {
		var p page
		env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, 200).Decode(t, &p)
		return p.Meta.Total
	}
	if got := total(); got != 7 {
		t.Fatalf("total %d, want 7 (another workspace's invoices must not count)", got)
	}
	if _, err := env.DB.Writer.Invoice.Delete().Where(invoice.IDIn(made[0], made[1])).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := total(); got != 5 {
		t.Fatalf("total after deleting 2: %d, want 5", got)
	}
	var drafts page
	env.Get(t, "/v1/invoices?status=draft", ws.Key).WantStatus(t, 200).Decode(t, &drafts)
	if drafts.Meta.Total != 2 { // 7 made, indexes 0,3,6 drafts, 0 deleted
		t.Fatalf("filtered total %d, want 2", drafts.Meta.Total)
	}
	// A status change moves the row between the per-status totals.
	if err := env.DB.Writer.Invoice.UpdateOneID(made[4]).SetStatus(invoice.StatusVoid).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"status=draft": 2, "status=sent": 2, "status=void": 1, "status=paid": 0} {
		var p page
		env.Get(t, "/v1/invoices?"+q, ws.Key).WantStatus(t, 200).Decode(t, &p)
		if p.Meta.Total != want || len(p.Data) != want {
			t.Errorf("%s: total %d with %d rows, want %d", q, p.Meta.Total, len(p.Data), want)
		}
	}
	// A filter on a column without per-value totals is counted.
	var none page
	env.Get(t, "/v1/invoices?client_id=cli_nobody", ws.Key).WantStatus(t, 200).Decode(t, &none)
	if none.Meta.Total != 0 {
		t.Errorf("client_id filter total %d, want 0", none.Meta.Total)
	}
}

func TestDeepPagesAreTheSameRowsAsTheWholeList(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	// Past offset 100 pages are found through the index in a subquery.
	made := seedInvoices(t, env.DB.Writer, ws.ID, 123, func(i int) string { return fmt.Sprintf("P-%03d", i) })
	want := slices.Clone(made)
	slices.Reverse(want) // newest first
	var got []string
	for off := 0; off < 130; off += 10 {
		var p page
		env.Get(t, fmt.Sprintf("/v1/invoices?limit=10&offset=%d", off), ws.Key).WantStatus(t, 200).Decode(t, &p)
		if p.Meta.Total != 123 || p.Meta.Offset != off {
			t.Fatalf("offset %d: meta %+v", off, p.Meta)
		}
		got = append(got, p.ids()...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages joined:\n%v\nwant newest first:\n%v", got, want)
	}
	// A filtered deep page walks the filter's index the same way.
	var sent page
	env.Get(t, "/v1/invoices?status=sent&limit=3&offset=6", ws.Key).WantStatus(t, 200).Decode(t, &sent)
	var wantSent []string
	for i := len(made) - 1; i >= 0; i-- {
		if i%3 != 0 {
			wantSent = append(wantSent, made[i])
		}
	}
	if sent.Meta.Total != len(wantSent) || !slices.Equal(sent.ids(), wantSent[6:9]) {
		t.Fatalf("status=sent offset 6: %v total %d, want %v total %d", sent.ids(), sent.Meta.Total, wantSent[6:9], len(wantSent))
	}
}

func TestSearchCountsAndPagesOnlyTheWorkspacesMatches(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "starter", false, false)
	seedInvoices(t, env.DB.Writer, other.ID, 12, func(i int) string { return fmt.Sprintf("S-%03d", i) })
	made := seedInvoices(t, env.DB.Writer, ws.ID, 40, func(i int) string { return fmt.Sprintf("S-%03d", i) })
	// "Client 1" matches every 4th invoice: many matches, found by walking
	// the newest-first index; a number matches one, fetched by key.
	var want []string
	for i := len(made) - 1; i >= 0; i-- {
		if i%4 == 1 {
			want = append(want, made[i])
		}
	}
	for _, c := range []struct {
		q         string
		limit     int
		want      []string
		wantTotal int
	}{
		{"client+1", 25, want, 10},
		{"CLIENT+1", 3, want[:3], 10},
		{"s-017", 25, []string{made[17]}, 1},
		{"nothing", 25, nil, 0},
	} {
		var p page
		env.Get(t, fmt.Sprintf("/v1/invoices?q=%s&limit=%d", c.q, c.limit), ws.Key).WantStatus(t, 200).Decode(t, &p)
		if p.Meta.Total != c.wantTotal || !slices.Equal(p.ids(), c.want) {
			t.Errorf("q=%s limit %d: %v total %d, want %v total %d", c.q, c.limit, p.ids(), p.Meta.Total, c.want, c.wantTotal)
		}
	}
	var deep page
	env.Get(t, "/v1/invoices?q=client+1&limit=4&offset=8", ws.Key).WantStatus(t, 200).Decode(t, &deep)
	if !slices.Equal(deep.ids(), want[8:]) || deep.Meta.Total != 10 {
		t.Fatalf("q offset 8: %v total %d, want %v", deep.ids(), deep.Meta.Total, want[8:])
	}
	var both page
	env.Get(t, "/v1/invoices?q=client+1&status=draft", ws.Key).WantStatus(t, 200).Decode(t, &both)
	var wantBoth []string
	for i := len(made) - 1; i >= 0; i-- {
		if i%4 == 1 && i%3 == 0 {
			wantBoth = append(wantBoth, made[i])
		}
	}
	if !slices.Equal(both.ids(), wantBoth) || both.Meta.Total != len(wantBoth) {
		t.Fatalf("q with status: %v total %d, want %v", both.ids(), both.Meta.Total, wantBoth)
	}
}
