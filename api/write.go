package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// checkWrites refuses to start when a declared write has no implementation:
// a declaration must never turn into a route or form that cannot answer.
func checkWrites() error {
	for _, rt := range resource.AllEndpoints() {
		if rt.Op.Kind == resource.List || rt.Op.Kind == resource.Get {
			continue
		}
		if _, ok := writes.Lookup(rt.Resource, rt.Op); !ok {
			return fmt.Errorf("api: %s %s is declared but api/writes has no implementation of it", rt.Method, rt.Path)
		}
	}
	return nil
}

// write is the one handler of every POST and PATCH: gate, permission,
// media type, body validation, then the operation.
func (s *Server) write(rt Route) fiber.Handler {
	f, _ := writes.Lookup(rt.Resource, rt.Op) // present: checkWrites ran in New
	return func(c *fiber.Ctx) error {
		p := principal(c)
		if err := p.Gate(rt.Resource, resource.Write); err != nil {
			return err
		}
		// A DELETE or an action may come without a body (an action's fields
		// are then all omitted: a required one is a 400); one that has a
		// body sends JSON like any write.
		raw, err := body.Read(c.Get(fiber.HeaderContentType), c.Body(), rt.Op.Kind == resource.Delete || rt.Op.Kind == resource.Action)
		if err != nil {
			return err
		}
		req := &writes.Request{
			Ctx: c.UserContext(), DB: s.DB, Records: s.Records, Principal: p,
			Resource: rt.Resource, Op: rt.Op, RequestID: requestID(c),
			ID: c.Params("id"),
		}
		if rt.Resource.Parent != nil && rt.Resource.Parent.IDParam != "" {
			req.ChildID = c.Params(rt.Resource.Parent.IDParam)
		}
		if rt.Op.BulkKey != "" {
			m, err := body.Decode(raw)
			if err != nil {
				return err
			}
			req.Raw = m
		} else {
			v, err := body.Parse(raw, rt.Op.Body)
			if err != nil {
				return err
			}
			req.Body = v
		}
		res, err := s.runWrite(c, req, f)
		if err != nil {
			return err
		}
		return sendJSON(c, res.Status, res.Body)
	}
}

// runWrite runs an operation, under its Idempotency-Key when a POST has one.
func (s *Server) runWrite(c *fiber.Ctx, req *writes.Request, f writes.Func) (writes.Result, error) {
	return s.underKey(c, req.Principal.Workspace.ID, func(p *idempotency.Pending) (writes.Result, error) {
		req.Idem = p
		return f(req)
	})
}

// underKey runs do under the request's Idempotency-Key when a POST has one
// (p is nil otherwise); do keeps its answer through p in its transaction.
// Only a request that reached its operation uses the key: one refused
// earlier (gating, permission, media type, validation) did not run, so a
// corrected retry may reuse the key.
func (s *Server) underKey(c *fiber.Ctx, ws string, do func(p *idempotency.Pending) (writes.Result, error)) (writes.Result, error) {
	key := c.Get(idempotency.Header)
	if key == "" || c.Method() != fiber.MethodPost {
		return do(nil)
	}
	res, replayed, err := s.once(c.UserContext(), ws, key, idempotency.Hash(c.Method(), c.Path(), c.Body()), requestID(c), c.Path(), do)
	if replayed {
		c.Set(idempotency.ReplayedHeader, "true")
	}
	return res, err
}

