package web_test

import (
	"encoding/csv"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/creditnote"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// statementClient makes a client with documents in EUR and KWD: in EUR
// an invoice before the period (1,000.00, 400.00 of it paid before), one
// in it (250.00) paid 100.00 in it, a credit note of 50.00 and a draft
// and a void invoice that never count; in KWD an invoice of 1.250. It
// returns the client's id.
func statementClient(t *testing.T, env *apitest.Env, ws *apitest.Workspace) string {
	t.Helper()
	ctx := t.Context()
	db := env.DB.Writer
	cli := env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": "Statement Ltd"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := func(number, date, cur string, incl, paid int64, st invoice.Status) string {
		i, err := db.Invoice.Create().SetWorkspaceID(ws.ID).SetNumber(number).SetDate(date).SetCurrencyCode(cur).SetClientID(cli).
			SetClientName("Statement Ltd").SetAmountInclVatCents(incl).SetPaidCents(paid).SetRemainingCents(incl - paid).SetStatus(st).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return i.ID
	}
	pay := func(invID, ext, date, cur string, amount int64) {
		if err := db.InvoicePayment.Create().SetWorkspaceID(ws.ID).SetInvoiceID(invID).SetExternalID(ext).SetNumber(strings.ToUpper(ext)).
			SetDate(date).SetCurrencyCode(cur).SetClientID(cli).SetAmountInclVatCents(amount).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	old := inv("ST-1", "2025-12-10", "EUR", 100000, 40000, invoice.StatusPartiallyPaid)
	pay(old, "pay-st-1", "2025-12-20", "EUR", 40000)
	cur := inv("ST-2", "2026-03-01", "EUR", 25000, 10000, invoice.StatusPartiallyPaid)
	pay(cur, "pay-st-2", "2026-03-15", "EUR", 10000)
	inv("ST-3", "2026-04-01", "EUR", 99900, 0, invoice.StatusDraft)
	inv("ST-4", "2026-04-02", "EUR", 88800, 0, invoice.StatusVoid)
	inv("ST-5", "2026-05-01", "KWD", 1250, 0, invoice.StatusSent)
	inv("ST-6", "2027-01-05", "EUR", 7700, 0, invoice.StatusSent) // after the period
	if err := db.CreditNote.Create().SetWorkspaceID(ws.ID).SetNumber("CN-ST-1").SetDate("2026-03-10").SetCurrencyCode("EUR").
		SetClientID(cli).SetClientName("Statement Ltd").SetAmountInclVatCents(5000).SetStatus(creditnote.StatusIssued).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return cli
}

// A client's statement over a period: the opening balance, then invoices,
// credit notes and payments in date order with the running balance, one
// section per currency, and the same as CSV.
func TestClientStatement(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	cli := statementClient(t, env, ws)
	c := webtest.SignedIn(t, env)
	page := "/admin/w/" + ws.ID + "/records/clients/" + cli
	if p := c.Get(page); !strings.Contains(p.Body, `href="`+page+`/statement"`) {
		t.Fatalf("the client's page has no Statement link:\n%s", p.Body)
	}
	p := c.Get(page + "/statement?from=2026-01-01&to=2026-12-31")
	if p.Status != 200 {
		t.Fatalf("%d\n%s", p.Status, p.Body)
	}
	eur := regexp.MustCompile(`(?s)data-currency="EUR">(.*?)</section>`).FindStringSubmatch(p.Body)
	kwd := regexp.MustCompile(`(?s)data-currency="KWD">(.*?)</section>`).FindStringSubmatch(p.Body)
	if eur == nil || kwd == nil {
		t.Fatalf("no EUR and KWD sections:\n%s", p.Body)
	}
	balances := cellsOf(eur[1], "Balance")
	want := []string{"€600.00", "€850.00", "€800.00", "€700.00", "€700.00"} // opening, ST-2, CN-ST-1, PAY-ST-2, closing
	if strings.Join(balances, "|") != strings.Join(want, "|") {
		t.Fatalf("EUR balances %v, want %v", balances, want)
	}
	if got := cellsOf(eur[1], "Number"); strings.Join(got, "|") != "ST-2|CN-ST-1|PAY-ST-2" {
		t.Fatalf("EUR entries %v", got)
	}
	if got := cellsOf(kwd[1], "Balance"); len(got) != 3 || strings.ReplaceAll(got[2], "\u00a0", " ") != "KWD 1.250" {
		t.Fatalf("KWD balances %v", got)
	}
	// The CSV says the same, amounts as plain decimals.
	p = c.Get(page + "/statement?from=2026-01-01&to=2026-12-31&format=csv")
	recs, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil || p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Disposition"), `attachment; filename="statement-statement-ltd-`) {
		t.Fatalf("%d %v %v", p.Status, err, p.Header)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, strings.Join(r, ","))
	}
	wantCSV := []string{
		"currency_code,date,type,number,id,debit,credit,balance",
		"EUR,2026-01-01,Opening balance,,,,,600.00",
		"EUR,2026-03-01,Invoice,ST-2,",
		"EUR,2026-03-10,Credit note,CN-ST-1,",
		"EUR,2026-03-15,Payment,PAY-ST-2,",
		"EUR,2026-12-31,Closing balance,,,250.00,150.00,700.00",
		"KWD,2026-01-01,Opening balance,,,,,0.000",
		"KWD,2026-05-01,Invoice,ST-5,",
		"KWD,2026-12-31,Closing balance,,,1.250,0.000,1.250",
	}
	if len(lines) != len(wantCSV) {
		t.Fatalf("CSV:\n%s", p.Body)
	}
	for i, w := range wantCSV {
		if !strings.HasPrefix(lines[i], w) {
			t.Fatalf("CSV line %d: %s, want %s…", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[2], ",250.00,,850.00") || !strings.HasSuffix(lines[4], ",,100.00,700.00") {
		t.Fatalf("CSV entries:\n%s", p.Body)
	}
	if p := c.Get(page + "/statement?from=2026-13-01"); p.Status != 400 {
		t.Fatalf("a bad date: %d", p.Status)
	}
	if p := c.Get("/admin/w/" + ws.ID + "/records/clients/cli_0000000000000000/statement"); p.Status != 404 {
		t.Fatalf("another client: %d", p.Status)
	}
	// A starter workspace has no clients: the statement is refused as the list is.
	starter := env.Workspace(t, "starter", false, false)
	if p := c.Get("/admin/w/" + starter.ID + "/records/clients/" + cli + "/statement"); p.Status != 403 {
		t.Fatalf("a starter workspace's statement: %d", p.Status)
	}
}
