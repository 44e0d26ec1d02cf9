package api

import (
	"fmt"
	"mime"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
)

// checkWrites refuses to start when a declared write has no implementation:
// a declaration must never turn into a route that cannot answer.
func checkWrites() error {
	for _, rt := range Routes() {
		if rt.Op.Kind == resource.List || rt.Op.Kind == resource.Get {
			continue
		}
		if _, ok := writes.Lookup(rt.Resource, rt.Op.Kind); !ok {
			return fmt.Errorf("api: %s %s is declared but api/writes has no implementation of it", rt.Method, rt.Path)
		}
	}
	return nil
}

// write is the one handler of every POST and PATCH: gate, permission,
// media type, body validation, then the operation.
func (s *Server) write(rt Route) fiber.Handler {
	f, _ := writes.Lookup(rt.Resource, rt.Op.Kind) // present: checkWrites ran in New
	return func(c *fiber.Ctx) error {
		p := principal(c)
		if err := p.Gate(rt.Resource, resource.Write); err != nil {
			return err
		}
		if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
			return apierr.New(fiber.StatusUnsupportedMediaType, "unsupported_media_type", "send JSON with 'Content-Type: application/json'")
		}
		req := &writes.Request{
			Ctx: c.UserContext(), DB: s.DB, Records: s.Records, Principal: p,
			Resource: rt.Resource, Op: rt.Op, RequestID: requestID(c),
			ID: c.Params("id"),
		}
		if rt.Resource.Parent != nil && rt.Resource.Parent.IDParam != "" {
			req.ChildID = c.Params(rt.Resource.Parent.IDParam)
		}
		raw := c.Body()
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
// Only a request that reached its operation claims the key: one refused
// earlier (gating, permission, media type, validation) did not run, so a
// corrected retry may reuse the key. The operation's answer is stored when
// it is a success or a client error it decided (404, 409, business 400);
// a 5xx releases the key, since nothing was written and a retry should run.
func (s *Server) runWrite(c *fiber.Ctx, req *writes.Request, f writes.Func) (writes.Result, error) {
	key := c.Get(idempotency.Header)
	if key == "" || c.Method() != fiber.MethodPost {
		return f(req)
	}
	if err := idempotency.Check(key); err != nil {
		return writes.Result{}, err
	}
	claim, prev, err := s.idem.Begin(req.Ctx, req.Principal.Workspace.ID, key, idempotency.Hash(c.Method(), c.Path(), c.Body()))
	if err != nil {
		return writes.Result{}, err
	}
	if prev != nil {
		c.Set(idempotency.ReplayedHeader, "true")
		if prev.Status >= 400 {
			return writes.Result{}, prev.Replay()
		}
		return writes.Result{Status: prev.Status, Body: prev.Body}, nil
	}
	res, err := f(req)
	status, stored := res.Status, res.Body
	if err != nil {
		e := s.toAPIError(err)
		status, stored = e.Status, idempotency.EncodeError(e)
	}
	if idempotency.Stored(status) {
		err2 := claim.Finish(req.Ctx, status, stored)
		if err2 != nil {
			s.log.Error("idempotency: store response", "request_id", req.RequestID, "err", err2)
		}
	} else if err2 := claim.Release(req.Ctx); err2 != nil {
		s.log.Error("idempotency: release key", "request_id", req.RequestID, "err", err2)
	}
	return res, err
}
