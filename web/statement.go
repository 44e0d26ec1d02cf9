package web

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// A client's statement: what the client was invoiced (debit), paid and
// credited (credit) over a period, in date order with the running
// balance, after the balance the period opens with; one section per
// currency. It reads through the records engine as the lists do.

// stmtEntry is one invoice, payment or credit note on a statement.
type stmtEntry struct {
	Date, Kind, Number, ID, Href, Currency string
	Debit, Credit                          int64
	Balance                                int64 // after this entry
}

// stmtSection is a statement's entries in one currency.
type stmtSection struct {
	Currency         string
	Opening, Closing int64
	Debits, Credits  int64
	Entries          []stmtEntry
}

type statementData struct {
	page
	ClientID, ClientName string
	ClientURL            string
	From, To             string
	Sections             []stmtSection
	CSVURL               string
	Problem              string
}

// kindOrder puts a day's entries in a fixed order: what was invoiced,
// then what was credited, then what was paid.
var kindOrder = map[string]int{"Invoice": 0, "Credit note": 1, "Payment": 2}

// statement shows a client's statement; ?format=csv answers it as CSV.
func (u *UI) statement(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	for _, r := range []*resource.Resource{resource.Clients, resource.Invoices, resource.CreditNotes} {
		if err := access.GatePlan(access.WorkspaceOf(ws), r); err != nil {
			return u.fail(c, http.StatusForbidden, "Not available", gateMessage(err))
		}
	}
	id := c.Params("id")
	client, err := u.found(c, resource.Clients, id)
	if client == nil {
		return err
	}
	year := time.Now().UTC().Format("2006")
	d := statementData{page: u.pageOf(c, "Statement", "rec:clients"), ClientID: id, ClientName: cmp.Or(textOf(client.get("name")), id),
		ClientURL: wsURL(ws, "records", "clients", url.PathEscape(id)),
		From:      cmp.Or(c.Query("from"), year+"-01-01"), To: cmp.Or(c.Query("to"), year+"-12-31")}
	d.Title = "Statement of " + d.ClientName
	for _, v := range []string{d.From, d.To} {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			d.Problem = "From and to are dates, YYYY-MM-DD."
		}
	}
	if d.Problem == "" && d.From > d.To {
		d.Problem = "From must not be after to."
	}
	if d.Problem != "" {
		return render(c, http.StatusBadRequest, statementView(d))
	}
	entries, err := u.statementEntries(c.UserContext(), ws, id)
	if err != nil {
		return u.internal(c, err)
	}
	d.Sections = statementSections(entries, d.From, d.To)
	q := url.Values{"from": {d.From}, "to": {d.To}, "format": {"csv"}}
	d.CSVURL = wsURL(ws, "records", "clients", url.PathEscape(id), "statement") + "?" + q.Encode()
	if c.Query("format") == "csv" {
		u.streamCSV(c, csvName("statement-"+cmp.Or(slug(d.ClientName), id), time.Now()), func(_ context.Context, w io.Writer) error {
			return writeStatementCSV(w, d)
		})
		return nil
	}
	return render(c, http.StatusOK, statementView(d))
}

