package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// Group commit runs many writes in one transaction: an endpoint saved in
// that transaction, or disabled, counts for the writes after it.
func TestAnEndpointSavedInASharedTransactionGetsTheEventsAfterIt(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := context.Background()
	ws, err := access.NewWorkspace(ctx, db.Writer, "Memo", "business", false, false)
	if err != nil {
		t.Fatal(err)
	}
	seq := int64(0)
	event := func(tx *ent.Tx) []*ent.Event {
		seq++
		now := time.Now().UTC()
		e, err := tx.Event.Create().SetID(ids.At("evt", now)).SetWorkspaceID(ws.ID).SetSeq(seq).SetType("client.created").
			SetObjectType("clients").SetObjectID("cli_x").SetData("{}").SetActorType("system").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return []*ent.Event{e}
	}
	url := "https://example.com/hook"
	counts := []int{}
	err = db.InTx(ctx, func(tx *ent.Tx) error {
		enqueue := func() {
			eps, err := webhooks.Endpoints(ctx, tx, ws.ID)
			if err != nil {
				t.Fatal(err)
			}
			n, err := webhooks.Enqueue(ctx, tx, ws.ID, eps, event(tx))
			if err != nil {
				t.Fatal(err)
			}
			counts = append(counts, n)
		}
		enqueue() // no endpoint yet
		ep, err := webhooks.CreateEndpoint(ctx, tx.Client(), ws.ID, webhooks.EndpointChange{URL: &url, Events: []string{"*"}})
		if err != nil {
			return err
		}
		enqueue()
		off := true
		if _, err := webhooks.UpdateEndpoint(ctx, ep, tx.Client(), webhooks.EndpointChange{Disabled: &off}); err != nil {
			return err
		}
		enqueue()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 0}; len(counts) != 3 || counts[0] != want[0] || counts[1] != want[1] || counts[2] != want[2] {
		t.Errorf("deliveries stored per event: %v, want %v", counts, want)
	}
}
