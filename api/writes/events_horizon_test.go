package writes_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

type seqPage struct {
	Data []struct {
		ID       string
		Sequence int64
	}
	Meta struct {
		Total   int
		HasMore bool `json:"has_more"`
	}
}

// Writers on three servers (on PostgreSQL each with its own pool, as
// separate processes) while a consumer catches up with ending_before on
// one server after another: it sees every event once, in the order of
// their sequence, and the same events as a listing after the writes.
func TestEventsOfSeveralServersListInOneOrderWhileWritten(t *testing.T) {
	t.Parallel()
	envs := apitest.Servers(t, 3)
	ws := envs[0].Workspace(t, "growth", false, false)
	envs[0].Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "first"}).WantStatus(t, 201)
	get := func(env *apitest.Env, query string) seqPage {
		var p seqPage
		env.Get(t, "/v1/events"+query, ws.Key).WantStatus(t, http.StatusOK).Decode(t, &p)
		return p
	}
	start := get(envs[0], "?limit=1").Data[0]
	const writers, each = 6, 15
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				env := envs[(w+i)%len(envs)]
				env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": fmt.Sprintf("c%d-%d", w, i)}).WantStatus(t, 201)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen := map[string]bool{start.ID: true}
	var order []string
	cursor, last := start.ID, start.Sequence
	for reads, finished := 0, false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		for {
			reads++
			p := get(envs[reads%len(envs)], "?limit=4&ending_before="+cursor)
			for i := len(p.Data) - 1; i >= 0; i-- {
				e := p.Data[i]
				if seen[e.ID] {
					t.Fatalf("event %s seen twice", e.ID)
				}
				if e.Sequence <= last {
					t.Fatalf("event %s has sequence %d after %d", e.ID, e.Sequence, last)
				}
				seen[e.ID] = true
				order = append(order, e.ID)
				cursor, last = e.ID, e.Sequence
			}
			if !p.Meta.HasMore {
				break
			}
		}
	}
	if len(order) != writers*each {
		t.Fatalf("caught up with %d events, want %d", len(order), writers*each)
	}
	all := get(envs[1], "?limit=100")
	var listed []string
	for _, e := range slices.Backward(all.Data) {
		listed = append(listed, e.ID)
	}
	if all.Meta.Total != writers*each+1 || !slices.Equal(listed, append([]string{start.ID}, order...)) {
		t.Fatalf("after the writes, %d events listed (total %d) in another order than caught up", len(listed), all.Meta.Total)
	}
}

// On PostgreSQL a write of events holds no lock another write of the
// workspace waits for, and a consumer never skips an event of a
// transaction that took its number before others and commits after them.
// The transaction held open here writes an event as a write does, and
// also holds the workspace's old "events" counter row, which writes once
// locked until their commit.
func TestAnOpenTransactionWithEventsHoldsUpNoWriteAndIsNotSkipped(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("SQLite has one writer: a transaction held open holds up every write")
	}
	// Not parallel, and short: while it holds its transaction open, readers
	// of events on the whole database wait for it (as long as the wait
	// runs) or see none after it.
	db, _ := apitest.DB(t)
	db.SettleWait = 300 * time.Millisecond
	t.Cleanup(func() { db.SettleWait = 0 })
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "before"}).WantStatus(t, 201)
	var first seqPage
	env.Get(t, "/v1/events?limit=1", ws.Key).WantStatus(t, 200).Decode(t, &first)
	start := first.Data[0].ID

	ctx := context.Background()
	tx, err := db.Writer.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := database.RegisterEventWriter(ctx, tx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := numbering.Reserve(ctx, tx, ws.ID, "events", 1); err != nil {
		t.Fatal(err)
	}
	base, err := database.TxSeqBase(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	held := &ent.Event{ID: ids.At("evt", now), WorkspaceID: ws.ID, CreatedAt: now, UpdatedAt: now, Seq: base,
		Type: "client.updated", ObjectType: "clients", ObjectID: "cli_held", Data: "{}", ActorType: "system", ActorID: "test"}
	if _, err := sqlstore.InsertEvents(ctx, db, tx, []*ent.Event{held}, ""); err != nil {
		t.Fatal(err)
	}

	// Writes of the workspace go through meanwhile.
	const n = 3
	made := make(chan error, n)
	for i := range n {
		go func() {
			r := env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": fmt.Sprintf("during %d", i)})
			if r.Status != http.StatusCreated {
				made <- fmt.Errorf("create: %d %s", r.Status, r.Body)
				return
			}
			made <- nil
		}()
	}
	for range n {
		select {
		case err := <-made:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a create waited on the open transaction")
		}
	}
	// Their events are not shown yet: one numbered before them is pending.
	var p seqPage
	env.Get(t, "/v1/events?ending_before="+start, ws.Key).WantStatus(t, 200).Decode(t, &p)
	if len(p.Data) != 0 {
		t.Fatalf("with an earlier transaction open, %d later events shown", len(p.Data))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	env.Get(t, "/v1/events?limit=10&ending_before="+start, ws.Key).WantStatus(t, 200).Decode(t, &p)
	if len(p.Data) != n+1 || p.Data[len(p.Data)-1].ID != held.ID {
		t.Fatalf("after its commit: %d events, oldest %v; want %d, oldest the held one %s", len(p.Data), p.Data, n+1, held.ID)
	}
}

// A long transaction that writes no events (a seed, an index build) holds
// no event back on PostgreSQL: only registered event writers are waited for.
func TestATransactionWithoutEventsHoldsNoEventBack(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("SQLite has one writer: a transaction held open holds up every write")
	}
	db, _ := apitest.DB(t)
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	ctx := context.Background()
	tx, err := db.WritePool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil { // an id, older than the write's
		t.Fatal(err)
	}
	id := env.Do(t, "POST", "/v1/clients", ws.Key, obj{"name": "while a transaction runs"}).WantStatus(t, 201).JSON(t)["id"]
	start := time.Now()
	var p struct {
		Data []struct {
			Type string
			Data struct{ Object struct{ ID string } }
		}
	}
	env.Get(t, "/v1/events?limit=1", ws.Key).WantStatus(t, 200).Decode(t, &p)
	if len(p.Data) != 1 || p.Data[0].Type != "client.created" || p.Data[0].Data.Object.ID != id {
		t.Fatalf("the write's event is not shown while an older transaction without events runs: %+v", p.Data)
	}
	if took := time.Since(start); took > db.EventsWait()/2 {
		t.Fatalf("the page waited %v for a transaction that writes no events", took)
	}
}
