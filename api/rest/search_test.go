package rest_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// searchRow is what q sees of an invoice.
type searchRow struct {
	id, number, client string
	sent               bool
	at                 time.Time
}

// want is q's documented meaning, evaluated by brute force: every word of
// q starts a word of the number or of the client's name.
func (r searchRow) matches(q string) bool {
	words := shortcut.SearchTokens(r.number + " " + r.client)
	toks := shortcut.SearchTokens(q)
	if len(toks) > 16 {
		toks = toks[:16]
	}
	for _, t := range toks {
		if !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, t) }) {
			return false
		}
	}
	return true
}

// The search index (word index for numbers, distinct values for client
// names) must give exactly the brute-force answer: totals and pages, with
// and without a filter, through every way a search is answered, and after
// names and numbers change and rows go.
func TestSearchMatchesBruteForce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	other := env.Workspace(t, "starter", false, false)
	ctx := context.Background()
	clients := []string{"Acme Holdings", "Acme Labs", "Globex Holdings", "Invicta 000123 Ltd", "Holdings", "", "Hold-Co 7", "acme"}
	numbers := func(i int) string {
		switch i % 9 {
		case 4:
			return fmt.Sprintf("ACME-%d", i)
		case 7:
			return fmt.Sprintf("X-HOLD-%03d", i)
		}
		return fmt.Sprintf("INV-%06d", 100+i)
	}
	var rows []searchRow
	seed := func(wsID string, n int, keep bool) {
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		bulk := make([]*ent.InvoiceCreate, n)
		for i := range bulk {
			at := base.Add(time.Duration(i/2) * time.Minute) // pairs share a time: ties break by id
			r := searchRow{id: ids.At("inv", at), number: numbers(i), client: clients[(i*5)%len(clients)], sent: i%3 != 0, at: at}
			st := invoice.StatusDraft
			if r.sent {
				st = invoice.StatusSent
			}
			bulk[i] = env.DB.Writer.Invoice.Create().SetID(r.id).SetWorkspaceID(wsID).SetNumber(r.number).SetDate("2026-01-01").
				SetStatus(st).SetClientName(r.client).SetCreatedAt(at).SetUpdatedAt(at)
			if keep {
				rows = append(rows, r)
			}
		}
		if err := env.DB.Writer.Invoice.CreateBulk(bulk...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	seed(other.ID, 40, false)
	seed(ws.ID, 90, true)

	queries := []string{"INV-000123", "inv-0001", "inv", "INV-0001 acme", "acme", "Acme Holdings", "holdings acme", "acme 000107",
		"inv acme", "invicta", "000123", "hold", "ltd inv-000123", "globex 0000", "zzz", "a", "acme-7", "acme-1", "hold 7",
		"x hold 0", "holdings hold", "inv 000123 ltd invicta", "7", "co",
		// No match until numbers change below: cached lookups must notice.
		"inv-99", "acme 99"}
	check := func(label string) {
		t.Helper()
		slices.SortFunc(rows, func(a, b searchRow) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
		for _, q := range queries {
			for _, status := range []string{"", "sent"} {
				var want []string
				for _, r := range rows {
					if r.matches(q) && (status == "" || r.sent) {
						want = append(want, r.id)
					}
				}
				// The last page is past the end: none of its rows, the exact total.
				for _, pg := range [][2]int{{100, 0}, {5, 0}, {5, 3}, {4, len(want) - 2}, {5, len(want) + 3}} {
					if pg[1] < 0 {
						continue
					}
					path := fmt.Sprintf("/v1/invoices?q=%s&limit=%d&offset=%d", url.QueryEscape(q), pg[0], pg[1])
					if status != "" {
						path += "&status=" + status
					}
					l := getList(t, env, path, ws.Key)
					var got []string
					for _, d := range l.Data {
						got = append(got, d["id"].(string))
					}
					end := min(pg[1]+pg[0], len(want))
					if l.Meta.Total != len(want) || !slices.Equal(got, want[min(pg[1], end):end]) {
						t.Fatalf("%s: %s: total %d, got %v; want total %d, %v", label, path, l.Meta.Total, got, len(want), want[min(pg[1], end):end])
					}
				}
			}
		}
	}
	check("seeded")
	// Every way through: no row checked one by one (the SQL condition), or a few.
	prev := shortcut.SetProbeCap(2)
	check("probe cap 2")
	shortcut.SetProbeCap(prev)

	// Names change (a new name too), numbers change, rows go.
	for i := range rows {
		r := &rows[i]
		switch i % 7 {
		case 1:
			r.client = "Initech Holdings"
			if err := env.DB.Writer.Invoice.UpdateOneID(r.id).SetClientName(r.client).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		case 2:
			r.number = "INV-" + strings.Repeat("9", i%5+1)
			if err := env.DB.Writer.Invoice.UpdateOneID(r.id).SetNumber(r.number).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		case 4:
			// A new name the word index's tokenizer must fold (not ASCII).
			r.client = "Société Générale"
			if err := env.DB.Writer.Invoice.UpdateOneID(r.id).SetClientName(r.client).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		case 3:
			if err := env.DB.Writer.Invoice.DeleteOneID(r.id).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			r.id = ""
		}
	}
	rows = slices.DeleteFunc(rows, func(r searchRow) bool { return r.id == "" })
	queries = append(queries, "initech", "initech holdings", "inv-9", "holdings", "Société", "générale soc")
	check("after updates and deletes")
	prev = shortcut.SetProbeCap(2)
	check("after updates and deletes, probe cap 2")
	shortcut.SetProbeCap(prev)
}

// On PostgreSQL the word indexes take new entries at once (fastupdate off):
// a pending list of queued entries is read in full by every search, and
// writes had left 63,000 there (a lookup took 10.6 ms instead of 0.09 ms).
func TestSearchIndexesQueueNothingOnPostgres(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	if env.DB.Dialect != "postgres" {
		t.Skip("a PostgreSQL GIN setting; the same suite runs on PostgreSQL with " + apitest.PostgresEnv)
	}
	rows, err := env.DB.ReadPool.QueryContext(t.Context(), `SELECT c.relname, coalesce(array_to_string(c.reloptions, ','), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
		WHERE c.relkind = 'i' AND a.amname = 'gin' AND n.nspname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name, opts string
		if err := rows.Scan(&name, &opts); err != nil {
			t.Fatal(err)
		}
		n++
		if !strings.Contains(opts, "fastupdate=off") {
			t.Errorf("%s: options %q, want fastupdate=off", name, opts)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no GIN index in the schema")
	}
}
