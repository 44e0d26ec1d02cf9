package session

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// AccountLimit bounds sign-in attempts per account in the database (by the
// email's hash), so every process enforces one limit. An attempt is counted
// before the password is checked, so concurrent ones cannot slip past it.
type AccountLimit struct {
	db           *sql.DB
	take, remove string
	sweep        string
}

// NewAccountLimit keeps the counts in db.
func NewAccountLimit(db *database.DB) *AccountLimit {
	// One atomic statement starts a window or counts in the current one; SET
	// reads the row's old values, so both CASEs judge the same window.
	take := `INSERT INTO sign_in_failures (id, failures, since) VALUES (?, 1, ?)
		ON CONFLICT (id) DO UPDATE SET
		failures = CASE WHEN sign_in_failures.since <= ? THEN 1 ELSE sign_in_failures.failures + 1 END,
		since = CASE WHEN sign_in_failures.since <= ? THEN excluded.since ELSE sign_in_failures.since END
		RETURNING failures, since`
	return &AccountLimit{db: db.WritePool, take: db.Rebind(take),
		remove: db.Rebind("DELETE FROM sign_in_failures WHERE id = ?"),
		sweep:  db.Rebind("DELETE FROM sign_in_failures WHERE since <= ?")}
}

// Take counts an attempt to sign in as email, allowing max per window: 0
// lets it go ahead, else the seconds until the account's window ends.
func (l *AccountLimit) Take(ctx context.Context, email string, max int, window time.Duration, now time.Time) (int, error) {
	at := float64(now.UnixNano()) / 1e9
	ended := at - window.Seconds()
	var n int
	var since float64
	if err := l.db.QueryRowContext(ctx, l.take, hash(email), at, ended, ended).Scan(&n, &since); err != nil {
		return 0, err
	}
	if n == 1 {
		// A new window: sweep ended ones now and then, so made-up emails
		// do not pile up (the index on since keeps it cheap).
		_, _ = l.db.ExecContext(ctx, l.sweep, ended)
	}
	if n <= max {
		return 0, nil
	}
	return int(math.Max(1, math.Ceil(since+window.Seconds()-at))), nil
}

// Reset clears email's count (after a successful sign-in).
func (l *AccountLimit) Reset(ctx context.Context, email string) error {
	_, err := l.db.ExecContext(ctx, l.remove, hash(email))
	return err
}
