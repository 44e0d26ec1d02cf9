// Package assets holds the admin UI's stylesheet and scripts, embedded into
// the binary so the appliance works offline (no CDN). htmx.min.js is
// htmx.org 2.0.11 from the npm registry (0BSD licence), unmodified.
package assets

import "embed"

// FS serves under /admin/assets/.
//
//go:embed app.css app.js htmx.min.js
var FS embed.FS
