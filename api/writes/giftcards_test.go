package writes_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/giftcard"
)

// adminWrite runs an operation as the admin UI does (AdminOnly ones are
// not routed under /v1): through the core's Write as an admin user.
func adminWrite(t *testing.T, env *apitest.Env, wsID string, r *resource.Resource, k resource.OpKind, name, id string, body any) (writes.Result, *apierr.Error) {
	t.Helper()
	w, err := env.DB.Writer.Workspace.Get(t.Context(), wsID)
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := api.FindRoute(r, k, name)
	if !ok {
		t.Fatalf("no %s %s %s operation", r.Name, k, name)
	}
	raw := []byte("{}")
	if body != nil {
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	res, e := env.Server.Write(t.Context(), api.WriteRequest{
		Principal: access.AdminPrincipal(access.WorkspaceOf(w), "adm_test", "admin@example.com"),
		Route:     rt, ID: id, Body: raw, ContentType: api.JSON,
	})
	return res.Result, e
}

func wantOK(t *testing.T, res writes.Result, e *apierr.Error, status int) obj {
	t.Helper()
	if e != nil {
		t.Fatalf("refused: %d %s %s (param %q)", e.Status, e.Code, e.Message, e.Param)
	}
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	var o obj
	if err := json.Unmarshal(res.Body, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func wantRefused(t *testing.T, e *apierr.Error, status int, code, param string) {
	t.Helper()
	if e == nil {
		t.Fatalf("accepted; want %d %s (param %q)", status, code, param)
	}
	if e.Status != status || e.Code != code || e.Param != param {
		t.Fatalf("refused %d %s param %q (%s); want %d %s param %q", e.Status, e.Code, e.Param, e.Message, status, code, param)
	}
}

func eventTypes(t *testing.T, env *apitest.Env, key string) []string {
	t.Helper()
	p := events(t, env, key, "?limit=100")
	var out []string
	for i := len(p.Data) - 1; i >= 0; i-- {
		out = append(out, p.Data[i].Type)
	}
	return out
}

var giftCode = regexp.MustCompile(`^[A-Z2-7]{4}(-[A-Z2-7]{4}){4}$`)

// A new card's code comes back once, beside the record; what is stored and
// read is its SHA-256 and last four characters only, also in the event.
func TestGiftCardIssueShowsTheCodeOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	client := env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "Gifted"}).WantStatus(t, 201).JSON(t)["id"].(string)
	expires := time.Now().Add(365 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	res, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", obj{
		"initial_balance_cents": 5000, "currency_code": "USD", "client_id": client, "expires_at": expires})
	card := wantOK(t, res, e, http.StatusCreated)
	code := res.Secret
	if !giftCode.MatchString(code) {
		t.Fatalf("code %q", code)
	}
	plain := strings.ReplaceAll(code, "-", "")
	if card["code_last4"] != plain[len(plain)-4:] || card["balance_cents"] != 5000.0 || card["initial_balance_cents"] != 5000.0 ||
		card["status"] != "active" || card["currency_code"] != "USD" || card["client_id"] != client || card["expires_at"] != expires {
		t.Fatalf("card %v (code %s)", card, code)
	}
	ledger := card["ledger"].([]any)
	if len(ledger) != 1 || ledger[0].(obj)["kind"] != "issue" || ledger[0].(obj)["amount_cents"] != 5000.0 ||
		ledger[0].(obj)["balance_after_cents"] != 5000.0 || !strings.HasPrefix(ledger[0].(obj)["id"].(string), "gcl_") {
		t.Fatalf("ledger %v", ledger)
	}
	id := card["id"].(string)
	got := env.Get(t, "/v1/gift-cards/"+id, ws.Key).WantStatus(t, 200)
	if !sameJSON(got.Body, res.Body) {
		t.Fatalf("GET differs from the answer:\n%s\n%s", got.Body, res.Body)
	}
	sum := sha256.Sum256([]byte(plain))
	stored, err := env.DB.Writer.GiftCard.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.CodeHash != hex.EncodeToString(sum[:]) || stored.CodeHash != writes.GiftCodeHash(strings.ToLower(code)) {
		t.Fatalf("stored hash %s", stored.CodeHash)
	}
	p := events(t, env, ws.Key, "?type=gift_card.created")
	if len(p.Data) != 1 || !sameJSON(p.Data[0].Data.Object, res.Body) || p.Data[0].Actor.Type != "admin" {
		t.Fatalf("events %+v", p.Data)
	}
	for _, b := range [][]byte{got.Body, res.Body, p.Data[0].Data.Object, env.Get(t, "/v1/gift-cards", ws.Key).Body} {
		if strings.Contains(string(b), plain[:8]) || strings.Contains(string(b), stored.CodeHash) {
			t.Fatalf("the code or its hash leaks: %s", b)
		}
	}
	res2, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", obj{"initial_balance_cents": 1})
	card2 := wantOK(t, res2, e, http.StatusCreated)
	if res2.Secret == code || card2["currency_code"] != "EUR" || card2["expires_at"] != nil || card2["client_id"] != nil {
		t.Fatalf("second card %v, code %s", card2, res2.Secret)
	}

	// /v1 keeps gift cards read-only.
	env.Do(t, "POST", "/v1/gift-cards", ws.Key, obj{"initial_balance_cents": 5000}).WantError(t, 405, "method_not_allowed")
	env.Do(t, "POST", "/v1/gift-cards/"+id+"/adjust", ws.Key, obj{"amount_cents": 1, "reason": "x"}).WantError(t, 404, "route_not_found")
	env.Do(t, "POST", "/v1/gift-cards/"+id+"/disable", ws.Key, nil).WantError(t, 404, "route_not_found")
}

func TestGiftCardIssueRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	other := env.Workspace(t, "business", true, true)
	theirs := env.Do(t, "POST", "/v1/clients", other.Key, obj{"name": "Theirs"}).WantStatus(t, 201).JSON(t)["id"].(string)
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		body  obj
		param string
	}{
		{obj{}, "initial_balance_cents"},
		{obj{"initial_balance_cents": 0}, "initial_balance_cents"},
		{obj{"initial_balance_cents": -5}, "initial_balance_cents"},
		{obj{"initial_balance_cents": "10"}, "initial_balance_cents"},
		{obj{"initial_balance_cents": 10, "currency_code": "eur"}, "currency_code"},
		{obj{"initial_balance_cents": 10, "client_id": theirs}, "client_id"},
		{obj{"initial_balance_cents": 10, "expires_at": past}, "expires_at"},
		{obj{"initial_balance_cents": 10, "expires_at": "tomorrow"}, "expires_at"},
		{obj{"initial_balance_cents": 10, "code": "MINE"}, "code"},
		{obj{"initial_balance_cents": 10, "balance_cents": 20}, "balance_cents"},
	} {
		_, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", c.body)
		wantRefused(t, e, 400, "invalid_request", c.param)
	}
	if n, err := env.DB.Writer.GiftCard.Query().Where(giftcard.WorkspaceID(ws.ID)).Count(t.Context()); err != nil || n != 0 {
		t.Fatalf("refused issues wrote %d cards (%v)", n, err)
	}
	if got := eventTypes(t, env, ws.Key); len(got) != 0 {
		t.Fatalf("refused issues appended %v", got)
	}
}

