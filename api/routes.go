package api

import (
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Route is one endpoint derived from a declaration (also used by OpenAPI).
type Route = resource.Endpoint

// Routes lists every /v1 endpoint, in declaration order.
func Routes() []Route { return resource.Endpoints() }

// routeTable knows every pattern, to tell a 405 from a 404.
type routeTable struct {
	routes []Route
	// served are all the app's routes (admin UI, probes, the OpenAPI
	// document too), set by Finish.
	served []fiber.Route
}

// allowedAnywhere lists the methods any route of the app serves at path:
// the /v1 table's, else the mounted routes' (/healthz, /admin/...).
func (t *routeTable) allowedAnywhere(path string) []string {
	if out := t.allowed(path); len(out) > 0 {
		return out
	}
	seen := map[string]bool{}
	for _, r := range t.served {
		if matchPattern(r.Path, path) {
			seen[r.Method] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func (t *routeTable) allowed(path string) []string {
	seen := map[string]bool{}
	for _, r := range t.routes {
		if matchPattern(r.Path, path) {
			seen[r.Method] = true
		}
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func matchPattern(pattern, path string) bool {
	pp := strings.Split(strings.Trim(pattern, "/"), "/")
	xp := strings.Split(strings.Trim(path, "/"), "/")
	if len(pp) != len(xp) && !(pp[len(pp)-1] == "*" && len(xp) >= len(pp)-1) {
		return false
	}
	for i, p := range pp {
		if p == "*" && i == len(pp)-1 { // fiber's wildcard: the rest of the path
			return true
		}
		if strings.HasPrefix(p, ":") {
			if xp[i] == "" {
				return false
			}
		} else if p != xp[i] {
			return false
		}
	}
	return true
}

func (s *Server) noRoute(c *fiber.Ctx) error { return s.wrongMethod(c) }

// wrongMethod is the answer to a request no route takes: 405 with Allow
// where some method is served at the path, else 404.
func (s *Server) wrongMethod(c *fiber.Ctx) error {
	if allow := s.routes.allowedAnywhere(c.Path()); len(allow) > 0 {
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
	s.routes.routes = append(s.routes.routes, Route{Method: "GET", Path: "/v1/me", Resource: resource.Me},
		Route{Method: "GET", Path: "/v1/events", Resource: resource.Me}, Route{Method: "GET", Path: "/v1/events/:id", Resource: resource.Me})
	s.mountWebhooks(v1)
	for _, rt := range Routes() {
		if rt.Resource == resource.Me {
			continue
		}
		rt := rt
		path := strings.TrimPrefix(rt.Path, "/v1")
		var h fiber.Handler
		switch rt.Op.Kind {
		case resource.List:
			h = s.list(rt.Resource)
		case resource.Get:
			h = s.get(rt.Resource)
		default:
			h = s.write(rt)
		}
		if rt.Method == fiber.MethodGet {
			v1.Get(path, h) // and HEAD, which the route table promises
		} else {
			v1.Add(rt.Method, path, h)
		}
		s.routes.routes = append(s.routes.routes, rt)
	}
	// HEAD is served wherever GET is.
	for _, rt := range s.routes.routes {
		if rt.Method == "GET" {
			s.routes.routes = append(s.routes.routes, Route{Method: "HEAD", Path: rt.Path, Resource: rt.Resource})
		}
	}
}

func workspaceOf(c *fiber.Ctx) records.Workspace {
	p := principal(c)
	return records.Workspace{ID: p.Workspace.ID, Commerce: p.Workspace.Commerce()}
}

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
		if err := principal(c).Gate(r, resource.Read); err != nil {
			return err
		}
		pg, err := parsePage(c, r)
		if err != nil {
			return err
		}
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
		if err := principal(c).Gate(r, resource.Read); err != nil {
			return err
		}
		b, err := s.Records.Get(c.UserContext(), r, workspaceOf(c), c.Params("id"), "")
		if err != nil {
			return err
		}
		return sendJSON(c, fiber.StatusOK, b)
	}
}
