package clock_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// The tick makes the moves a read makes, with no read: a promotion that
// ended, one that started and a gift card past its expiry move once, each
// with its event by the system's job; a second tick and a read after it
// find nothing left to move.
func TestTheTickMovesWhatReadsMove(t *testing.T) {
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	now := time.Now().UTC()
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	promo := func(body map[string]any) string {
		return env.Do(t, "POST", "/v1/promotions", ws.Key, body).WantStatus(t, 201).JSON(t)["id"].(string)
	}
	ending := promo(map[string]any{"name": "Ending", "discount_value": 1000, "ends_at": rfc(now.Add(time.Hour))})
	starting := promo(map[string]any{"name": "Soon", "discount_value": 1000, "starts_at": rfc(now.Add(time.Hour)), "ends_at": rfc(now.Add(2 * time.Hour))})
	ctx := t.Context()
	if err := env.DB.Writer.Promotion.UpdateOneID(ending).SetEndsAt(now.Add(-time.Second)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.DB.Writer.Promotion.UpdateOneID(starting).SetStartsAt(now.Add(-time.Minute)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	card, err := env.DB.Writer.GiftCard.Create().SetWorkspaceID(ws.ID).SetCodeHash("tick-test").SetCodeLast4("TICK").
		SetInitialBalanceCents(100).SetBalanceCents(100).SetExpiresAt(now.Add(-time.Minute)).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := env.Server.Clock.Tick(ctx, time.Now()); err != nil || n != 3 {
		t.Fatalf("the tick moved %d (%v), want 3", n, err)
	}
	want := map[string]string{ending: "promotion.expired promotion_dates", starting: "promotion.active promotion_dates",
		card.ID: "gift_card.expired gift_card_expiry"}
	system := func() map[string]string {
		var page struct {
			Data []struct {
				Type  string
				Actor struct{ Type, ID string }
				Data  struct{ Object json.RawMessage }
			}
		}
		env.Get(t, "/v1/events?limit=100", ws.Key).WantStatus(t, 200).Decode(t, &page)
		got := map[string]string{}
		for _, e := range page.Data {
			var obj struct{ ID string }
			if e.Actor.Type == "system" && json.Unmarshal(e.Data.Object, &obj) == nil {
				got[obj.ID] += e.Type + " " + e.Actor.ID
			}
		}
		return got
	}
	if got := system(); len(got) != len(want) || got[ending] != want[ending] || got[starting] != want[starting] || got[card.ID] != want[card.ID] {
		t.Fatalf("system events %v, want %v", got, want)
	}
	if n, err := env.Server.Clock.Tick(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("a second tick moved %d (%v)", n, err)
	}
	env.Get(t, "/v1/promotions", ws.Key).WantStatus(t, 200)
	env.Get(t, "/v1/gift-cards", ws.Key).WantStatus(t, 200)
	if got := system(); len(got) != len(want) || got[ending] != want[ending] {
		t.Fatalf("after reading: system events %v", got)
	}
}
