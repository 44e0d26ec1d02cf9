// Package idempotency makes POST retries safe: the first response to an
// Idempotency-Key is kept in the database for 24 hours (so every process
// behind a load balancer sees it) and a retry with the same key and the same
// request gets that response again instead of running twice.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// Store keeps keys in the IdempotencyKey table.
type Store struct {
	db *ent.Client
	// TTL is how long a key is remembered (DESIGN.md: 24 hours).
	TTL time.Duration
	// Lease is how long an unfinished first request holds its key; after it,
	// a process that died mid-request no longer blocks retries.
	Lease time.Duration
	// SweepEvery bounds how often expired keys are deleted.
	SweepEvery time.Duration
	lastSweep  atomic.Int64
}

// New returns a store writing through db (the writer client).
func New(db *ent.Client) *Store {
	return &Store{db: db, TTL: 24 * time.Hour, Lease: time.Minute, SweepEvery: time.Minute}
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

// Claim is the right to run a request for its key; end it with Finish or Release.
type Claim struct {
	s  *Store
	id string
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

// Begin claims key for a request of the workspace. It returns a claim when
// the request should run, or the stored outcome of the first request with
// the same key and hash. The same key with another request is 409
// idempotency_key_reused; the same request while the first still runs is
// 409 idempotency_key_in_use, so a duplicate never runs concurrently.
func (s *Store) Begin(ctx context.Context, workspaceID, key, hash string) (*Claim, *Outcome, error) {
	for attempt := 0; attempt < 3; attempt++ {
		row, err := s.db.IdempotencyKey.Create().SetWorkspaceID(workspaceID).SetKey(key).SetRequestHash(hash).Save(ctx)
		if err == nil {
			s.sweep(ctx)
			return &Claim{s: s, id: row.ID}, nil, nil
		}
		if !ent.IsConstraintError(err) {
			return nil, nil, apierr.Internal(err)
		}
		prev, err := s.db.IdempotencyKey.Query().
			Where(idempotencykey.WorkspaceID(workspaceID), idempotencykey.Key(key)).Only(ctx)
		if ent.IsNotFound(err) {
			continue // released in the meantime
		} else if err != nil {
			return nil, nil, apierr.Internal(err)
		}
		now := time.Now().UTC()
		expired := prev.CreatedAt.Before(now.Add(-s.TTL))
		abandoned := prev.Status == 0 && prev.UpdatedAt.Before(now.Add(-s.Lease))
		if expired || abandoned {
			// Conditional, so two processes cannot both take the key over.
			del := s.db.IdempotencyKey.Delete().Where(idempotencykey.ID(prev.ID))
			if expired {
				del = del.Where(idempotencykey.CreatedAtLT(now.Add(-s.TTL)))
			} else {
				del = del.Where(idempotencykey.Status(0), idempotencykey.UpdatedAtLT(now.Add(-s.Lease)))
			}
			if _, err := del.Exec(ctx); err != nil {
				return nil, nil, apierr.Internal(err)
			}
			continue
		}
		if prev.RequestHash != hash {
			return nil, nil, apierr.Conflict("idempotency_key_reused",
				"this Idempotency-Key was used for another request; use a new key for a new request")
		}
		if prev.Status == 0 {
			e := apierr.Conflict("idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry shortly")
			e.RetryAfter = 1
			return nil, nil, e
		}
		return nil, &Outcome{Status: prev.Status, Body: prev.Body}, nil
	}
	return nil, nil, apierr.Conflict("idempotency_key_in_use", "this Idempotency-Key is contended; retry shortly")
}

// Finish stores the response the first request got.
func (c *Claim) Finish(ctx context.Context, status int, body []byte) error {
	return c.s.db.IdempotencyKey.UpdateOneID(c.id).SetStatus(status).SetBody(body).Exec(context.WithoutCancel(ctx))
}

// Release forgets the key, so a retry runs the request again (its first
// attempt failed on our side and changed nothing).
func (c *Claim) Release(ctx context.Context) error {
	return c.s.db.IdempotencyKey.DeleteOneID(c.id).Exec(context.WithoutCancel(ctx))
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

// Stored reports whether an outcome is kept for replays: successes and the
// client errors an operation decided (not found, business conflicts). A
// server error is not: nothing was written, so a retry should run again.
func Stored(status int) bool { return status < http.StatusInternalServerError }

// errorBody is an error as stored: without its request id, which belongs
// to each response.
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
