package telemetry

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/routing"
)

// routeIndex names a request's route for its metrics.
type routeIndex struct{ table *routing.Table }

func newRouteIndex(app *fiber.App) routeIndex { return routeIndex{routing.New(app.GetRoutes(true))} }

// lookup names the endpoint of a request. matched is the route fiber
// matched last: the endpoint, or a middleware's prefix when the chain
// stopped before routing, and then the path is looked up. A middleware
// that answered successfully (static files) is named by its prefix,
// anything else Unmatched.
func (ix routeIndex) lookup(method, matched, path string, status int) string {
	if ix.table.Index(method, matched) >= 0 && routing.Match(matched, path) {
		return matched
	}
	if p, i := ix.table.Find(method, path); i >= 0 {
		return p
	}
	if status < 400 {
		return matched
	}
	return Unmatched
}
