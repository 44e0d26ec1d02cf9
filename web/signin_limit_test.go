package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// twoServers runs two admin UIs on one database, each with its own pools
// (as two `serve` processes would have), with adjust applied to both. The
// per-address limit is lifted so only the per-account one can refuse.
func twoServers(t *testing.T, adjust func(*web.UI)) (a, b *apitest.Env) {
	t.Helper()
	_, dbURL := apitest.DB(t)
	other, err := database.Open(context.Background(), dbURL, database.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	both := func(u *web.UI) { u.LoginsPerMinute = 1000; adjust(u) }
	return webtest.Start(t, both), webtest.StartOn(t, other, both)
}

// signIn posts the login form from a fresh browser.
func signIn(t *testing.T, env *apitest.Env, email, password string) *webtest.Page {
	t.Helper()
	c := webtest.NewClient(t, env)
	tok := c.Get("/admin/login").Token()
	return c.Post("/admin/login", url.Values{"csrf": {tok}, "email": {email}, "password": {password}})
}

func wantStatus(t *testing.T, what string, p *webtest.Page, status int) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("%s: %d, want %d\n%s", what, p.Status, status, p.Body)
	}
}

func TestFailedSignInsAreLimitedPerAccountAcrossServers(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t, func(u *web.UI) { u.AccountFailures = 3 })
	email := webtest.NewAdmin(t, a)

	// Three failures, spread over both servers, use up the account's limit.
	wantStatus(t, "1st wrong password on a", signIn(t, a, email, "wrong password 1"), 401)
	wantStatus(t, "2nd wrong password on b", signIn(t, b, email, "wrong password 2"), 401)
	wantStatus(t, "3rd wrong password on a", signIn(t, a, email, "wrong password 3"), 401)
	for name, env := range map[string]*apitest.Env{"a": a, "b": b} {
		p := signIn(t, env, " "+strings.ToUpper(email), webtest.Password) // the same account, however typed
		wantStatus(t, "the right password on "+name+" after the limit", p, 429)
		if p.Header.Get("Retry-After") == "" || !strings.Contains(p.Body, "Too many failed sign-ins for this account") {
			t.Errorf("refusal on %s: Retry-After %q\n%s", name, p.Header.Get("Retry-After"), p.Body)
		}
	}
	// Other accounts are not held back.
	wantStatus(t, "another account", signIn(t, b, webtest.NewAdmin(t, a), webtest.Password), 303)
	// A made-up email is refused alike, so the limit does not tell which
	// emails have an account.
	nobody := "nobody-" + email
	for i := range 3 {
		wantStatus(t, "an unknown email", signIn(t, []*apitest.Env{a, b}[i%2], nobody, "x"), 401)
	}
	wantStatus(t, "an unknown email after the limit", signIn(t, b, nobody, "x"), 429)
}

func TestASuccessfulSignInClearsTheAccountsFailures(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t, func(u *web.UI) { u.AccountFailures = 3 })
	email := webtest.NewAdmin(t, a)
	wantStatus(t, "wrong password on a", signIn(t, a, email, "wrong password"), 401)
	wantStatus(t, "wrong password on b", signIn(t, b, email, "wrong password"), 401)
	wantStatus(t, "the right password on b", signIn(t, b, email, webtest.Password), 303)
	// The count starts again: three more failures are answered as such.
	for i := range 3 {
		wantStatus(t, "wrong password after a sign-in", signIn(t, []*apitest.Env{a, b}[i%2], email, "wrong password"), 401)
	}
	wantStatus(t, "the fourth failure since the sign-in", signIn(t, a, email, "wrong password"), 429)
}

func TestTheAccountLimitEndsWithItsWindow(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t, func(u *web.UI) { u.AccountFailures, u.AccountWindow = 1, time.Second })
	email := webtest.NewAdmin(t, a)
	wantStatus(t, "wrong password", signIn(t, a, email, "wrong password"), 401)
	wantStatus(t, "the right password within the window", signIn(t, b, email, webtest.Password), 429)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		p := signIn(t, b, email, webtest.Password)
		if p.Status == 303 {
			return
		}
		wantStatus(t, "the right password", p, 429)
		if time.Now().After(deadline) {
			t.Fatal("still refused long after the window ended")
		}
	}
}
