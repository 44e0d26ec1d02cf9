package rest

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// wrongMethod is the answer to a request no route takes: 405 with Allow
// where some method is served at the path, else 404.
func (s *Server) wrongMethod(c *fiber.Ctx) error {
	if allow := s.routes.Allowed(c.Path()); len(allow) > 0 {
		return apierr.MethodNotAllowed(strings.Join(allow, ", "))
	}
	return apierr.RouteNotFound(c.Method(), c.Path())
}

func (s *Server) mountV1() {
	v1 := s.App.Group("/v1")
	// Routes that need no key (the OpenAPI document) go before authentication.
	for _, h := range s.public {
		h(v1)
	}
	v1.Use(s.authenticate)
	v1.Get("/me", s.me)
	v1.Get("/events", s.listEvents)
	v1.Get("/events/:id", s.getEvent)
	s.mountWebhooks(v1)
	for _, rt := range api.Routes() {
		if rt.Resource == resource.Me {
			continue
		}
		path := strings.TrimPrefix(rt.Path, "/v1")
		var h fiber.Handler
		switch rt.Op.Kind {
		case resource.List:
			h = s.list(rt.Resource)
		case resource.Get:
			h = s.get(rt.Resource)
		case resource.Document:
			h = s.pdf(rt.Resource)
		default:
			h = s.write(rt)
		}
		if rt.Method == fiber.MethodGet {
			v1.Get(path, h) // and HEAD, which the route table promises
		} else {
			v1.Add(rt.Method, path, h)
		}
	}
}

func workspaceOf(c *fiber.Ctx) records.Workspace { return api.WorkspaceOf(Principal(c)) }

// parentID checks a sub-resource's parent exists in the caller's workspace.
func (s *Server) parentID(c *fiber.Ctx, r *resource.Resource) (string, error) {
	if r.Parent == nil {
		return "", nil
	}
	id := c.Params("id")
	ok, err := s.Records.Exists(c.UserContext(), r.Parent.Resource, workspaceOf(c), id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apierr.NotFound(r.Parent.Resource.Singular)
	}
	return id, nil
}

func (s *Server) list(r *resource.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := Principal(c).Gate(r, resource.Read); err != nil {
			return err
		}
		l, err := api.ParseList(c.Context().QueryArgs().VisitAll, r)
		if err != nil {
			return err
		}
		pg := l.Page
		if pg.ParentID, err = s.parentID(c, r); err != nil {
			return err
		}
		// The page is written straight into the response's body buffer,
		// which fasthttp pools: no page allocates its JSON.
		resp := c.Response()
		buf := resp.SwapBody(nil)
		b, err := s.Records.AppendList(c.UserContext(), r, workspaceOf(c), pg, buf[:0])
		if err != nil {
			resp.SwapBody(buf[:0])
			return err
		}
		resp.SwapBody(b)
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Status(fiber.StatusOK)
		return nil
	}
}

func (s *Server) get(r *resource.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := Principal(c).Gate(r, resource.Read); err != nil {
			return err
		}
		if r.Singleton {
			b, err := s.Singleton(c.UserContext(), r, workspaceOf(c).ID)
			if err != nil {
				return err
			}
			return sendJSON(c, fiber.StatusOK, b)
		}
		b, err := s.Records.Get(c.UserContext(), r, workspaceOf(c), c.Params("id"), "")
		if err != nil {
			return err
		}
		return sendJSON(c, fiber.StatusOK, b)
	}
}
