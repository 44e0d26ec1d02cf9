// Package assets holds the admin UI's stylesheet, scripts and icon, embedded into
// the binary so the appliance works offline (no CDN). htmx.min.js is
// htmx.org 2.0.11 from the npm registry (0BSD licence), unmodified.
// redoc/ is the Redoc bundle /docs renders the API reference with (see
// redoc/README.md for its version, licence and the one change made).
package assets

import "embed"

// FS serves under /admin/assets/.
//
//go:embed app.css forms.css lists.css forms.js lists.js documents.css print.css app.js favicon.svg htmx.min.js docs.js redoc/redoc.standalone.js redoc/redoc.standalone.js.LICENSE.txt redoc/LICENSE
var FS embed.FS