// statementEntries reads every issued invoice, completed payment and
// issued or applied credit note of the client, any date.
func (u *UI) statementEntries(ctx context.Context, ws *ent.Workspace, clientID string) ([]stmtEntry, error) {
	wsr := recordsWorkspace(ws)
	ofClient := records.Page{Filters: []records.FilterValue{{Column: "client_id", Value: clientID}}}
	var out []stmtEntry
	var paid []string // invoices with payments
	add := func(r *resource.Resource, kind string, rec record, debit bool) {
		id := textOf(rec.get("id"))
		e := stmtEntry{Date: textOf(rec.get("date")), Kind: kind, Number: cmp.Or(textOf(rec.get("number")), textOf(rec.get("external_id")), id), ID: id,
			Currency: textOf(rec.get("currency_code")), Href: wsURL(ws, "records", r.Name, url.PathEscape(id))}
		n := intOf(rec.get("amount_incl_vat_cents"))
		if debit {
			e.Debit = n
		} else {
			e.Credit = n
		}
		out = append(out, e)
	}
	err := u.core.Records.Each(ctx, resource.Invoices, wsr, ofClient, func(b []byte) error {
		rec, err := decodeRecord(b)
		if err != nil {
			return err
		}
		switch textOf(rec.get("status")) {
		case "draft", "void":
			return nil
		}
		add(resource.Invoices, "Invoice", rec, true)
		if intOf(rec.get("paid_cents")) != 0 {
			paid = append(paid, textOf(rec.get("id")))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = u.core.Records.Each(ctx, resource.CreditNotes, wsr, ofClient, func(b []byte) error {
		rec, err := decodeRecord(b)
		if err != nil {
			return err
		}
		if st := textOf(rec.get("status")); st == "issued" || st == "applied" {
			add(resource.CreditNotes, "Credit note", rec, false)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Payments are an invoice's sub-resource: read those of the invoices paid.
	for _, inv := range paid {
		err := u.core.Records.Each(ctx, resource.InvoicePayments, wsr, records.Page{ParentID: inv}, func(b []byte) error {
			rec, err := decodeRecord(b)
			if err != nil {
				return err
			}
			if textOf(rec.get("status")) == "completed" {
				add(resource.Invoices, "Payment", rec, false)
				out[len(out)-1].Href = wsURL(ws, "records", "invoices", url.PathEscape(inv))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// statementSections orders the entries by date and splits them by
// currency: those before from make the opening balance, those after to
// are left out.
func statementSections(entries []stmtEntry, from, to string) []stmtSection {
	slices.SortStableFunc(entries, func(a, b stmtEntry) int {
		return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]), cmp.Compare(a.Number, b.Number))
	})
	var out []stmtSection
	at := map[string]int{}
	for _, e := range entries {
		i, ok := at[e.Currency]
		if !ok {
			i = len(out)
			at[e.Currency] = i
			out = append(out, stmtSection{Currency: e.Currency})
		}
		s := &out[i]
		switch {
		case e.Date < from:
			s.Opening += e.Debit - e.Credit
			s.Closing = s.Opening
		case e.Date <= to:
			s.Closing += e.Debit - e.Credit
			s.Debits += e.Debit
			s.Credits += e.Credit
			e.Balance = s.Closing
			s.Entries = append(s.Entries, e)
		}
	}
	slices.SortFunc(out, func(a, b stmtSection) int { return cmp.Compare(a.Currency, b.Currency) })
	return out
}

// writeStatementCSV writes the statement as the page shows it: per
// currency the opening balance, the entries and the closing balance.
func writeStatementCSV(w io.Writer, d statementData) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"currency_code", "date", "type", "number", "id", "debit", "credit", "balance"})
	for _, s := range d.Sections {
		_ = cw.Write([]string{s.Currency, d.From, "Opening balance", "", "", "", "", pricing.Plain(s.Opening, s.Currency)})
		for _, e := range s.Entries {
			debit, credit := "", ""
			if e.Kind == "Invoice" {
				debit = pricing.Plain(e.Debit, s.Currency)
			} else {
				credit = pricing.Plain(e.Credit, s.Currency)
			}
			_ = cw.Write([]string{s.Currency, e.Date, e.Kind, e.Number, e.ID, debit, credit, pricing.Plain(e.Balance, s.Currency)})
		}
		_ = cw.Write([]string{s.Currency, d.To, "Closing balance", "", "", pricing.Plain(s.Debits, s.Currency),
			pricing.Plain(s.Credits, s.Currency), pricing.Plain(s.Closing, s.Currency)})
	}
	cw.Flush()
	return cw.Error()
}

// slug is a name as a file name's part: "Acme Ltd" is "acme-ltd".
func slug(s string) string {
	var b []byte
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b = append(b, byte(r))
		case r >= 'A' && r <= 'Z':
			b = append(b, byte(r-'A'+'a'))
		case len(b) > 0 && b[len(b)-1] != '-':
			b = append(b, '-')
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return string(b)
}

// intOf is a whole JSON number's value, 0 for anything else.
func intOf(v any) int64 {
	n, _ := v.(json.Number)
	i, _ := strconv.ParseInt(string(n), 10, 64)
	return i
}
