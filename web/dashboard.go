package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/usage"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
)

// SessionCookie names the signed-in admin's cookie (the bench's dashboard
// row sends it).
const SessionCookie = sessionCookie

type countCard struct {
	R     *resource.Resource
	Count int
	Gate  string // set when the workspace cannot reach the resource
}

type trafficRow struct {
	Key   *ent.APIKey
	State string
	usage.Counts
}

type dashboardData struct {
	page
	Counts  []countCard
	Traffic []trafficRow
	Total   usage.Counts
	Money   moneyView
}

// figures are what the dashboard reads from the workspace's records.
type figures struct {
	Counts []countCard
	Money  moneyView
}

// figuresOf reads the figures, kept while nothing of the workspace is
// committed (u.figures): a kept page asks the database one version. The
// gates follow the plan, and the money's buckets the day, so both are in
// the key.
func (u *UI) figuresOf(ctx context.Context, ws *ent.Workspace, now time.Time) (figures, error) {
	key := ws.ID + "|" + gatesKey(ws) + "|" + now.UTC().Format(time.DateOnly)
	return u.figures.Get(ctx, u.db, "dashboardCache", ws.ID, key, func() (f figures, err error) {
		if f.Counts, err = u.countsOf(ctx, ws); err != nil {
			return f, err
		}
		f.Money, err = u.moneyOf(ctx, ws, now)
		return f, err
	})
}

// countsOf counts each resource's records as GET /v1/{resource}?limit=1
// answers meta.total.
func (u *UI) countsOf(ctx context.Context, ws *ent.Workspace) ([]countCard, error) {
	var cards []countCard
	for _, r := range browsable() {
		card := countCard{R: r}
		if m := missing(ws, r); m != "" {
			card.Gate = "needs " + m
			cards = append(cards, card)
			continue
		}
		env, _, err := u.list(ctx, ws, r, records.Page{Limit: 1})
		if err != nil {
			return nil, err
		}
		card.Count = env.Meta.Total
		cards = append(cards, card)
	}
	return cards, nil
}

func (u *UI) dashboard(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	ctx := c.UserContext()
	d := dashboardData{page: u.pageOf(c, ws.Name, "dashboard")}
	if c.Query("created") != "" {
		d.Notice = "Workspace created. Next, create an API key for it."
	}
	f, err := u.figuresOf(ctx, ws, time.Now())
	if err != nil {
		return u.internal(c, err)
	}
	d.Counts, d.Money = f.Counts, f.Money
	// This process's latest counts go to the table first, so the page is current.
	if err := u.core.Usage.Flush(ctx); err != nil {
		u.log.Warn("usage flush", "err", err)
	}
	now := time.Now()
	traffic, err := usage.Since(ctx, u.db.Reader, ws.ID, now.Add(-24*time.Hour))
	if err != nil {
		return u.internal(c, err)
	}
	keys, err := u.db.Reader.APIKey.Query().Where(apikey.WorkspaceID(ws.ID)).Order(ent.Desc(apikey.FieldCreatedAt)).All(ctx)
	if err != nil {
		return u.internal(c, err)
	}
	for _, k := range keys {
		t := traffic[k.ID]
		if t.Requests == 0 && access.KeyState(k, now) != "active" {
			continue // a dead key without traffic is noise here
		}
		d.Traffic = append(d.Traffic, trafficRow{Key: k, State: access.KeyState(k, now), Counts: t})
		d.Total.Requests += t.Requests
		d.Total.Errors += t.Errors
		d.Total.RateLimited += t.RateLimited
	}
	sort.SliceStable(d.Traffic, func(i, j int) bool { return d.Traffic[i].Requests > d.Traffic[j].Requests })
	return render(c, http.StatusOK, dashboardView(d))
}

// gatesKey is what missing reads of the workspace.
func gatesKey(ws *ent.Workspace) string {
	w := access.WorkspaceOf(ws)
	return fmt.Sprint(w.Plan, w.CommerceMode, w.CommerceModule)
}
