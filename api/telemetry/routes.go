package telemetry

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// routeIndex holds the app's endpoint patterns (middleware excluded) by
// method, to name the route of a request by its pattern.
type routeIndex map[string][]string

func newRouteIndex(app *fiber.App) routeIndex {
	ix := routeIndex{}
	for _, r := range app.GetRoutes(true) {
		ix[r.Method] = append(ix[r.Method], r.Path)
	}
	return ix
}

// lookup names the endpoint of a request. matched is the path of the route
// fiber matched last: the endpoint itself when one answered; a middleware's
// prefix (the /v1 group, the catch-all) when the chain stopped before
// routing or no endpoint exists, and then the endpoint the path addresses
// is looked up. A middleware that answered successfully (static files) is
// named by its prefix; anything else is Unmatched.
func (ix routeIndex) lookup(method, matched, path string, status int) string {
	pats := ix[method]
	for _, p := range pats {
		if p == matched && matchPattern(p, path) {
			return p
		}
	}
	for _, p := range pats {
		if matchPattern(p, path) {
			return p
		}
	}
	if status < 400 {
		return matched
	}
	return Unmatched
}

// matchPattern reports whether path is one fiber would route to pattern
// (its defaults: case-insensitive, trailing slash optional). Patterns use
// ":param" segments and a trailing "*" or "+" wildcard.
func matchPattern(pattern, path string) bool {
	pattern = strings.Trim(pattern, "/")
	path = strings.Trim(path, "/")
	for {
		var ps, xs string
		var pmore, xmore bool
		ps, pattern, pmore = strings.Cut(pattern, "/")
		xs, path, xmore = strings.Cut(path, "/")
		switch {
		case ps == "*" || ps == "+":
			return ps == "*" || xs != ""
		case strings.HasPrefix(ps, ":"):
			if xs == "" {
				return false
			}
		case !strings.EqualFold(ps, xs):
			return false
		}
		if pmore != xmore {
			return false
		}
		if !pmore {
			return true
		}
	}
}
