package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// meExpiry is the expires_at /v1/me shows for a key.
func meExpiry(t *testing.T, r *running, secret string) string {
	t.Helper()
	var me struct {
		Data []struct {
			Key struct {
				ExpiresAt string `json:"expires_at"`
			} `json:"key"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.env.Get(t, "/v1/me", secret).WantStatus(t, 200).Body, &me); err != nil || len(me.Data) != 1 {
		t.Fatalf("/v1/me: %v %+v", err, me)
	}
	return me.Data[0].Key.ExpiresAt
}

// stopsAt checks, on the server's own authenticator, that the key works
// until just before at and not from at on.
func stopsAt(t *testing.T, r *running, secret string, at time.Time) {
	t.Helper()
	auth := r.a.api.Auth
	if _, err := auth.AuthenticateAt(context.Background(), "Bearer "+secret, at.Add(-time.Nanosecond)); err != nil {
		t.Errorf("a nanosecond before the shown expiry %s: %v", at.Format(time.RFC3339Nano), err)
	}
	_, err := auth.AuthenticateAt(context.Background(), "Bearer "+secret, at)
	if e, ok := apierr.As(err); !ok || e.Code != "expired_api_key" {
		t.Errorf("at the shown expiry %s the key still works (%v): it expires later than shown", at.Format(time.RFC3339Nano), err)
	}
}

func TestTheShownExpiryIsTheInstantTheKeyStopsWorking(t *testing.T) {
	db, dbURL := apitest.DB(t)
	r := start(t, testConfig(), quiet, db)
	ws := r.env.Workspace(t, "starter", false, false)
	out := runCLIProcess(t, "key", "create", "--workspace", ws.ID, "--name", "short", "--expires-in", "2s", "--database-url", dbURL)
	secret := regexp.MustCompile(`(?m)^lb_\S+$`).FindString(out)
	m := regexp.MustCompile(`created key (\S+); it expires at (\S+)`).FindStringSubmatch(out)
	if secret == "" || m == nil {
		t.Fatalf("key create printed no secret, or no id and expiry:\n%s", out)
	}
	shown := m[2]
	at, err := time.Parse(time.RFC3339Nano, shown)
	if err != nil {
		t.Fatalf("the command line's expiry %q: %v", shown, err)
	}
	if got := meExpiry(t, r, secret); got != shown {
		t.Errorf("/v1/me shows expires_at %s, the command line %s", got, shown)
	}
	page := webtest.SignedIn(t, r.env).Get("/admin/w/" + ws.ID + "/keys")
	if want := `<time datetime="` + shown + `">` + at.Format("2006-01-02 15:04:05 UTC") + `</time>`; !strings.Contains(page.Body, want) {
		t.Errorf("the keys page does not show %s", want)
	}
	stopsAt(t, r, secret, at)

	// By the wall clock, through the server: every answer sent before the
	// instant is 200, every answer received from it on is 401.
	for deadline := at.Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sent := time.Now()
		res := r.env.Get(t, "/v1/me", secret)
		got := time.Now()
		switch {
		case res.Status == 200 && !sent.Before(at):
			t.Fatalf("a request sent at %s, after the shown expiry %s, was answered 200", sent.Format(time.RFC3339Nano), shown)
		case res.Status == 401:
			if got.Before(at) {
				t.Fatalf("answered 401 at %s, before the shown expiry %s", got.Format(time.RFC3339Nano), shown)
			}
			res.WantError(t, 401, "expired_api_key")
			return
		case res.Status != 200:
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		if got.After(deadline) {
			t.Fatalf("the key still works a second after its shown expiry %s", shown)
		}
	}
}

// A key stored with a fraction of a second (as keys were before expiries
// were stored to the second) also stops at the instant shown.
func TestAnExpiryStoredWithAFractionStopsAtTheShownSecond(t *testing.T) {
	db, _ := apitest.DB(t)
	r := start(t, testConfig(), quiet, db)
	ws := r.env.Workspace(t, "starter", false, false)
	secret := ws.NewKey(t, access.KeySpec{Name: "old", ExpiresIn: time.Hour})
	stored := time.Now().Add(time.Hour).Truncate(time.Second).Add(987654 * time.Microsecond).UTC()
	if err := db.Writer.APIKey.UpdateOneID(keyID(t, r, secret)).SetExpiresAt(stored).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.a.api.Auth.Invalidate()
	shown := meExpiry(t, r, secret)
	at, err := time.Parse(time.RFC3339Nano, shown)
	if err != nil {
		t.Fatal(err)
	}
	stopsAt(t, r, secret, at)
}
