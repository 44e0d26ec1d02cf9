package telemetry

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// The route index must name the same endpoint fiber's router picks, for
// every path: fiber is the reference.
func TestRouteLookupAgreesWithFiber(t *testing.T) {
	t.Parallel()
	patterns := []string{"/v1/invoices", "/v1/invoices/:id", "/v1/clients/:id/addresses", "/v1/clients/:id/addresses/:address_id", "/assets/*", "/"}
	app := fiber.New()
	for _, p := range patterns {
		app.Get(p, func(c *fiber.Ctx) error { return c.SendString(p) })
	}
	app.Use(func(c *fiber.Ctx) error { return c.Status(404).SendString(Unmatched) })
	ix := newRouteIndex(app)
	paths := []string{
		"/", "/v1/invoices", "/v1/invoices/", "/V1/Invoices", "/v1/invoices/inv_1", "/v1/invoices/inv_1/",
		"/v1/invoices/inv_1/x", "/v1/clients/cli_1/addresses", "/v1/clients/cli_1/addresses/adr_2",
		"/v1/clients//addresses", "/assets/app.css", "/assets/js/app.js", "/v1", "/v2/invoices", "/x",
	}
	for _, path := range paths {
		res, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		want := string(b)
		// "/" as the matched route: the catch-all middleware when nothing matched.
		if got := ix.lookup("GET", "/", path, res.StatusCode); got != want {
			t.Errorf("GET %s: lookup %q, fiber %q", path, got, want)
		}
	}
	if got := ix.lookup("POST", "/", "/v1/invoices", 405); got != Unmatched {
		t.Errorf("POST /v1/invoices (no such endpoint): %q", got)
	}
}
