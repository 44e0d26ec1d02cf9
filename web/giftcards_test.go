package web_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/giftcard"
	"github.com/ledgerbase/ledgerbase/ent/returnrequest"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

var shownCode = regexp.MustCompile(`id="new-secret" class="mono">([A-Z2-7]{4}(?:-[A-Z2-7]{4}){4})<`)

// fieldError matches the error shown by the input named name.
func fieldError(name, message string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)name="` + regexp.QuoteMeta(name) + `".*?class="error" role="alert">[^<]*` + regexp.QuoteMeta(message))
}

func cardCount(t *testing.T, env *apitest.Env, wsID string) int {
	t.Helper()
	n, err := env.DB.Writer.GiftCard.Query().Where(giftcard.WorkspaceID(wsID)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue, adjust and disable a gift card through the admin UI: the code is
// shown once, then only its last four characters.
func TestGiftCardForms(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	list := w + "/records/gift-cards"
	if p := c.Get(list); !strings.Contains(p.Body, `href="`+list+`/new"`) {
		t.Fatalf("gift cards list has no New\n%s", p.Body)
	}
	form := c.Get(list + "/new")
	for _, want := range []string{`name="initial_balance_cents"`, `name="currency_code"`, `name="client_id"`, `name="expires_at"`, "shown once"} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("gift card form lacks %s", want)
		}
	}

	// Invalid: the field's message, nothing issued.
	bad := c.PostWithToken(list+"/new", list, url.Values{"initial_balance_cents": {"0"}})
	if bad.Status != 400 || !fieldError("initial_balance_cents", "").MatchString(bad.Body) {
		t.Fatalf("invalid card: %d\n%s", bad.Status, bad.Body)
	}
	if n := cardCount(t, env, ws.ID); n != 0 {
		t.Fatalf("an invalid form issued %d cards", n)
	}
	// No CSRF token: refused; no session: the way in.
	if r := c.Post(list, url.Values{"initial_balance_cents": {"500"}}); r.Status != 403 || cardCount(t, env, ws.ID) != 0 {
		t.Fatalf("issue without CSRF: %d", r.Status)
	}
	anon := webtest.NewClient(t, env)
	for _, r := range []*webtest.Page{anon.Get(list + "/new"), anon.Post(list, url.Values{"initial_balance_cents": {"500"}})} {
		if r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
			t.Fatalf("without a session: %d %s", r.Status, r.Header.Get("Location"))
		}
	}

	// Valid: the code once, in that answer only.
	posted := c.PostWithToken(list+"/new", list, url.Values{"initial_balance_cents": {"50.00"}, "currency_code": {"EUR"}})
	if posted.Status != 303 || shownCode.MatchString(posted.Body) {
		t.Fatalf("issue: %d, want a 303 without the code\n%s", posted.Status, posted.Body)
	}
	issued := c.Follow(posted)
	m := shownCode.FindStringSubmatch(issued.Body)
	if issued.Status != 200 || m == nil || !strings.Contains(issued.Body, "shown this once") {
		t.Fatalf("issue: %d, want the code after the redirect\n%s", issued.Status, issued.Body)
	}
	if again := c.Get(posted.Header.Get("Location")); again.Status != 200 || strings.Contains(again.Body, m[1]) || strings.Contains(again.Body, "shown this once") {
		t.Fatalf("reloading the page after the redirect (%d) shows the code again", again.Status)
	}
	if strings.Contains(posted.Header.Get("Location"), strings.ReplaceAll(m[1], "-", "")[:8]) {
		t.Fatal("the code is in the redirect's address")
	}
	code := strings.ReplaceAll(m[1], "-", "")
	card := env.Get(t, "/v1/gift-cards?limit=1", ws.Key).JSON(t)["data"].([]any)[0].(map[string]any)
	id := card["id"].(string)
	if card["code_last4"] != code[16:] || card["balance_cents"] != 5000.0 {
		t.Fatalf("card through /v1: %v (code %s)", card, m[1])
	}
	page := c.Get(list + "/" + id)
	if page.Status != 200 || !strings.Contains(page.Body, code[16:]) || strings.Contains(page.Body, code[:8]) || strings.Contains(page.Body, m[1]) {
		t.Fatalf("card page: %d, want the last four only\n%s", page.Status, page.Body)
	}

	// Adjust asks for an amount and a reason; a missing reason is shown by
	// its field, more than the balance on the card's page.
	adjust := list + "/" + id + "/do/adjust"
	if !strings.Contains(page.Body, `href="`+adjust+`"`) || !strings.Contains(page.Body, `href="`+list+"/"+id+`/do/disable"`) {
		t.Fatalf("card page lacks Adjust or Disable\n%s", page.Body)
	}
	if p := c.Get(adjust); p.Status != 200 || !strings.Contains(p.Body, `name="amount_cents"`) || !strings.Contains(p.Body, `name="reason"`) {
		t.Fatalf("adjust page: %d\n%s", p.Status, p.Body)
	}
	r := c.PostWithToken(adjust, adjust, url.Values{"amount_cents": {"-7.00"}})
	if r.Status != 400 || !fieldError("reason", "").MatchString(r.Body) {
		t.Fatalf("adjust without reason: %d\n%s", r.Status, r.Body)
	}
	r = c.PostWithToken(adjust, adjust, url.Values{"amount_cents": {"-50.01"}, "reason": {"too much"}})
	if r.Status != 409 || !strings.Contains(html.UnescapeString(r.Body), "t most €50.00 can be taken off") {
		t.Fatalf("adjust below zero: %d\n%s", r.Status, r.Body)
	}
	r = c.PostWithToken(adjust, adjust, url.Values{"amount_cents": {"-7"}, "reason": {"Damaged card"}})
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "?done=adjust") {
		t.Fatalf("adjust: %d %s\n%s", r.Status, r.Header.Get("Location"), r.Body)
	}
	card = env.Get(t, "/v1/gift-cards/"+id, ws.Key).JSON(t)
	ledger := card["ledger"].([]any)
	if card["balance_cents"] != 4300.0 || ledger[len(ledger)-1].(map[string]any)["reason"] != "Damaged card" {
		t.Fatalf("adjusted card through /v1: %v", card)
	}

	// Another workspace's card is not found here.
	other := env.Workspace(t, "business", true, true)
	ow := "/admin/w/" + other.ID + "/records/gift-cards/" + id
	if p := c.Get(ow + "/do/adjust"); p.Status != 404 {
		t.Fatalf("another workspace's adjust page: %d", p.Status)
	}
	if p := c.PostWithToken(adjust, ow+"/do/disable", nil); p.Status != 404 {
		t.Fatalf("another workspace's disable: %d", p.Status)
	}

	// Disable asks first; afterwards the balance cannot move.
	disable := list + "/" + id + "/do/disable"
	if p := c.Get(disable); p.Status != 200 || !strings.Contains(p.Body, "cannot be undone") {
		t.Fatalf("disable confirmation: %d", p.Status)
	}
	if r := c.PostWithToken(disable, disable, nil); r.Status != 303 {
		t.Fatalf("disable: %d\n%s", r.Status, r.Body)
	}
	if s := env.Get(t, "/v1/gift-cards/"+id, ws.Key).JSON(t)["status"]; s != "disabled" {
		t.Fatalf("disabled card through /v1: %v", s)
	}
	if p := c.Get(list + "/" + id); strings.Contains(p.Body, "/do/adjust") || strings.Contains(p.Body, "/do/disable") {
		t.Fatal("a disabled card still offers Adjust or Disable")
	}
	r = c.PostWithToken(list+"/"+id, adjust, url.Values{"amount_cents": {"1.00"}, "reason": {"late"}})
	if r.Status != 409 || !strings.Contains(r.Body, `class="alert error"`) {
		t.Fatalf("adjust a disabled card: %d\n%s", r.Status, r.Body)
	}
	// /v1 still has no writes of gift cards.
	env.Do(t, "POST", "/v1/gift-cards", ws.Key, map[string]any{"initial_balance_cents": 1}).WantError(t, 405, "method_not_allowed")
}

// deliveredOrder is an online order of one line (2 × 12.00, paid), shipped
// and delivered, made through /v1.
func deliveredOrder(t *testing.T, env *apitest.Env, ws *apitest.Workspace, deliver bool) (orderID, lineID string) {
	t.Helper()
	st, err := env.DB.Writer.Store.Create().SetWorkspaceID(ws.ID).SetName("Shop").SetFreeAddress("shop.example").Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	o := env.Do(t, "POST", "/v1/sales-orders", ws.Key, map[string]any{"client_name": "Ada", "store_id": st.ID,
		"lines":    []any{map[string]any{"description": "Boots", "qty_milli": 2000, "unit_price_cents": 1200}},
		"payments": []any{map[string]any{"kind": "capture", "amount_cents": 2400}}}).WantStatus(t, 201).JSON(t)
	orderID = o["id"].(string)
	lineID = o["lines"].([]any)[0].(map[string]any)["id"].(string)
	shp := env.Do(t, "POST", "/v1/shipments", ws.Key, map[string]any{"sales_order_id": orderID}).WantStatus(t, 201).JSON(t)["id"].(string)
	if deliver {
		env.Do(t, "PATCH", "/v1/shipments/"+shp, ws.Key, map[string]any{"sales_order_id": orderID, "status": "delivered"}).WantStatus(t, 200)
	}
	return orderID, lineID
}

// Open a return from the order's page, approve, receive and refund it.
func TestReturnForms(t *testing.T) {
	t.Parallel()
	env := webtest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	c := webtest.SignedIn(t, env)
	w := "/admin/w/" + ws.ID
	list := w + "/records/returns"
	waiting, _ := deliveredOrder(t, env, ws, false)
	if p := c.Get(w + "/records/sales-orders/" + waiting); strings.Contains(p.Body, "/records/returns/new") {
		t.Fatal("an order with nothing delivered offers New return")
	}
	order, line := deliveredOrder(t, env, ws, true)
	newURL := list + "/new?" + url.Values{"sales_order_id": {order}}.Encode()
	if p := c.Get(w + "/records/sales-orders/" + order); !strings.Contains(html.UnescapeString(p.Body), `href="`+newURL+`"`) {
		t.Fatalf("the delivered order's page lacks New return\n%s", p.Body)
	}
	form := c.Get(newURL)
	for _, want := range []string{`value="` + order + `"`, `<option value="` + line + `" selected>Boots · 2 returnable</option>`, `name="lines[0].qty_milli" value="2"`} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("return form lacks %s\n%s", want, form.Body)
		}
	}
	count := func() int {
		n, err := env.DB.Writer.ReturnRequest.Query().Where(returnrequest.WorkspaceID(ws.ID)).Count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// More than was delivered: the message by the line's quantity.
	bad := c.PostWithToken(newURL, list, url.Values{"sales_order_id": {order}, "lines[0].order_line_id": {line}, "lines[0].qty_milli": {"2.001"}})
	if bad.Status != 409 || !fieldError("lines[0].qty_milli", "delivered and not yet returned").MatchString(html.UnescapeString(bad.Body)) {
		t.Fatalf("too much: %d\n%s", bad.Status, bad.Body)
	}
	if r := c.Post(list, url.Values{"sales_order_id": {order}}); r.Status != 403 || count() != 0 {
		t.Fatalf("open without CSRF: %d, %d returns", r.Status, count())
	}
	anon := webtest.NewClient(t, env)
	if r := anon.Get(newURL); r.Status != 303 || r.Header.Get("Location") != "/admin/login" {
		t.Fatalf("without a session: %d", r.Status)
	}
	ret := created(t, c.PostWithToken(newURL, list, url.Values{"sales_order_id": {order}, "reason": {"Too small"},
		"lines[0].order_line_id": {line}, "lines[0].qty_milli": {"1"}}))
	got := env.Get(t, "/v1/returns/"+ret, ws.Key).JSON(t)
	if got["status"] != "requested" || got["reason"] != "Too small" || got["sales_order_id"] != order {
		t.Fatalf("return through /v1: %v", got)
	}

	// approve and receive are buttons; refund and reject ask first.
	page := c.Get(list + "/" + ret)
	do := list + "/" + ret + "/do/"
	for _, want := range []string{`action="` + do + `approve"`, `href="` + do + `reject"`} {
		if !strings.Contains(page.Body, want) {
			t.Fatalf("requested return lacks %s\n%s", want, page.Body)
		}
	}
	if strings.Contains(page.Body, do+"refund") || strings.Contains(page.Body, do+"receive") {
		t.Fatal("a requested return offers Refund or Receive")
	}
	for _, a := range []string{"approve", "receive"} {
		if r := c.PostWithToken(list+"/"+ret, do+a, nil); r.Status != 303 {
			t.Fatalf("%s: %d\n%s", a, r.Status, r.Body)
		}
	}
	// A state the action is not allowed from: the 409 on the record page.
	if r := c.PostWithToken(list+"/"+ret, do+"approve", nil); r.Status != 409 || !strings.Contains(r.Body, `class="alert error"`) {
		t.Fatalf("approve a received return: %d\n%s", r.Status, r.Body)
	}
	if p := c.Get(do + "refund"); p.Status != 200 || !strings.Contains(p.Body, `name="amount_cents"`) {
		t.Fatalf("refund page: %d\n%s", p.Status, p.Body)
	}
	if r := c.PostWithToken(do+"refund", do+"refund", url.Values{"amount_cents": {"abc"}}); r.Status != 400 || !fieldError("amount_cents", "").MatchString(r.Body) {
		t.Fatalf("refund of abc: %d\n%s", r.Status, r.Body)
	}
	if r := c.PostWithToken(do+"refund", do+"refund", url.Values{"amount_cents": {"12.01"}}); r.Status != 409 || !strings.Contains(r.Body, "t most €12.00 can be refunded") {
		t.Fatalf("refund over the paid amount: %d\n%s", r.Status, r.Body)
	}
	other := env.Workspace(t, "business", true, true)
	if r := c.PostWithToken(do+"refund", "/admin/w/"+other.ID+"/records/returns/"+ret+"/do/refund", nil); r.Status != 404 {
		t.Fatalf("another workspace's refund: %d", r.Status)
	}
	if r := c.PostWithToken(do+"refund", do+"refund", url.Values{"amount_cents": {""}}); r.Status != 303 {
		t.Fatalf("refund: %d\n%s", r.Status, r.Body)
	}
	got = env.Get(t, "/v1/returns/"+ret, ws.Key).JSON(t)
	if got["status"] != "refunded" || got["refund_cents"] != 1200.0 {
		t.Fatalf("refunded return through /v1: %v", got)
	}
	if p := c.Get(list + "/" + ret + "?done=refund"); !strings.Contains(p.Body, "The return is now refunded.") || strings.Contains(p.Body, "/do/") {
		t.Fatalf("refunded return page\n%s", p.Body)
	}
	// /v1 still has no writes of returns.
	env.Do(t, "POST", "/v1/returns", ws.Key, map[string]any{"sales_order_id": order}).WantError(t, 405, "method_not_allowed")
	env.Do(t, "POST", "/v1/returns/"+ret+"/approve", ws.Key, nil).WantError(t, 404, "route_not_found")
}
