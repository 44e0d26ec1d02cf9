package records_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

func TestMain(m *testing.M) { apitest.Main(m) }

type listCase struct {
	r  *resource.Resource
	pg records.Page
}

// Every strategy of the list pipeline answers, page for page and byte for
// byte, what the plain path (COUNT(*), one newest-first query, no cache)
// answers: each alone, all together, and each a second time from the
// render cache. The workspace is large enough for deep offsets to skip
// days, and the queries take every way of a search.
func TestStrategiesAnswerAsThePlainPath(t *testing.T) {
	db, url := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Strategies", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: 6000, Seed: 23}); err != nil {
		t.Fatal(err)
	}
	cases := strategyCases(t, db, ws.ID)
	w := records.Workspace{ID: ws.ID, Commerce: true}
	// The plain path: every shortcut off, the database's too.
	plain := engine(t, openOff(t, url, shortcut.Names...))
	plain.SetCache(0)
	records.Only(plain)
	var all []string
	for name := range records.Strategies {
		all = append(all, name)
	}
	engines := map[string]*records.Engine{"all": engine(t, db)}
	records.Only(engines["all"], all...)
	for _, name := range all {
		engines[name] = engine(t, db)
		records.Only(engines[name], name)
	}
	// The search's own shortcuts: each off, every other on.
	for _, name := range []string{"probeCache", "valuesLog"} {
		engines["all but "+name] = engine(t, openOff(t, url, name))
		records.Only(engines["all but "+name], all...)
	}
	compare := func(pass string) {
		want := make([][]byte, len(cases))
		for i, c := range cases {
			if want[i], err = plain.List(ctx, c.r, w, c.pg); err != nil {
				t.Fatalf("%s %+v: %v", c.r.Name, c.pg, err)
			}
		}
		for name, e := range engines {
			t.Run(pass+"/"+name, func(t *testing.T) {
				for round := range 2 { // the second from the render cache
					for i, c := range cases {
						got, err := e.List(ctx, c.r, w, c.pg)
						if err != nil {
							t.Fatalf("%s %+v: %v", c.r.Name, c.pg, err)
						}
						if !bytes.Equal(got, want[i]) {
							t.Errorf("round %d, %s %+v:\n got %.300s\nwant %.300s", round, c.r.Name, c.pg, got, want[i])
						}
					}
				}
			})
		}
	}
	compare("seeded")
	// A new client name on some invoices: searches read it from the log of
	// new values, or read every value again.
	if err := db.Writer.Invoice.Update().Where(invoice.WorkspaceID(ws.ID), invoice.NumberHasSuffix("7")).SetClientName("Zyxel Neuname").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"Zyxel Neuname", "neuname", "zyx"} {
		cases = append(cases, listCase{resource.Invoices, records.Page{Q: q, Limit: 25}}, listCase{resource.Invoices, records.Page{Q: q, Limit: 25, Offset: 120}})
	}
	compare("a new name")
}

// openOff opens another handle on the database at url with the named
// shortcuts off.
func openOff(t *testing.T, url string, off ...string) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), url, database.Options{ShortcutsOff: off})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func engine(t *testing.T, db *database.DB) *records.Engine {
	e, err := records.New(db, resource.All)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// strategyCases are the lists compared: pages at every offset that picks
// another way to page, filters with and without counters, and searches
// taken from the workspace's own records.
func strategyCases(t *testing.T, db *database.DB, wsID string) []listCase {
	var number, client string
	err := db.ReadPool.QueryRowContext(context.Background(), db.Rebind(
		"SELECT number, client_name FROM invoices WHERE workspace_id = ? AND client_name <> '' ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET 40"),
		wsID).Scan(&number, &client)
	if err != nil {
		t.Fatal(err)
	}
	var cases []listCase
	add := func(r *resource.Resource, pg records.Page) {
		if pg.Limit == 0 {
			pg.Limit = 25
		}
		cases = append(cases, listCase{r, pg})
	}
	for _, off := range []int{0, 25, 150, 600, 5010, 5990, 7000} {
		add(resource.Invoices, records.Page{Offset: off})
	}
	add(resource.Invoices, records.Page{Limit: 100, Offset: 5900})
	add(resource.Invoices, records.Page{Filters: []records.FilterValue{{Column: "status", Value: "paid"}}, Offset: 200})
	add(resource.SalesOrders, records.Page{Filters: []records.FilterValue{{Column: "online", Value: true}}})
	add(resource.SalesOrders, records.Page{Filters: []records.FilterValue{{Column: "status", Value: "confirmed"}, {Column: "online", Value: true}}})
	add(resource.Products, records.Page{Offset: 10})
	add(resource.Promotions, records.Page{})
	for _, q := range []string{number, number[:len(number)-2], client, firstWord(client), "inv", "inv " + number[len(number)-3:], client + " " + number, "zzzz", "ünïcode"} {
		for _, off := range []int{0, 120} {
			add(resource.Invoices, records.Page{Q: q, Offset: off})
		}
		add(resource.Invoices, records.Page{Q: q, Filters: []records.FilterValue{{Column: "status", Value: "paid"}}})
		add(resource.SalesOrders, records.Page{Q: q})
	}
	if len(cases) < 40 {
		panic(fmt.Sprint(len(cases)))
	}
	return cases
}

func firstWord(s string) string {
	for i, r := range s {
		if r == ' ' {
			return s[:i]
		}
	}
	return s
}
