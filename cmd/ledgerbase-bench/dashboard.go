package main

import (
	"context"
	"math/rand/v2"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/adminuser"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/session"
)

// benchAdmin is the admin the dashboard row signs in as; it never has a
// usable password (a random one, thrown away).
const benchAdmin = "bench@ledgerbase.invalid"

// dashboardRequest signs the bench admin in (a session row, as the login
// form makes) and returns the request of the workspace's dashboard page.
func dashboardRequest(ctx context.Context, db *database.DB, wsID string) (request, error) {
	a, err := db.Writer.AdminUser.Query().Where(adminuser.Email(benchAdmin)).Only(ctx)
	if ent.IsNotFound(err) {
		a, err = session.CreateAdmin(ctx, db.Writer, benchAdmin, session.Token())
	}
	if err != nil {
		return request{}, err
	}
	tok, _, err := session.Start(ctx, db.Writer, a.ID)
	if err != nil {
		return request{}, err
	}
	return request{method: "GET", path: web.Base + "/w/" + wsID + "/", cookie: web.SessionCookie + "=" + tok}, nil
}

// dashboardScenario is the admin dashboard page. Four connections, a few
// people looking at once: 64 would measure the queue, not the page.
func dashboardScenario(env *benchEnv) scenario {
	return scenario{name: "dashboard page", conns: 4, ok: status(200),
		gen:    func(*rand.Rand) request { return env.dashboard },
		target: "p99 ≤ 100 ms", check: p99Within(100)}
}
