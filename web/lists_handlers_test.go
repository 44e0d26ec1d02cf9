package web_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"html"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// cellsOf are the texts of the list's column col (its data-label), in order.
func cellsOf(body, col string) []string {
	re := regexp.MustCompile(`<td data-label="` + regexp.QuoteMeta(col) + `"[^>]*>\s*(?:<[^>]*>)*([^<]*)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// v1List reads a /v1 list's data.
func v1List(t *testing.T, env *apitest.Env, key, path string) ([]map[string]any, int) {
	t.Helper()
	var env2 struct {
		Data []map[string]any
		Meta struct{ Total int }
	}
	env.Get(t, path, key).WantStatus(t, 200).Decode(t, &env2)
	return env2.Data, env2.Meta.Total
}

// A list's headers sort it as /v1's sort does, ascending then
// descending; page numbers say where one is; an unknown column is
// refused as /v1 refuses it; the returns list says what is true of it.
func TestListSortsPagesAndSaysWhatIsTrue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	w := "/admin/w/" + f.ws.ID + "/records/invoices"
	p := c.Get(w)
	if p.Status != 200 || !strings.Contains(p.Body, `href="`+html.EscapeString(w+"?sort=number")+`"`) {
		t.Fatalf("the number header does not sort by number: %d\n%.2000s", p.Status, p.Body)
	}
	p = c.Get(w + "?sort=number&limit=100")
	got := cellsOf(p.Body, "Number")
	data, _ := v1List(t, f.env, f.ws.Key, "/v1/invoices?sort=number&limit=100")
	if len(got) != len(data) || len(got) < 5 {
		t.Fatalf("%d numbers shown, /v1 lists %d", len(got), len(data))
	}
	for i, d := range data {
		if got[i] != d["number"] {
			t.Fatalf("row %d shows %s, /v1 sorted has %v", i, got[i], d["number"])
		}
		if i > 0 && got[i-1] >= got[i] {
			t.Fatalf("not ascending: %s then %s", got[i-1], got[i])
		}
	}
	if !strings.Contains(p.Body, `aria-sort="ascending"`) || !strings.Contains(p.Body, html.EscapeString("sort=-number")) {
		t.Fatal("the sorted column is not marked ascending, or does not offer descending")
	}
	desc := cellsOf(c.Get(w+"?sort=-number&limit=100").Body, "Number")
	if len(desc) != len(got) || desc[0] != got[len(got)-1] {
		t.Fatalf("descending starts with %v, want %s", desc[:1], got[len(got)-1])
	}
	// "Sort by" shows the order shown, by a column the list has or not.
	for _, sort := range []string{"-number", "updated_at"} {
		if p := c.Get(w + "?sort=" + sort); !strings.Contains(p.Body, `<option value="`+sort+`" selected>`) {
			t.Errorf("sorted by %s, Sort by shows another choice", sort)
		}
	}
	if p := c.Get(w + "?sort=nope"); p.Status != 400 || !strings.Contains(p.Body, "Sort must be one of the columns") {
		t.Fatalf("an unknown sort: %d", p.Status)
	}
	f.env.Get(t, "/v1/invoices?sort=nope", f.ws.Key).WantError(t, 400, "invalid_request")

	// Page numbers: 2 a page.
	_, total := v1List(t, f.env, f.ws.Key, "/v1/invoices?limit=1")
	pages := (total + 1) / 2
	p = c.Get(w + "?limit=2&offset=4")
	if !strings.Contains(p.Body, "Page 3 of "+strconv.Itoa(pages)) {
		t.Fatalf("no Page 3 of %d:\n%s", pages, p.Body)
	}
	for _, want := range []string{">First<", ">Previous<", ">Next<", ">Last<", `aria-current="page" aria-label="Page 3"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the pager lacks %s", want)
		}
	}
	last := regexp.MustCompile(`href="([^"]+)">Last<`).FindStringSubmatch(p.Body)
	if last == nil || !strings.Contains(html.UnescapeString(last[1]), "offset="+strconv.Itoa((pages-1)*2)) {
		t.Fatalf("Last leads to %v", last)
	}

	// Returns: /v1 only reads them, the admin creates them.
	p = c.Get("/admin/w/" + f.ws.ID + "/records/returns")
	if !strings.Contains(p.Body, "Read-only over /v1; created and changed here.") || strings.Contains(p.Body, "outcome. Read-only.") {
		t.Fatalf("the returns list says:\n%s", p.Body)
	}
	p = c.Get("/admin/w/" + f.ws.ID + "/records/payments")
	if !strings.Contains(p.Body, "posted receipt. Read-only.") || strings.Contains(p.Body, ">New ") {
		t.Fatal("the online payments list does not say it is read-only, or offers New")
	}
}

