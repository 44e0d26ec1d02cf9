package webtest_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestReloadAfterAFormWritesNothing submits the forms that make a key, an
// endpoint, a rotation and a workspace in a browser, then reloads the page
// it lands on: exactly one record or rotation is made, the secret is shown
// once after the form and not after the reload, and it is in no address.
func TestReloadAfterAFormWritesNothing(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	w := "/admin/w/" + ws.ID
	db := env.DB.Writer

	email := webtest.NewAdmin(t, env) // before the first page: with no admin it would offer the setup
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")

	// reload loads the page again as the browser's reload does, and
	// returns its text.
	reload := func() string {
		b.t.Helper()
		b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__leaving = true`))
		b.do("reload", chromedp.Reload())
		b.until("the page reloaded", `window.__leaving !== true && document.readyState === "complete"`)
		return evaluate[string](b, `document.body.innerText`)
	}
	// shownOnce checks the secret the page shows after a form, then
	// reloads: nothing more is made and the secret is not shown again.
	shownOnce := func(title string, count func() int) string {
		t.Helper()
		b.waitText(title)
		secret := b.text("#new-secret")
		if secret == "" || strings.Contains(b.location(), secret) {
			t.Fatalf("secret %q shown at %s", secret, b.location())
		}
		n := count()
		if body := reload(); strings.Contains(body, secret) || strings.Contains(body, title) {
			t.Errorf("after a reload the page shows the secret again:\n%s", body)
		}
		if got := count(); got != n {
			t.Errorf("the reload made %d more", got-n)
		}
		return secret
	}

	keys := func() int { return db.APIKey.Query().Where(apikey.WorkspaceID(ws.ID)).CountX(t.Context()) }
	before := keys()
	b.open(w + "/keys")
	b.fill("#key-name", "Reloaded")
	b.submit(`form[action$="/keys"] button[type=submit]`)
	shownOnce("Copy the secret", keys)
	if n := keys(); n != before+1 {
		t.Errorf("create key, then reload: %d keys made, want 1", n-before)
	}

	endpoints := func() int {
		return db.WebhookEndpoint.Query().Where(webhookendpoint.WorkspaceID(ws.ID)).CountX(t.Context())
	}
	b.open(w + "/webhooks")
	b.fill("#wh-url", "https://9.9.9.30/in")
	b.submit(`form[action$="/webhooks"] button[type=submit]`)
	secret := shownOnce("Copy the signing secret now", endpoints)
	if n := endpoints(); n != 1 {
		t.Fatalf("add endpoint, then reload: %d endpoints, want 1", n)
	}
	e := db.WebhookEndpoint.Query().Where(webhookendpoint.WorkspaceID(ws.ID)).OnlyX(t.Context())
	if e.Secret != secret {
		t.Fatal("the secret shown is not the endpoint's")
	}

	// A rotation: the endpoint's secret is the one shown, and its previous
	// one the secret before, so there was exactly one.
	b.submit(`form[action$="/rotate"] button[type=submit]`)
	rotated := shownOnce("Copy the signing secret now", func() int { return 0 })
	e = db.WebhookEndpoint.GetX(t.Context(), e.ID)
	if rotated == secret || e.Secret != rotated || e.PreviousSecret != secret {
		t.Errorf("rotate, then reload: the endpoint's secret is not the one shown, or it rotated again")
	}

	workspaces := func() int { return db.Workspace.Query().CountX(t.Context()) }
	before = workspaces()
	b.open("/admin/")
	b.fill("#name", "Reload Ltd")
	b.submit(`form[action="/admin/workspaces"] button[type=submit]`)
	b.waitText("Workspace created.")
	reload()
	if n := workspaces(); n != before+1 {
		t.Errorf("create workspace, then reload: %d made, want 1", n-before)
	}
}
