package main

import (
	"database/sql"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// The demo holds records to act on at every scale: `demo --records N`
// into a workspace, and a fresh `serve --demo`, read through the API.
func TestDemoDataHasRecordsToActOnAtEveryScale(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 60} {
		t.Run(fmt.Sprintf("demo --records %d", n), func(t *testing.T) {
			t.Parallel()
			env := apitest.Start(t)
			ws := env.Workspace(t, "business", true, true)
			_, dbURL := apitest.DB(t)
			mustCLI(t, dbURL, "demo", "--workspace", ws.ID, "--records", strconv.Itoa(n))
			checkActionable(t, env, ws.Key, n)
		})
	}
	t.Run("serve --demo", func(t *testing.T) {
		t.Parallel()
		dbURL := freshDatabase(t)
		s := startServer(t, dbURL, "--demo")
		// The banner's key goes to stdout; mint another one instead.
		db, err := database.Open(t.Context(), dbURL, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ws, err := db.Writer.Workspace.Query().Order(ent.Asc(workspace.FieldCreatedAt)).First(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		unlimited := 0
		key, _, err := access.NewKey(t.Context(), db.Writer, access.KeySpec{WorkspaceID: ws.ID, Role: access.RoleAdmin, RateLimit: &unlimited})
		if err != nil {
			t.Fatal(err)
		}
		env := &apitest.Env{URL: s.url, Client: &http.Client{Timeout: 30 * time.Second}}
		t.Cleanup(env.Client.CloseIdleConnections)
		checkActionable(t, env, key, demoInvoices)
		// The demo workspace has a company profile, logo included.
		p := env.Get(t, "/v1/company", key).WantStatus(t, http.StatusOK).JSON(t)
		for _, f := range []string{"legal_name", "address", "country", "vat_number", "registration_number", "email", "phone", "website",
			"logo", "default_currency", "default_vat_rate_bp", "default_payment_terms_days", "default_language", "payment_instructions", "footer"} {
			if p[f] == nil || p[f] == "" {
				t.Errorf("the demo's company profile has no %s: %v", f, p)
			}
		}
		if logo, _ := p["logo"].(string); !strings.HasPrefix(logo, "data:image/svg+xml;base64,") {
			t.Errorf("the demo's logo is %.60q", logo)
		}
	})
}

// freshDatabase is the URL of an empty database, dropped when the test
// ends: a file on SQLite, a schema of its own on PostgreSQL.
func freshDatabase(t *testing.T) string {
	t.Helper()
	pg := os.Getenv(apitest.PostgresEnv)
	if pg == "" {
		return "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	}
	admin, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("lbdemo_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

type record = map[string]any

// all lists every record of path (a list endpoint with its filters).
func all(t *testing.T, env *apitest.Env, key, path string) []record {
	t.Helper()
	var out []record
	sep := "?"
	if u, _ := url.Parse(path); u.RawQuery != "" {
		sep = "&"
	}
	for offset := 0; ; offset += 100 {
		var page struct {
			Data []record `json:"data"`
			Meta struct {
				Total int `json:"total"`
			} `json:"meta"`
		}
		env.Get(t, fmt.Sprintf("%s%slimit=100&offset=%d", path, sep, offset), key).WantStatus(t, 200).Decode(t, &page)
		out = append(out, page.Data...)
		if len(page.Data) == 0 || len(out) >= page.Meta.Total {
			return out
		}
	}
}

func cents(t *testing.T, r record, field string) int64 {
	t.Helper()
	v, ok := r[field].(float64)
	if !ok {
		t.Fatalf("%v has no number %s: %v", r["number"], field, r[field])
	}
	return int64(v)
}

// some fails unless at least one of recs satisfies ok.
func some(t *testing.T, what string, recs []record, ok func(record) bool) {
	t.Helper()
	for _, r := range recs {
		if ok(r) {
			return
		}
	}
	t.Errorf("no %s among %d records", what, len(recs))
}

func checkActionable(t *testing.T, env *apitest.Env, key string, invoices int) {
	today := time.Now().UTC().Format("2006-01-02")
	lines := func(r record) []record {
		var out []record
		for _, l := range r["lines"].([]any) {
			out = append(out, l.(record))
		}
		return out
	}
	shipped := func(r record) (some, whole bool) {
		whole = true
		for _, l := range lines(r) {
			q, s := cents(t, l, "qty_milli"), cents(t, l, "shipped_qty_milli")
			some = some || s > 0
			whole = whole && s == q
		}
		return some, whole
	}

	// Sales orders: online paid but not shipped, confirmed with nothing
	// shipped (none shipped at all, online or not), partially shipped, drafts.
	paidNotShipped := all(t, env, key, "/v1/sales-orders?status=confirmed&shipping_status=not_shipped&online=true")
	some(t, "online order paid but not shipped", paidNotShipped, func(r record) bool { return r["payment_status"] == "paid" })
	confirmed := all(t, env, key, "/v1/sales-orders?status=confirmed")
	for _, o := range confirmed {
		if s, _ := shipped(o); s {
			t.Errorf("confirmed order %v has shipped lines", o["number"])
		}
	}
	some(t, "offline confirmed order", confirmed, func(r record) bool { return r["online"] == false })
	partial := all(t, env, key, "/v1/sales-orders?status=partially_shipped")
	some(t, "partially shipped order", partial, func(r record) bool { s, w := shipped(r); return s && !w })
	some(t, "draft order", all(t, env, key, "/v1/sales-orders?status=draft"), func(record) bool { return true })

	// Invoices: drafts, sent ones not yet due, past due ones, all with
	// money open.
	some(t, "draft invoice", all(t, env, key, "/v1/invoices?status=draft"), func(r record) bool {
		return cents(t, r, "remaining_cents") == cents(t, r, "amount_incl_vat_cents") && cents(t, r, "paid_cents") == 0
	})
	some(t, "sent invoice not yet due", all(t, env, key, "/v1/invoices?status=sent"), func(r record) bool {
		due, _ := r["due_date"].(string)
		return cents(t, r, "remaining_cents") > 0 && due >= today
	})
	some(t, "invoice past due", all(t, env, key, "/v1/invoices?status=overdue"), func(r record) bool {
		due, _ := r["due_date"].(string)
		return cents(t, r, "remaining_cents") > 0 && due != "" && due < today
	})

	// Bills, quotes, credit notes, promotions.
	some(t, "open bill", all(t, env, key, "/v1/bills?status=open"), func(r record) bool { return cents(t, r, "remaining_cents") > 0 })
	some(t, "draft bill", all(t, env, key, "/v1/bills?status=draft"), func(record) bool { return true })
	some(t, "draft quote", all(t, env, key, "/v1/quotes?status=draft"), func(record) bool { return true })
	some(t, "sent quote", all(t, env, key, "/v1/quotes?status=sent"), func(record) bool { return true })
	some(t, "issued credit note", all(t, env, key, "/v1/credit-notes?status=issued"), func(record) bool { return true })
	now := time.Now().UTC().Format(time.RFC3339)
	some(t, "active code promotion with a usable code", all(t, env, key, "/v1/promotions?status=active"), func(p record) bool {
		if p["kind"] != "code" {
			return false
		}
		for _, c := range all(t, env, key, "/v1/promotions/"+p["id"].(string)+"/codes") {
			exp, _ := c["expires_at"].(string)
			if (c["max_uses"] == nil || cents(t, c, "max_uses") > cents(t, c, "times_used")) && (exp == "" || exp > now) {
				return true
			}
		}
		return false
	})

	// Money: every document's lines are priced as the writes price them,
	// its totals are their sums, and an invoice's or bill's balance is what
	// is left after its payments.
	var count int
	for _, docs := range []string{"invoices", "bills", "quotes", "credit-notes"} {
		recs := all(t, env, key, "/v1/"+docs)
		for _, d := range recs {
			var excl, vat, incl int64
			for i, l := range lines(d) {
				e, v := priced(cents(t, l, "qty_milli"), cents(t, l, "unit_price_cents"), cents(t, l, "vat_rate_bp"), int64OrZero(l["discount_bp"]))
				if cents(t, l, "amount_excl_vat_cents") != e || cents(t, l, "vat_amount_cents") != v || cents(t, l, "amount_incl_vat_cents") != e+v {
					t.Fatalf("%s %v line %d: %v, the money rule gives %d + %d", docs, d["number"], i, l, e, v)
				}
				excl, vat, incl = excl+e, vat+v, incl+e+v
			}
			if cents(t, d, "amount_excl_vat_cents") != excl || cents(t, d, "vat_amount_cents") != vat || cents(t, d, "amount_incl_vat_cents") != incl {
				t.Fatalf("%s %v: totals %v/%v/%v, its lines add up to %d/%d/%d", docs, d["number"],
					d["amount_excl_vat_cents"], d["vat_amount_cents"], d["amount_incl_vat_cents"], excl, vat, incl)
			}
		}
		if docs == "invoices" {
			count = len(recs)
		}
	}
	if count != invoices {
		t.Errorf("%d invoices, want %d", count, invoices)
	}
	checkBalances(t, env, key)
	if t.Failed() {
		return
	}

	// And they can be acted on by the writes as they are.
	offline := confirmed[0]
	for _, o := range confirmed {
		if o["online"] == false {
			offline = o
		}
	}
	for _, o := range []record{paidNotShipped[0], partial[0], offline} {
		env.Do(t, "POST", "/v1/shipments", key, record{"sales_order_id": o["id"]}).WantStatus(t, 201)
		got := env.Get(t, "/v1/sales-orders/"+o["id"].(string), key).WantStatus(t, 200).JSON(t)
		if _, whole := shipped(got); !whole || got["status"] == o["status"] {
			t.Errorf("order %v (%v) after shipping what remained: %v, lines %v", o["number"], o["status"], got["status"], got["lines"])
		}
	}
	draft := all(t, env, key, "/v1/invoices?status=draft")[0]
	env.Do(t, "POST", "/v1/invoices/"+draft["id"].(string)+"/send", key, nil).WantStatus(t, 200)
	for _, docs := range [][2]string{{"invoices", "sent"}, {"invoices", "overdue"}, {"bills", "open"}} {
		d := all(t, env, key, "/v1/"+docs[0]+"?status="+docs[1])[0]
		path := "/v1/" + docs[0] + "/" + d["id"].(string)
		env.Do(t, "POST", path+"/payments", key, record{"id": "demo-test-" + d["id"].(string), "number": "T-1", "status": "completed",
			"date": today, "amount_incl_vat_cents": d["remaining_cents"]}).WantStatus(t, 201)
		if got := env.Get(t, path, key).WantStatus(t, 200).JSON(t); got["status"] != "paid" || cents(t, got, "remaining_cents") != 0 {
			t.Errorf("%s %v paid in full: %v with %v open", docs, d["number"], got["status"], got["remaining_cents"])
		}
	}
}

// checkBalances recomputes what the writes keep of every document, from the
// records it depends on: an invoice's paid_cents is the sum of its completed
// payments, its credited_cents that of the credit notes applied to it, and
// remaining_cents = incl - paid - credited, never below zero (0 when void,
// which nothing was paid or credited on); a bill's likewise with its
// payments. A credit note made against an invoice is of that invoice's
// client and currency, and an applied one names it. An invoiced quote and
// the invoice made from it name each other, with the same client, currency
// and money.
func checkBalances(t *testing.T, env *apitest.Env, key string) {
	t.Helper()
	invoices := map[string]record{}
	for _, d := range all(t, env, key, "/v1/invoices") {
		invoices[d["id"].(string)] = d
	}
	credited := map[string]int64{}
	for _, n := range all(t, env, key, "/v1/credit-notes") {
		inv, linked := invoices[fmt.Sprint(n["invoice_id"])]
		switch {
		case n["invoice_id"] == nil && n["status"] == "applied":
			t.Errorf("credit note %v is applied to no invoice", n["number"])
		case n["invoice_id"] == nil:
		case !linked:
			t.Errorf("credit note %v credits %v, no invoice of the workspace", n["number"], n["invoice_id"])
		case fmt.Sprint(n["client_id"]) != fmt.Sprint(inv["client_id"]) || inv["client_id"] == nil && n["client_name"] != inv["client_name"] ||
			n["currency_code"] != inv["currency_code"]:
			t.Errorf("credit note %v (%v, %v) credits invoice %v of %v, %v", n["number"], n["client_name"], n["currency_code"],
				inv["number"], inv["client_name"], inv["currency_code"])
		case n["status"] == "applied":
			credited[inv["id"].(string)] += cents(t, n, "amount_incl_vat_cents")
		}
	}
	for _, docs := range []string{"invoices", "bills"} {
		for _, d := range all(t, env, key, "/v1/"+docs) {
			id := d["id"].(string)
			var paid int64
			for _, p := range all(t, env, key, "/v1/"+docs+"/"+id+"/payments") {
				if p["currency_code"] != d["currency_code"] {
					t.Errorf("%s %v in %v has a payment in %v", docs, d["number"], d["currency_code"], p["currency_code"])
				}
				if p["status"] == "completed" {
					paid += cents(t, p, "amount_incl_vat_cents")
				}
			}
			incl, status := cents(t, d, "amount_incl_vat_cents"), d["status"]
			gotPaid, remaining, gotCredited := cents(t, d, "paid_cents"), cents(t, d, "remaining_cents"), int64(0)
			if docs == "invoices" {
				gotCredited = cents(t, d, "credited_cents")
			}
			want := incl - paid - credited[id]
			if status == "void" {
				want = 0
			}
			switch {
			case gotPaid != paid || gotCredited != credited[id] || remaining != want:
				t.Errorf("%s %v (%v) of %d: paid %d, credited %d, remaining %d; its payments add up to %d, its applied credit notes to %d, leaving %d",
					docs, d["number"], status, incl, gotPaid, gotCredited, remaining, paid, credited[id], want)
			case remaining < 0 || incl-paid-credited[id] < 0:
				t.Errorf("%s %v (%v): %d paid and %d credited of %d", docs, d["number"], status, paid, credited[id], incl)
			case status == "void" && paid+credited[id] != 0:
				t.Errorf("%s %v is void with %d paid and %d credited", docs, d["number"], paid, credited[id])
			case status == "paid" && remaining != 0,
				(status == "partially_paid" || status == "overdue") && remaining == 0,
				status == "partially_paid" && paid+credited[id] == 0,
				(status == "draft" || status == "sent" || status == "open") && paid+credited[id] != 0:
				t.Errorf("%s %v is %v with %d paid, %d credited and %d open", docs, d["number"], status, paid, credited[id], remaining)
			}
		}
	}
	for _, q := range all(t, env, key, "/v1/quotes") {
		inv, linked := invoices[fmt.Sprint(q["invoice_id"])]
		switch {
		case (q["status"] == "invoiced") != (q["invoice_id"] != nil):
			t.Errorf("quote %v is %v with invoice_id %v", q["number"], q["status"], q["invoice_id"])
		case q["invoice_id"] == nil:
		case !linked:
			t.Errorf("quote %v was invoiced as %v, no invoice of the workspace", q["number"], q["invoice_id"])
		case inv["quote_id"] != q["id"]:
			t.Errorf("quote %v was invoiced as %v, whose quote_id is %v", q["number"], inv["number"], inv["quote_id"])
		case fmt.Sprint(q["client_id"]) != fmt.Sprint(inv["client_id"]) || q["currency_code"] != inv["currency_code"] ||
			cents(t, q, "amount_incl_vat_cents") != cents(t, inv, "amount_incl_vat_cents"):
			t.Errorf("quote %v and the invoice %v made from it differ in client, currency or money", q["number"], inv["number"])
		}
	}
	for _, inv := range invoices {
		if inv["quote_id"] == nil {
			continue
		}
		q := env.Get(t, "/v1/quotes/"+inv["quote_id"].(string), key)
		if q.Status != http.StatusOK || q.JSON(t)["invoice_id"] != inv["id"] {
			t.Errorf("invoice %v was made from quote %v, which does not name it: %d %s", inv["number"], inv["quote_id"], q.Status, q.Body)
		}
	}
}

func int64OrZero(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// priced is a line's amounts by the documented rule (DESIGN.md, money):
// each rounded half away from zero, from exact integers.
func priced(qty, price, bp, discount int64) (excl, vat int64) {
	round := func(n, d *big.Int) int64 {
		q, r := new(big.Int).QuoRem(n, d, new(big.Int))
		if r.Abs(r).Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(int64(n.Sign())))
		}
		return q.Int64()
	}
	n := new(big.Int).Mul(big.NewInt(qty), big.NewInt(price))
	n.Mul(n, big.NewInt(10_000-discount))
	excl = round(n, big.NewInt(1000*10_000))
	vat = round(new(big.Int).Mul(big.NewInt(excl), big.NewInt(bp)), big.NewInt(10_000))
	return excl, vat
}