// The balance moves by adjustments with a reason, never below zero; at
// zero the card is depleted; a disabled or expired card does not move.
func TestGiftCardAdjustAndDisable(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	res, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", obj{"initial_balance_cents": 1000})
	id := wantOK(t, res, e, 201)["id"].(string)
	adjust := func(amount int64, reason string) (writes.Result, *apierr.Error) {
		return adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "adjust", id, obj{"amount_cents": amount, "reason": reason})
	}
	balance := func() (int64, string) {
		g, err := env.DB.Writer.GiftCard.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return g.BalanceCents, string(g.Status)
	}

	adjusted := func(amount int64, reason string) obj {
		t.Helper()
		res, e := adjust(amount, reason)
		return wantOK(t, res, e, 200)
	}
	card := adjusted(-400, " Damaged in transit ")
	ledger := card["ledger"].([]any)
	last := ledger[len(ledger)-1].(obj)
	if card["balance_cents"] != 600.0 || len(ledger) != 2 || last["kind"] != "adjust" || last["amount_cents"] != -400.0 ||
		last["balance_after_cents"] != 600.0 || last["reason"] != "Damaged in transit" {
		t.Fatalf("after -400: %v", card)
	}
	_, e = adjust(-601, "too much")
	wantRefused(t, e, 409, "amount_exceeds_balance", "amount_cents")
	_, e = adjust(0, "nothing")
	wantRefused(t, e, 400, "invalid_request", "amount_cents")
	_, e = adjust(10, "   ")
	wantRefused(t, e, 400, "invalid_request", "reason")
	_, e = adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "adjust", id, obj{"amount_cents": 10})
	wantRefused(t, e, 400, "invalid_request", "reason")
	_, e = adjust(1<<62, "a")
	_, e2 := adjust(1<<62, "b")
	if e != nil || e2 == nil || e2.Status != 400 || e2.Param != "amount_cents" {
		t.Fatalf("overflow: %v, %v", e, e2)
	}
	if _, e := adjust(-(1 << 62), "back"); e != nil {
		t.Fatal(e)
	}
	if b, st := balance(); b != 600 || st != "active" {
		t.Fatalf("after refusals: %d %s", b, st)
	}
	card = adjusted(-600, "used up")
	if card["balance_cents"] != 0.0 || card["status"] != "depleted" {
		t.Fatalf("at zero: %v", card)
	}
	card = adjusted(250, "goodwill")
	if card["balance_cents"] != 250.0 || card["status"] != "active" {
		t.Fatalf("topped up: %v", card)
	}
	res, e = adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "disable", id, nil)
	card = wantOK(t, res, e, 200)
	if card["status"] != "disabled" || card["balance_cents"] != 250.0 {
		t.Fatalf("disabled: %v", card)
	}
	_, e = adjust(10, "after disable")
	wantRefused(t, e, 409, "invalid_state_transition", "")
	_, e = adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "disable", id, nil)
	wantRefused(t, e, 409, "invalid_state_transition", "")

	// Another workspace's card is not found; an expired card does not move.
	other := env.Workspace(t, "business", true, true)
	_, e = adminWrite(t, env, other.ID, resource.GiftCards, resource.Action, "adjust", id, obj{"amount_cents": 1, "reason": "x"})
	wantRefused(t, e, 404, "not_found", "")
	_, e = adminWrite(t, env, other.ID, resource.GiftCards, resource.Action, "disable", id, nil)
	wantRefused(t, e, 404, "not_found", "")
	res, e = adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", obj{"initial_balance_cents": 100})
	old := wantOK(t, res, e, 201)["id"].(string)
	if err := env.DB.Writer.GiftCard.UpdateOneID(old).SetExpiresAt(time.Now().Add(-time.Hour)).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, e = adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "adjust", old, obj{"amount_cents": -1, "reason": "late"})
	wantRefused(t, e, 409, "invalid_state_transition", "")
	// Reads show it expired (the clock moves active cards only); a
	// disabled card past its expiry stays disabled.
	if err := env.DB.Writer.GiftCard.UpdateOneID(id).SetExpiresAt(time.Now().Add(-time.Hour)).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := env.Get(t, "/v1/gift-cards/"+old, ws.Key).WantStatus(t, 200).JSON(t); got["status"] != "expired" {
		t.Fatalf("a card past its expiry reads %v", got["status"])
	}
	if got := env.Get(t, "/v1/gift-cards/"+id, ws.Key).WantStatus(t, 200).JSON(t); got["status"] != "disabled" {
		t.Fatalf("a disabled card past its expiry reads %v", got["status"])
	}
	exp := events(t, env, ws.Key, "?type=gift_card.expired")
	if len(exp.Data) != 1 || exp.Data[0].Actor.Type != "system" || exp.Data[0].Actor.ID != "gift_card_expiry" {
		t.Fatalf("gift_card.expired events: %+v", exp.Data)
	}

	want := "gift_card.created gift_card.adjusted gift_card.adjusted gift_card.adjusted gift_card.adjusted gift_card.adjusted gift_card.disabled gift_card.created gift_card.expired"
	if got := strings.Join(eventTypes(t, env, ws.Key), " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
}

// Concurrent adjustments queue on the card's row: none takes the balance
// below zero.
func TestConcurrentGiftCardAdjustmentsNeverGoBelowZero(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	res, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Create, "", "", obj{"initial_balance_cents": 500})
	id := wantOK(t, res, e, 201)["id"].(string)
	ok, refused := racing(t, 10, "amount_exceeds_balance", func() *apierr.Error {
		_, e := adminWrite(t, env, ws.ID, resource.GiftCards, resource.Action, "adjust", id, obj{"amount_cents": -100, "reason": "spent"})
		return e
	})
	g, err := env.DB.Writer.GiftCard.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 5 || refused != 5 || g.BalanceCents != 0 || len(g.Ledger) != 6 || g.Status != giftcard.StatusDepleted {
		t.Fatalf("%d adjusted, %d refused; balance %d, %d ledger entries, %s", ok, refused, g.BalanceCents, len(g.Ledger), g.Status)
	}
}

// racing runs do n times at once and counts the successes and the
// refusals of code; any other refusal fails the test.
func racing(t *testing.T, n int, code string, do func() *apierr.Error) (ok, refused int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := do()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e == nil:
				ok++
			case e.Code == code:
				refused++
			default:
				t.Errorf("%d %s %s", e.Status, e.Code, e.Message)
			}
		}()
	}
	wg.Wait()
	return ok, refused
}
