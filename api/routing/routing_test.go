package routing

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// The segment tree must name the same pattern as scanning the patterns in
// order with Match, whatever the overlaps between patterns.
func TestRouteTreeAgreesWithScan(t *testing.T) {
	t.Parallel()
	patterns := []string{"/v1/invoices", "/v1/invoices/:id", "/v1/invoices/search", "/v1/Invoices/:id/lines",
		"/v1/:kind/:id", "/v1/clients/:id/addresses", "/v1/clients/:id/addresses/:address_id", "/assets/*",
		"/files/+", "/v1/invoices/:id/*", "/", "/v1/me", "/v1/me/"}
	var routes []fiber.Route
	for _, p := range patterns {
		routes = append(routes, fiber.Route{Method: "GET", Path: p})
	}
	table := New(routes)
	segs := []string{"", "v1", "V1", "invoices", "INVOICES", "search", "inv_1", "lines", "clients", "addresses",
		"assets", "files", "me", "x", strings.Repeat("Ab", 40)}
	var paths []string
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		paths = append(paths, prefix, prefix+"/")
		if depth == 0 {
			return
		}
		for _, s := range segs {
			gen(prefix+"/"+s, depth-1)
		}
	}
	gen("", 4)
	for _, path := range paths {
		want := -1
		for i, p := range patterns {
			if Match(p, path) {
				want = i
				break
			}
		}
		if _, got := table.Find("GET", path); got != want {
			t.Fatalf("%q: tree %d, scan %d", path, got, want)
		}
	}
}

func TestAllowedListsEveryMethodServedAtAPath(t *testing.T) {
	t.Parallel()
	table := New([]fiber.Route{
		{Method: "GET", Path: "/v1/invoices"}, {Method: "POST", Path: "/v1/invoices"},
		{Method: "GET", Path: "/v1/invoices/:id"}, {Method: "PATCH", Path: "/v1/invoices/:id"},
		{Method: "HEAD", Path: "/v1/invoices/:id"},
	})
	for path, want := range map[string]string{
		"/v1/invoices": "GET,POST", "/V1/Invoices/": "GET,POST", "/v1/invoices/inv_1": "GET,HEAD,PATCH",
		"/v1/invoices/inv_1/x": "", "/v1/clients": "",
	} {
		if got := strings.Join(table.Allowed(path), ","); got != want {
			t.Errorf("%s: Allowed %q, want %q", path, got, want)
		}
	}
}