// Search finds records of every resource by number, name or email,
// grouped by resource, each linked to its page.
func TestSearchAcrossResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	cli := f.env.Do(t, "POST", "/v1/clients", f.ws.Key, map[string]any{"name": "Quixotic Holdings", "email": "books@quixotic.test"}).WantStatus(t, 201).JSON(t)
	inv := f.env.Do(t, "POST", "/v1/invoices", f.ws.Key, map[string]any{"client_id": cli["id"], "currency_code": "EUR",
		"lines": []map[string]any{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 5000}}}).WantStatus(t, 201).JSON(t)
	base := "/admin/w/" + f.ws.ID
	for _, q := range []string{"quixotic", "books@quixotic.test", inv["number"].(string)} {
		p := c.Get(base + "/search?q=" + url.QueryEscape(q))
		if p.Status != 200 {
			t.Fatalf("search %s: %d", q, p.Status)
		}
		if q != inv["number"] && !strings.Contains(p.Body, `href="`+base+`/records/clients/`+cli["id"].(string)+`"`) {
			t.Errorf("search %s does not link the client:\n%s", q, p.Body)
		}
		if q != "books@quixotic.test" && !strings.Contains(p.Body, `href="`+base+`/records/invoices/`+inv["id"].(string)+`"`) {
			t.Errorf("search %s does not link the invoice", q)
		}
	}
	p := c.Get(base + "/search?q=quixotic")
	if i, j := strings.Index(p.Body, "<h2>Clients"), strings.Index(p.Body, "<h2>Invoices"); i < 0 || j < 0 {
		t.Fatalf("the results are not grouped by resource:\n%s", p.Body)
	}
	if p := c.Get(base + "/search?q=zzqqxx"); !strings.Contains(p.Body, "Nothing matches.") {
		t.Fatal("an unmatched search does not say so")
	}
	if p := c.Get(base + "/search?q=" + strings.Repeat("x", 201)); p.Status != 400 {
		t.Fatalf("a long search: %d", p.Status)
	}
	if p := c.Get(base + "/records/invoices"); !strings.Contains(p.Body, `action="`+base+`/search"`) {
		t.Fatal("the list has no box to search every record")
	}
}

