package telemetry

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/routing"
)

// routeIndex names a request's route for its metrics and keeps the series
// of each route pattern.
type routeIndex struct {
	table *routing.Table
	slots map[string][]*routeSlot // by method, in the order of its patterns
}

func newRouteIndex(app *fiber.App) routeIndex {
	routes := app.GetRoutes(true)
	ix := routeIndex{table: routing.New(routes), slots: map[string][]*routeSlot{}}
	for _, r := range routes {
		ix.slots[r.Method] = append(ix.slots[r.Method], &routeSlot{})
	}
	return ix
}

// lookup names the endpoint of a request. matched is the route fiber
// matched last: the endpoint, or a middleware's prefix when the chain
// stopped before routing, and then the path is looked up. A middleware
// that answered successfully (static files) is named by its prefix,
// anything else Unmatched. slot is nil but for a pattern's label.
func (ix routeIndex) lookup(method, matched, path string, status int) (route string, slot *routeSlot) {
	if i := ix.table.Index(method, matched); i >= 0 && routing.Match(matched, path) {
		return matched, ix.slots[method][i]
	}
	if p, i := ix.table.Find(method, path); i >= 0 {
		return p, ix.slots[method][i]
	}
	if status < 400 {
		return matched, nil
	}
	return Unmatched, nil
}
