package web

import "github.com/gofiber/fiber/v2"

// DocsPath is the API reference for people: the served OpenAPI document
// (/v1/openapi.json) rendered by Redoc, which is embedded in assets/redoc,
// so the page loads nothing from outside this server.
const DocsPath = "/docs"

// docsCSP lets Redoc run and nothing reach another origin: its styles are
// injected <style> elements (styled-components), its logo is inline.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const docsHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Ledgerbase</title>
<link rel="icon" href="` + Base + `/assets/favicon.svg" type="image/svg+xml">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="redoc" data-spec="/v1/openapi.json"><p>Loading the API reference… The OpenAPI document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></div>
<noscript><p>The API reference needs JavaScript. The OpenAPI document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
<script src="` + Base + `/assets/redoc/redoc.standalone.js"></script>
<script src="` + Base + `/assets/docs.js"></script>
</body>
</html>
`

// docs serves the API reference page; no sign-in, as the document itself.
func docs(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(docsHTML)
}
