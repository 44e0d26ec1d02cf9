package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/web/session"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestSessions(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ctx := t.Context()
	a, err := session.CreateAdmin(ctx, db.Writer, " Mixed@Example.COM ", "a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	if a.Email != "mixed@example.com" || a.PasswordHash == "a long enough password" {
		t.Fatalf("stored %q with hash %q", a.Email, a.PasswordHash)
	}
	if _, err := session.Verify(ctx, db.Reader, "MIXED@example.com", "a long enough password"); err != nil {
		t.Fatalf("verify: %v", err)
	}
	for _, pw := range []string{"", "a long enough passwor", "a long enough password "} {
		if _, err := session.Verify(ctx, db.Reader, "mixed@example.com", pw); !errors.Is(err, session.ErrBadCredentials) {
			t.Errorf("password %q: %v", pw, err)
		}
	}
	tok, s, err := session.Start(ctx, db.Writer, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.TokenHash == tok || len(s.CsrfToken) < 40 {
		t.Fatal("the token is stored in clear, or the CSRF token is short")
	}
	if got, err := session.Lookup(ctx, db.Reader, tok); err != nil || got.ID != s.ID {
		t.Fatalf("lookup: %v", err)
	}
	if _, err := session.Lookup(ctx, db.Reader, tok+"x"); !errors.Is(err, session.ErrNoSession) {
		t.Errorf("another token: %v", err)
	}
	// An expired session opens nothing.
	if err := db.Writer.AdminSession.UpdateOneID(s.ID).SetExpiresAt(time.Now().Add(-time.Second)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := session.Lookup(ctx, db.Reader, tok); !errors.Is(err, session.ErrNoSession) {
		t.Errorf("expired session: %v", err)
	}
}

func TestNewAccountsAreChecked(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	for _, c := range []struct{ email, password string }{
		{"not an email", "a long enough password"},
		{"Name <name@example.com>", "a long enough password"},
		{"short@example.com", "too short"},
		{"long@example.com", string(make([]byte, 73))},
	} {
		if _, err := session.CreateAdmin(t.Context(), db.Writer, c.email, c.password); err == nil {
			t.Errorf("%q / %d-byte password accepted", c.email, len(c.password))
		}
	}
	if _, err := session.CreateAdmin(t.Context(), db.Writer, "twice@example.com", "a long enough password"); err != nil {
		t.Fatal(err)
	}
	if _, err := session.CreateAdmin(t.Context(), db.Writer, "TWICE@example.com", "a long enough password"); err == nil {
		t.Error("the same email twice")
	}
	if _, err := session.CreateFirstAdmin(t.Context(), db.Writer, "first@example.com", "a long enough password"); err == nil {
		t.Error("a first admin after others exist")
	}
}
