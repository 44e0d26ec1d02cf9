// Package idempotency makes POST retries safe: the first response to an
// Idempotency-Key is kept in the database for 24 hours and a retry of the
// same request gets it again instead of running twice.
//
// A write keeps its response in its own transaction (Pending.Keep), so the
// key exists exactly when the write does. A duplicate that arrives while the
// first runs finds the key taken when it commits, rolls back and replays.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/idempotencykey"
)

// Header is the request header carrying the key; ReplayedHeader marks a
// response that is a stored one.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
	MaxKeyLen      = 255
)

// ErrTaken means another request under the same key committed first: the
// write rolled back, and the caller looks the key up again.
var ErrTaken = errors.New("idempotency: the key was taken by a request that committed first")

// Store keeps keys in the IdempotencyKey table.
type Store struct {
	db *ent.Client
	// TTL is how long a key is remembered (DESIGN.md: 24 hours).
	TTL time.Duration
	// SweepEvery bounds how often expired keys are deleted.
	SweepEvery time.Duration
	lastSweep  atomic.Int64
}

// New returns a store writing through db (the writer client).
func New(db *ent.Client) *Store {
	return &Store{db: db, TTL: 24 * time.Hour, SweepEvery: time.Minute}
}

// Hash identifies a request: its method, path and exact body.
func Hash(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Outcome is a stored response.
type Outcome struct {
	Status int
	Body   []byte
}

// Check validates a client's key.
func Check(key string) error {
	if len(key) > MaxKeyLen {
		return apierr.Invalid(Header, "the %s header is at most %d characters", Header, MaxKeyLen)
	}
	for _, r := range key {
		if r < 0x20 || r > 0x7e {
			return apierr.Invalid(Header, "the %s header must be printable ASCII", Header)
		}
	}
	return nil
}

// Lookup returns the kept outcome of key in the workspace, or nil when the
// request should run. The same key with another request is 409
// idempotency_key_reused.
func (s *Store) Lookup(ctx context.Context, workspaceID, key, hash string) (*Outcome, error) {
	s.sweep(ctx)
	prev, err := s.db.IdempotencyKey.Query().
		Where(idempotencykey.WorkspaceID(workspaceID), idempotencykey.Key(key),
			idempotencykey.CreatedAtGTE(time.Now().UTC().Add(-s.TTL))).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apierr.Internal(err)
	}
	if prev.RequestHash != hash {
		return nil, apierr.Conflict("idempotency_key_reused",
			"this Idempotency-Key was used for another request; use a new key for a new request")
	}
	return &Outcome{Status: prev.Status, Body: prev.Body}, nil
}

// Once runs do at most once under key: a kept outcome with this hash is
// returned (prev) without running do, and one committed while do ran
// (ErrTaken) is looked up again. Every write under a key runs through here.
func (s *Store) Once(ctx context.Context, scope, key, hash string, do func(p *Pending) error) (prev *Outcome, err error) {
	if err := Check(key); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		prev, err := s.Lookup(ctx, scope, key, hash)
		if err != nil || prev != nil {
			return prev, err
		}
		err = do(s.Pending(scope, key, hash))
		if errors.Is(err, ErrTaken) && attempt < 2 {
			continue
		}
		return nil, err
	}
}

// Within runs write in tx between p's Begin and Keep, so the key commits
// with the write or not at all; a nil p runs write alone.
func (p *Pending) Within(ctx context.Context, tx *ent.Tx, write func() (status int, body []byte, err error)) (status int, body []byte, err error) {
	if p != nil {
		if err := p.Begin(ctx, tx); err != nil {
			return 0, nil, err
		}
	}
	if status, body, err = write(); err != nil {
		return 0, nil, err
	}
	if p != nil {
		err = p.Keep(ctx, tx, status, body)
	}
	return status, body, err
}

// Pending is a request running under a key.
type Pending struct {
	s                    *Store
	workspace, key, hash string
	kept                 bool
}

// Pending starts a request under key; Lookup found nothing kept for it.
func (s *Store) Pending(workspaceID, key, hash string) *Pending {
	return &Pending{s: s, workspace: workspaceID, key: key, hash: hash}
}

// Begin runs first in the write's transaction: a key committed meanwhile
// is ErrTaken, an expired one is removed.
func (p *Pending) Begin(ctx context.Context, tx *ent.Tx) error {
	prev, err := tx.IdempotencyKey.Query().
		Where(idempotencykey.WorkspaceID(p.workspace), idempotencykey.Key(p.key)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if prev.CreatedAt.Before(time.Now().UTC().Add(-p.s.TTL)) {
		return tx.IdempotencyKey.DeleteOneID(prev.ID).Exec(ctx)
	}
	return ErrTaken
}

// Keep stores the response in the write's transaction; a concurrent
// request that kept the key first is ErrTaken.
func (p *Pending) Keep(ctx context.Context, tx *ent.Tx, status int, body []byte) error {
	err := tx.IdempotencyKey.Create().SetWorkspaceID(p.workspace).SetKey(p.key).
		SetRequestHash(p.hash).SetStatus(status).SetBody(body).Exec(ctx)
	if ent.IsConstraintError(err) {
		return ErrTaken
	}
	if err == nil {
		p.kept = true
	}
	return err
}

// Kept reports whether Keep stored the response with its write.
func (p *Pending) Kept() bool { return p.kept }

// KeepOutcome stores the outcome of a request that wrote nothing (an error
// its operation decided), so a retry gets the same refusal.
func (p *Pending) KeepOutcome(ctx context.Context, status int, body []byte) error {
	err := p.s.db.IdempotencyKey.Create().SetWorkspaceID(p.workspace).SetKey(p.key).
		SetRequestHash(p.hash).SetStatus(status).SetBody(body).Exec(context.WithoutCancel(ctx))
	if ent.IsConstraintError(err) {
		return nil
	}
	return err
}

// sweep deletes expired keys, at most once per SweepEvery in this process.
func (s *Store) sweep(ctx context.Context) {
	now := time.Now()
	last := s.lastSweep.Load()
	if now.UnixNano()-last < int64(s.SweepEvery) || !s.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	_, _ = s.db.IdempotencyKey.Delete().Where(idempotencykey.CreatedAtLT(now.UTC().Add(-s.TTL))).Exec(ctx)
}

// Stored reports whether an outcome is kept for replays: not a server
// error, which wrote nothing, so a retry should run again.
func Stored(status int) bool { return status < http.StatusInternalServerError }

// errorBody is an error as stored, without its request id.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param,omitempty"`
	} `json:"error"`
}

// EncodeError is the stored form of an operation's error.
func EncodeError(e *apierr.Error) []byte {
	var b errorBody
	b.Error.Code, b.Error.Message, b.Error.Param = e.Code, e.Message, e.Param
	out, _ := json.Marshal(b)
	return out
}

// Replay turns a stored error outcome back into the error, so it is answered
// with this request's id like any other error.
func (o *Outcome) Replay() *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(o.Body, &b)
	e := apierr.New(o.Status, b.Error.Code, "%s", b.Error.Message)
	e.Param = b.Error.Param
	return e
}