// A large list's CSV streams: the first rows reach the client while the
// server still holds back its next batch (the hook waits for them), and
// the file re-reads with /v1's values, as filtered and sorted.
func TestExportStreamsAndReReads(t *testing.T) {
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 20000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	c := webtest.SignedIn(t, env)
	firstRead := make(chan struct{})
	late := make(chan bool, 1)
	web.SetExportFlushed(func(rows int) {
		if rows == 500 { // the first batch is out: the client must have it before the next is read
			select {
			case <-firstRead:
				late <- false
			case <-time.After(20 * time.Second):
				late <- true
			}
		}
	})
	t.Cleanup(func() { web.SetExportFlushed(nil) })
	base := "/admin/w/" + ws.ID + "/records/invoices"
	res, err := c.HTTP.Get(env.URL + base + "?format=csv")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		res.Header.Get("Content-Disposition") != `attachment; filename="invoices-`+time.Now().UTC().Format(time.DateOnly)+`.csv"` {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	br := bufio.NewReader(res.Body)
	head, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for range 400 { // rows of the first batch
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	close(firstRead)
	if <-late {
		t.Fatal("the first rows came only after the export went on: it does not stream")
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	cols, err := csv.NewReader(strings.NewReader(head)).Read()
	if err != nil {
		t.Fatal(err)
	}
	// Read the whole export again, at once, and compare it with /v1.
	web.SetExportFlushed(nil)
	p := c.Get(base + "?format=csv")
	recs, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	_, total := v1List(t, env, ws.Key, "/v1/invoices?limit=1")
	if len(recs) != total+1 || total < 20000 {
		t.Fatalf("%d rows for %d invoices", len(recs)-1, total)
	}
	at := map[string]int{}
	for i, h := range cols {
		at[h] = i
	}
	for _, h := range []string{"id", "number", "currency_code", "amount_incl_vat", "client_id", "client_name", "status", "quote_number"} {
		if _, ok := at[h]; !ok {
			t.Fatalf("no column %s in %v", h, cols)
		}
	}
	if _, ok := at["amount_incl_vat_cents"]; ok {
		t.Fatal("amounts are in cents")
	}
	data, _ := v1List(t, env, ws.Key, "/v1/invoices?limit=100&offset=19900")
	for i, d := range data {
		row := recs[1+19900+i]
		want := plainDecimal(t, d["amount_incl_vat_cents"], d["currency_code"].(string))
		if row[at["id"]] != d["id"] || row[at["number"]] != d["number"] || row[at["currency_code"]] != d["currency_code"] ||
			row[at["amount_incl_vat"]] != want || row[at["status"]] != d["status"] {
			t.Fatalf("row %d: %v, /v1 has %v", 19900+i, row, d)
		}
	}

	// Filtered and sorted as the list is.
	p = c.Get(base + "?format=csv&status=paid&sort=-amount_incl_vat_cents")
	recs, err = csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	data, total = v1List(t, env, ws.Key, "/v1/invoices?status=paid&sort=-amount_incl_vat_cents&limit=100")
	if len(recs) != total+1 || total == 0 {
		t.Fatalf("%d rows for %d paid invoices", len(recs)-1, total)
	}
	for i, d := range data {
		if recs[1+i][at["id"]] != d["id"] {
			t.Fatalf("row %d is %s, /v1 sorted has %v", i, recs[1+i][at["id"]], d["id"])
		}
	}
	if p := c.Get(base + "?format=csv&sort=nope"); p.Status != 400 {
		t.Fatalf("an export sorted by no column: %d", p.Status)
	}
}

// plainDecimal is a /v1 amount in minor units as the CSV writes it.
func plainDecimal(t *testing.T, v any, cur string) string {
	t.Helper()
	var n int64
	switch x := v.(type) {
	case float64:
		n = int64(x)
	case json.Number:
		n, _ = x.Int64()
	}
	digits := map[string]int{"JPY": 0, "KWD": 3, "BHD": 3}[cur]
	if _, ok := map[string]int{"JPY": 0, "KWD": 3, "BHD": 3}[cur]; !ok {
		digits = 2
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= digits {
		s = "0" + s
	}
	if digits > 0 {
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Ticked rows export as CSV; "Send selected" sends each through the same
// write as /v1 and says what was sent and what was refused, and why.
func TestBulkExportAndSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	mk := func() map[string]any {
		return f.env.Do(t, "POST", "/v1/invoices", f.ws.Key, map[string]any{"client_name": "Bulk Ltd", "currency_code": "KWD",
			"lines": []map[string]any{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 1250}}}).WantStatus(t, 201).JSON(t)
	}
	a, b, done := mk(), mk(), mk()
	f.env.Do(t, "POST", "/v1/invoices/"+done["id"].(string)+"/send", f.ws.Key, map[string]any{}).WantStatus(t, 200)
	list := "/admin/w/" + f.ws.ID + "/records/invoices"
	page := c.Get(list)
	if !strings.Contains(page.Body, `name="id" value="`+a["id"].(string)+`"`) || !strings.Contains(page.Body, ">Send selected<") {
		t.Fatal("the list has no checkbox per row or no Send selected")
	}
	p := c.PostWithToken(list, list+"/bulk", url.Values{"do": {"export"}, "id": {a["id"].(string), b["id"].(string)}})
	recs, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil || p.Status != 200 || len(recs) != 3 {
		t.Fatalf("%d %v %d rows\n%s", p.Status, err, len(recs), p.Body)
	}
	if recs[1][0] != a["id"] || !strings.Contains(strings.Join(recs[1], ","), ",KWD,") || !strings.Contains(strings.Join(recs[1], ","), ",1.250,") {
		t.Fatalf("the first row: %v", recs[1])
	}
	p = c.PostWithToken(list, list+"/bulk", url.Values{"do": {"send"}, "id": {a["id"].(string), done["id"].(string), b["id"].(string)}, "_idem": {"bulk-1"}})
	if p.Status != 200 || !strings.Contains(p.Body, "2 sent, 1 refused.") || !strings.Contains(p.Body, done["number"].(string)) {
		t.Fatalf("%d\n%s", p.Status, p.Body)
	}
	refused := regexp.MustCompile(`(?s)id="bulk-refused">(.*?)</ul>`).FindStringSubmatch(p.Body)
	if refused == nil || !strings.Contains(refused[1], done["number"].(string)) || !strings.Contains(strings.ToLower(refused[1]), "draft") {
		t.Fatalf("the refusal does not name the invoice and why: %v", refused)
	}
	for _, inv := range []map[string]any{a, b} {
		if st := f.env.Get(t, "/v1/invoices/"+inv["id"].(string), f.ws.Key).WantStatus(t, 200).JSON(t)["status"]; st != "sent" {
			t.Fatalf("%s is %v after Send selected", inv["number"], st)
		}
	}
	// The same form again sends nothing twice.
	p = c.PostWithToken(list, list+"/bulk", url.Values{"do": {"send"}, "id": {a["id"].(string)}, "_idem": {"bulk-1"}})
	if p.Status >= 500 {
		t.Fatalf("the same form again: %d", p.Status)
	}
	if p := c.PostWithToken(list, list+"/bulk", url.Values{"do": {"send"}}); p.Status != 400 {
		t.Fatalf("nothing selected: %d", p.Status)
	}
	if p := c.PostWithToken(list, "/admin/w/"+f.ws.ID+"/records/clients/bulk", url.Values{"do": {"send"}, "id": {"cli_x"}}); p.Status != 400 {
		t.Fatalf("clients have no send: %d", p.Status)
	}
	if r := c.Post(list+"/bulk", url.Values{"do": {"export"}, "id": {a["id"].(string)}}); r.Status != 403 && r.Status != 400 {
		t.Fatalf("a bulk form without the CSRF token: %d", r.Status)
	}
}