// once runs do under an idempotency key: the first answer of key with this
// hash is kept, a repeat gets it again (replayed), and another hash under
// the same key is 409 idempotency_key_reused. A success keeps its answer in
// its own transaction (see api/idempotency); a client error the operation
// decided (404, 409, business 400) is kept after it, since it wrote
// nothing; a 5xx is not kept, and a retry runs again.
func (s *Server) once(ctx context.Context, ws, key, hash, requestID, path string, do func(p *idempotency.Pending) (writes.Result, error)) (res writes.Result, replayed bool, err error) {
	prev, err := s.idem.Once(ctx, ws, key, hash, func(p *idempotency.Pending) error {
		var err error
		res, err = do(p)
		if err == nil && !p.Kept() {
			// Every operation answers through a transaction that keeps the
			// key; this one did not, so keep it late rather than never.
			s.log.Error("idempotency: an operation answered outside its transaction", "request_id", requestID, "path", path)
			if err2 := p.KeepOutcome(ctx, res.Status, res.Body); err2 != nil {
				s.log.Error("idempotency: keep the answer", "request_id", requestID, "err", err2)
			}
		}
		if err != nil && !errors.Is(err, idempotency.ErrTaken) {
			if e := s.toAPIError(err); idempotency.Stored(e.Status) {
				if err2 := p.KeepOutcome(ctx, e.Status, idempotency.EncodeError(e)); err2 != nil {
					s.log.Error("idempotency: keep the refusal", "request_id", requestID, "err", err2)
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

// RunWrite runs the declared write rt for a caller other than /v1 (the
// admin UI): the same gate, body validation and operation as the /v1
// handler, on raw, a JSON object ("" or nil for none, as a bodiless
// DELETE or action). id is the record's id (the parent's for a
// sub-resource, whose own id is childID). A refusal comes back as the
// error /v1 would answer, with its status, code, message and param.
func (s *Server) RunWrite(ctx context.Context, p *access.Principal, rt Route, id, childID string, raw []byte) (writes.Result, *apierr.Error) {
	return s.RunWriteOnce(ctx, p, rt, id, childID, raw, "")
}

// RunWriteOnce is RunWrite under an idempotency key (none when key is ""),
// kept as a POST's Idempotency-Key is: the same key and body answer the
// first outcome again without writing, another body under the key is 409
// idempotency_key_reused. A bulk operation takes raw as /v1 does, its
// array under the declared key.
func (s *Server) RunWriteOnce(ctx context.Context, p *access.Principal, rt Route, id, childID string, raw []byte, key string) (writes.Result, *apierr.Error) {
	f, ok := writes.Lookup(rt.Resource, rt.Op)
	if !ok {
		return writes.Result{}, apierr.New(fiber.StatusNotFound, "route_not_found", "no such operation")
	}
	if err := p.Gate(rt.Resource, resource.Write); err != nil {
		return writes.Result{}, s.toAPIError(err)
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	req := &writes.Request{
		Ctx: ctx, DB: s.DB, Records: s.Records, Principal: p,
		Resource: rt.Resource, Op: rt.Op, RequestID: ids.QuickAt("req", time.Now()),
		ID: id, ChildID: childID,
	}
	if rt.Op.BulkKey != "" {
		m, err := body.Decode(raw)
		if err != nil {
			return writes.Result{}, s.toAPIError(err)
		}
		req.Raw = m
	} else {
		v, err := body.Parse(raw, rt.Op.Body)
		if err != nil {
			return writes.Result{}, s.toAPIError(err)
		}
		req.Body = v
	}
	var res writes.Result
	var err error
	if key == "" {
		res, err = f(req)
	} else {
		path := rt.Method + " " + rt.Path + " " + id + " " + childID
		res, _, err = s.once(ctx, p.Workspace.ID, key, idempotency.Hash(rt.Method, path, raw), req.RequestID, path,
			func(pending *idempotency.Pending) (writes.Result, error) {
				req.Idem = pending
				return f(req)
			})
	}
	if err != nil {
		e := s.toAPIError(err)
		if e.Status >= 500 {
			s.log.Error("admin write failed", "path", rt.Path, "request_id", req.RequestID, "err", err)
		}
		return writes.Result{}, e
	}
	return res, nil
}

// FindRoute is the declared endpoint of r's operation of kind k (an
// action's name for Action), AdminOnly ones included.
func FindRoute(r *resource.Resource, k resource.OpKind, name string) (Route, bool) {
	for _, rt := range resource.AllEndpoints() {
		if rt.Resource == r && rt.Op.Kind == k && (k != resource.Action || rt.Op.Name == name) {
			return rt, true
		}
	}
	return Route{}, false
}
