package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// JSON is the media type of every write's body.
const JSON = "application/json"

// WriteRequest is one write, from any caller: /v1, the admin UI, the
// command line.
type WriteRequest struct {
	Principal *access.Principal
	// Route is the declared operation; a configuration write (a workspace,
	// key, role or webhook endpoint: configure.go) leaves it zero and names
	// its Config.
	Route  Route
	Config ConfigOp
	// ID is the record's id (the parent's for a sub-resource, whose own id
	// is ChildID).
	ID, ChildID string
	// Body is the body as sent, of media type ContentType (anything but
	// JSON is 415). A DELETE's or an action's may be empty, standing for {}.
	Body        []byte
	ContentType string
	// Key is the idempotency key ("" for none): the same key and request
	// answer the first outcome again without writing, another request
	// under the key is 409 idempotency_key_reused.
	Key string
	// Target names the request the key's answer belongs to, with Body:
	// /v1's request path, an admin form's path and its fields as posted;
	// "" for Route's method, path and ids (or Config and ids).
	Target string
	// RequestID is the request's id; "" makes one.
	RequestID string
}

// Result is a write's answer: a status and the JSON body, with a secret
// shown once (writes.Result); Replayed when it is the kept answer of an
// earlier request under the same key.
type Result struct {
	writes.Result
	Replayed bool
}

// Write is the one way in for every write: gate, body, idempotency key,
// then the operation (api/writes) or configuration write (configure.go).
// A refusal comes back as the error /v1 answers. Only a request that
// reached its operation uses the key, so a corrected retry may reuse it.
func (c *Core) Write(ctx context.Context, w WriteRequest) (Result, *apierr.Error) {
	if w.RequestID == "" {
		w.RequestID = ids.QuickAt("req", time.Now())
	}
	do, err := c.operation(ctx, &w)
	if err != nil {
		return Result{}, c.Error(err)
	}
	if w.Key == "" {
		res, err := do(nil)
		if err != nil {
			return Result{}, c.Error(err)
		}
		return Result{Result: res}, nil
	}
	target := cmp.Or(w.Target, w.Route.Method+" "+w.Route.Path+string(w.Config)+" "+w.ID+" "+w.ChildID)
	// A key is the workspace's; a write outside any (a new workspace) keeps
	// it under the admin who made it.
	scope := cmp.Or(w.Principal.Workspace.ID, w.Principal.Admin)
	res, replayed, err := c.once(ctx, scope, w.Key, idempotency.Hash(w.Route.Method, target, w.Body), w.RequestID, target, do)
	if err != nil {
		return Result{Replayed: replayed}, c.Error(err)
	}
	return Result{Result: res, Replayed: replayed}, nil
}

// operation gates and reads w, and is the operation to run with the key's
// pending answer (nil without a key).
func (c *Core) operation(ctx context.Context, w *WriteRequest) (func(p *idempotency.Pending) (writes.Result, error), error) {
	if w.Config != "" {
		return c.configure(ctx, w)
	}
	rt := w.Route
	f, ok := writes.Lookup(rt.Resource, rt.Op)
	if !ok {
		return nil, apierr.New(http.StatusNotFound, "route_not_found", "no such operation")
	}
	if err := w.Principal.Gate(rt.Resource, resource.Write); err != nil {
		return nil, err
	}
	raw, err := body.Read(w.ContentType, w.Body, rt.Op.Kind == resource.Delete || rt.Op.Kind == resource.Action)
	if err != nil {
		return nil, err
	}
	req := &writes.Request{
		Ctx: ctx, DB: c.DB, Records: c.Records, Principal: w.Principal,
		Resource: rt.Resource, Op: rt.Op, RequestID: w.RequestID,
		ID: w.ID, ChildID: w.ChildID,
	}
	if rt.Op.BulkKey != "" {
		m, err := body.Decode(raw)
		if err != nil {
			return nil, err
		}
		req.Raw = m
	} else {
		v, err := body.Parse(raw, rt.Op.Body)
		if err != nil {
			return nil, err
		}
		req.Body = v
	}
	return func(p *idempotency.Pending) (writes.Result, error) {
		req.Idem = p
		return f(req)
	}, nil
}

// once runs do under an idempotency key: the first answer of key with this
// hash is kept and replayed, another hash is 409 idempotency_key_reused. A
// success keeps its answer in its own transaction; a client error the
// operation decided is kept after it (it wrote nothing); a 5xx is not kept.
func (c *Core) once(ctx context.Context, ws, key, hash, requestID, target string, do func(p *idempotency.Pending) (writes.Result, error)) (res writes.Result, replayed bool, err error) {
	prev, err := c.idem.Once(ctx, ws, key, hash, func(p *idempotency.Pending) error {
		var err error
		res, err = do(p)
		if err == nil && !p.Kept() {
			// Every operation answers through a transaction that keeps the
			// key; this one did not, so keep it late rather than never.
			c.Log.Error("idempotency: an operation answered outside its transaction", "request_id", requestID, "path", target)
			if err2 := p.KeepOutcome(ctx, res.Status, res.Body); err2 != nil {
				c.Log.Error("idempotency: keep the answer", "request_id", requestID, "err", err2)
			}
		}
		if err != nil && !errors.Is(err, idempotency.ErrTaken) {
			if e := c.Error(err); idempotency.Stored(e.Status) {
				if err2 := p.KeepOutcome(ctx, e.Status, idempotency.EncodeError(e)); err2 != nil {
					c.Log.Error("idempotency: keep the refusal", "request_id", requestID, "err", err2)
				}
			}
		}
		return err
	})
	switch {
	case err != nil:
		return writes.Result{}, false, err
	case prev == nil:
		return res, false, nil
	case prev.Status >= 400:
		return writes.Result{}, true, prev.Replay()
	}
	return writes.Result{Status: prev.Status, Body: prev.Body}, true, nil
}
