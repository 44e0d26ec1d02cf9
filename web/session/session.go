// Package session owns the admin UI's accounts and signed-in browsers:
// bcrypt password hashes, session tokens (only their SHA-256 is stored)
// and the CSRF token bound to each session.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/adminsession"
	"github.com/ledgerbase/ledgerbase/ent/adminuser"
)

// Password bounds: bcrypt reads at most 72 bytes, and a short password is
// the weakest part of an appliance reachable over a network.
const (
	MinPassword = 10
	MaxPassword = 72
)

// TTL is how long a sign-in lasts.
const TTL = 12 * time.Hour

// ErrBadCredentials is the one answer to a wrong email or a wrong password.
var ErrBadCredentials = errors.New("the email or password is not right")

// ErrNoSession means the cookie names no live session.
var ErrNoSession = errors.New("not signed in")

// NormalizeEmail trims and lower-cases an email and checks its form.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return "", fmt.Errorf("%q is not an email address", email)
	}
	return e, nil
}

// CheckPassword says what is wrong with a new password, if anything.
func CheckPassword(pw string) error {
	if len(pw) < MinPassword {
		return fmt.Errorf("the password needs at least %d characters", MinPassword)
	}
	if len(pw) > MaxPassword {
		return fmt.Errorf("the password may have at most %d bytes", MaxPassword)
	}
	return nil
}

// CreateAdmin adds an admin account.
func CreateAdmin(ctx context.Context, db *ent.Client, email, password string) (*ent.AdminUser, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	if err := CheckPassword(password); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	u, err := db.AdminUser.Create().SetEmail(e).SetPasswordHash(string(hash)).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, fmt.Errorf("an admin with email %s already exists", e)
	}
	return u, err
}

// CreateFirstAdmin creates the first admin, and refuses once any exists
// (the first-run page must not become a way in later).
func CreateFirstAdmin(ctx context.Context, db *ent.Client, email, password string) (*ent.AdminUser, error) {
	tx, err := db.Tx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	n, err := tx.AdminUser.Query().Count(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, errors.New("an admin account already exists: sign in instead")
	}
	u, err := CreateAdmin(ctx, tx.Client(), email, password)
	if err != nil {
		return nil, err
	}
	return u, tx.Commit()
}

// AnyAdmin reports whether at least one admin account exists.
func AnyAdmin(ctx context.Context, db *ent.Client) (bool, error) {
	return db.AdminUser.Query().Exist(ctx)
}

// dummyHash is compared against when the email is unknown, so a wrong email
// takes as long as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("ledgerbase-no-such-admin"), bcrypt.DefaultCost)

// Verify checks an email and password.
func Verify(ctx context.Context, db *ent.Client, email, password string) (*ent.AdminUser, error) {
	e, _ := NormalizeEmail(email)
	u, err := db.AdminUser.Query().Where(adminuser.Email(e)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	hash := dummyHash
	if u != nil {
		hash = []byte(u.PasswordHash)
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u == nil {
		return nil, ErrBadCredentials
	}
	return u, nil
}

// Token returns a fresh random token (256 bits, URL-safe).
func Token() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // the system's randomness failed
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// Start signs an admin in and returns the cookie's token.
func Start(ctx context.Context, db *ent.Client, adminID string) (string, *ent.AdminSession, error) {
	tok := Token()
	s, err := db.AdminSession.Create().SetAdminID(adminID).SetTokenHash(hash(tok)).
		SetCsrfToken(Token()).SetExpiresAt(time.Now().Add(TTL).UTC()).Save(ctx)
	if err != nil {
		return "", nil, err
	}
	// Expired sessions are swept at each sign-in rather than by a timer.
	_, _ = db.AdminSession.Delete().Where(adminsession.ExpiresAtLT(time.Now().UTC())).Exec(ctx)
	return tok, s, nil
}

// Lookup finds the live session of a cookie token.
func Lookup(ctx context.Context, db *ent.Client, token string) (*ent.AdminSession, error) {
	if token == "" {
		return nil, ErrNoSession
	}
	s, err := db.AdminSession.Query().Where(adminsession.TokenHash(hash(token))).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	if !time.Now().Before(s.ExpiresAt) {
		return nil, ErrNoSession
	}
	return s, nil
}

// End signs a browser out.
func End(ctx context.Context, db *ent.Client, token string) error {
	_, err := db.AdminSession.Delete().Where(adminsession.TokenHash(hash(token))).Exec(ctx)
	return err
}

// SameToken compares two tokens in constant time; empty never matches.
func SameToken(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
