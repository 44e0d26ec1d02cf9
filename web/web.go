package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/ratelimit"
	"github.com/ledgerbase/ledgerbase/assets"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
	"github.com/ledgerbase/ledgerbase/web/session"
)

// Base is where the UI lives.
const Base = "/admin"

// PickPath answers a lines editor's item search as one types: a part of
// a page that htmx asks for, not a page of its own.
const PickPath = Base + "/w/:ws/records/:res/pick"

// UI serves the admin pages.
type UI struct {
	core *api.Core
	db   *database.DB
	log  *slog.Logger
	// logins throttles sign-in attempts per address and per email.
	loginsMu sync.Mutex
	logins   *ratelimit.Limiter
	attempts int // since logins was made
	// LoginsPerMinute bounds attempts per email and address (default 10);
	// an address as a whole gets six times as many.
	LoginsPerMinute int
	// accounts bounds attempts per account, from any address and process:
	// AccountFailures failed sign-ins per AccountWindow (default 10 per 15
	// minutes), then none until the window ends.
	accounts        *session.AccountLimit
	AccountFailures int
	AccountWindow   time.Duration
	// figures are the dashboard's counts and money by workspace (figuresOf).
	figures shortcut.Cache[figures]
}

// New prepares the UI of the core; mount it with the REST server's
// Mount(ui.Mount), or on any fiber app.
func New(core *api.Core) *UI {
	return &UI{core: core, db: core.DB, log: core.Log, logins: ratelimit.New(), LoginsPerMinute: 10,
		accounts: session.NewAccountLimit(core.DB), AccountFailures: 10, AccountWindow: 15 * time.Minute}
}

// Mount installs every /admin route on app.
func (u *UI) Mount(app *fiber.App) {
	// A person who opens the server's address in a browser wants the UI.
	app.Get("/", func(c *fiber.Ctx) error { return c.Redirect(Base+"/", fiber.StatusFound) })
	app.Get(DocsPath, docs)
	a := app.Group(Base, securityHeaders)
	a.Use("/assets", filesystem.New(filesystem.Config{Root: http.FS(assets.FS), MaxAge: 3600}))
	a.Get("/setup", u.setupPage)
	a.Post("/setup", u.checkFormCSRF, u.setup)
	a.Get("/login", u.loginPage)
	a.Post("/login", u.checkFormCSRF, u.login)

	in := a.Group("", u.requireSession, u.checkSessionCSRF)
	in.Post("/logout", u.logout)
	in.Get("/", u.workspaces)
	in.Post("/workspaces", u.createWorkspace)
	w := in.Group("/w/:ws", u.loadWorkspace)
	w.Get("/", u.dashboard)
	w.Get("/settings", u.settingsPage)
	w.Post("/settings", u.saveSettings)
	w.Post(strings.TrimPrefix(CompanyPath, Base+"/w/:ws"), u.saveCompany)
	w.Get("/keys", u.keys)
	w.Post("/keys", u.createKey)
	w.Get("/keys/:id/revoke", u.revokePage)
	w.Post("/keys/:id/revoke", u.revokeKey)
	w.Get("/roles", u.roles)
	w.Get("/roles/new", u.newRolePage)
	w.Post("/roles", u.createRole)
	w.Get("/roles/:id", u.rolePage)
	w.Post("/roles/:id", u.saveRole)
	w.Post("/roles/:id/delete", u.deleteRole)
	w.Get("/webhooks", u.webhooks)
	w.Post("/webhooks", u.createEndpoint)
	w.Get("/webhooks/:id", u.endpointPage)
	w.Post("/webhooks/:id", u.updateEndpoint)
	w.Post("/webhooks/:id/disable", u.endpointWrite(api.UpdateEndpoint, map[string]any{"disabled": true}, "disabled"))
	w.Post("/webhooks/:id/enable", u.endpointWrite(api.UpdateEndpoint, map[string]any{"disabled": false}, "enabled"))
	w.Post("/webhooks/:id/rotate", u.endpointWrite(api.RotateSecret, nil, "rotated"))
	w.Get("/webhooks/:id/delete", u.deleteEndpointPage)
	w.Post("/webhooks/:id/delete", u.deleteEndpoint)
	// "Send again": the delivery is due now, whatever its state.
	w.Post("/webhooks/:id/deliveries/:delivery/retry", u.endpointWrite(api.RetryDelivery, nil, "retry"))
	w.Get("/records/:res", u.recordList)
	w.Get("/search", u.searchPage)
	w.Post("/records/:res/bulk", u.bulkAction)
	w.Get("/records/clients/:id/statement", u.statement)
	w.Get("/records/:res/new", u.newForm)
	w.Get(strings.TrimPrefix(PickPath, Base+"/w/:ws"), u.pickList)
	w.Post("/records/:res/totals", u.lineTotals)
	w.Post("/records/:res", u.createRecord)
	w.Get("/records/:res/:id", u.recordDetail)
	w.Get("/records/:res/:id/edit", u.editForm)
	w.Get("/records/:res/:id/pdf", u.documentPDF)
	w.Get("/records/:res/:id/print", u.printDocument)
	w.Post("/records/:res/:id", u.updateRecord)
	w.Get("/records/:res/:id/do/:name", u.actionPage)
	w.Post("/records/:res/:id/do/:name", u.runAction)
	w.Post("/records/:res/:id/emails/:email/again", u.sendEmailAgain)
	w.Get("/records/:res/:id/add/:sub", u.newForm)
	w.Post("/records/:res/:id/add/:sub", u.createRecord)
	w.Get("/records/:res/:id/sub/:sub/:cid/edit", u.editForm)
	w.Post("/records/:res/:id/sub/:sub/:cid", u.updateRecord)
	a.Use(u.notFound)
}

// takeLogin spends a sign-in attempt of an address, then of the address
// and email; it returns 0 when allowed, else the seconds to wait.
func (u *UI) takeLogin(addr, email string) int {
	u.loginsMu.Lock()
	// Each email tried makes a bucket: start afresh now and then rather
	// than let a flood of made-up emails grow memory without bound.
	if u.attempts++; u.attempts > 100_000 {
		u.logins, u.attempts = ratelimit.New(), 0
	}
	l := u.logins
	u.loginsMu.Unlock()
	now := time.Now()
	if r := l.Take("addr:"+addr, 6*u.LoginsPerMinute, now); !r.Allowed {
		return r.RetryAfter
	}
	if r := l.Take("email:"+addr+"|"+email, u.LoginsPerMinute, now); !r.Allowed {
		return r.RetryAfter
	}
	return 0
}

// securityHeaders keep admin pages out of frames and caches (a key's
// secret is shown once and must not linger in a shared cache).
func securityHeaders(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	err := c.Next()
	if !strings.HasPrefix(c.Path(), Base+"/assets/") {
		h.Set("Cache-Control", "no-store")
	}
	return err
}

// render writes a page with a status.
func render(c *fiber.Ctx, status int, comp templ.Component) error {
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// redirect answers 303 so a form POST becomes a GET; htmx follows HX-Redirect.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

func (u *UI) notFound(c *fiber.Ctx) error {
	return u.fail(c, http.StatusNotFound, "Page not found", "There is no page at this address.")
}

// fail renders an error page; the cause goes to the log, never to the page.
func (u *UI) fail(c *fiber.Ctx, status int, title, msg string) error {
	p := u.pageOf(c, title, "")
	return render(c, status, errorPage(p, status, msg))
}

// lookupFailed answers a failed lookup of the record a page is about: 404
// for another workspace's or an unknown one.
func (u *UI) lookupFailed(c *fiber.Ctx, err error) error {
	if e, ok := apierr.As(err); ent.IsNotFound(err) || ok && e.Status == http.StatusNotFound {
		return u.notFound(c)
	}
	return u.internal(c, err)
}

// internal logs an unexpected error and shows a page that reveals nothing.
func (u *UI) internal(c *fiber.Ctx, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if e := u.faultOf(c, err); e != nil {
		return u.fault(c, e)
	}
	u.log.Error("admin page failed", "method", c.Method(), "path", c.Path(), "err", err)
	return u.fail(c, http.StatusInternalServerError, "Something went wrong",
		"The page could not be shown. The details are in the server log; try again in a moment.")
}

// faultOf is the error the API answers when err is a fault of the database
// (507, 503), noted for c's metrics and logged as the API's are; else nil.
func (u *UI) faultOf(c *fiber.Ctx, err error) *apierr.Error {
	rid := string(c.Response().Header.Peek(fiber.HeaderXRequestID)) // the server's, set on every request
	e := u.core.Fault(err, "request_id", rid, "method", c.Method(), "path", c.Path())
	if e != nil {
		c.Locals(api.FaultMark, e.Code)
	}
	return e
}

// fault shows a fault of the database as a banner saying what is wrong and
// that trying again later will work, not as a generic error.
func (u *UI) fault(c *fiber.Ctx, e *apierr.Error) error {
	title, banner := "Database unavailable",
		"The database cannot be reached right now, so nothing was shown or saved. Try again in a few seconds."
	if e.Code == "storage_full" {
		title, banner = "Storage is full",
			"The server's storage is full, so nothing was saved. Pages that only show data still work; try again once the server's operator has freed space."
	}
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	p := u.pageOf(c, title, "")
	p.Error = banner
	return render(c, e.Status, faultPage(p, e.Status, retryURL(c)))
}

// retryURL is where "Try again" leads: the page itself for a GET, the
// page the form was sent from otherwise ("" when unknown).
func retryURL(c *fiber.Ctx) string {
	if c.Method() == fiber.MethodGet {
		return c.OriginalURL()
	}
	if ref, err := url.Parse(c.Get(fiber.HeaderReferer)); err == nil && ref.Host == c.Hostname() && strings.HasPrefix(ref.Path, Base+"/") {
		return ref.RequestURI()
	}
	return ""
}

// page is what the layout needs to know.
type page struct {
	Title   string
	Email   string         // the signed-in admin; "" outside a session
	CSRF    string         // the session's token for forms
	WS      *ent.Workspace // nil outside a workspace
	Current string         // the nav entry shown as current
	Notice  string
	Error   string
}

// pageOf is a page titled title whose nav entry current is shown as current.
func (u *UI) pageOf(c *fiber.Ctx, title, current string) page {
	p := page{Title: title, Current: current}
	if s := sessionOf(c); s != nil {
		p.CSRF = s.CsrfToken
		if a, ok := c.Locals(adminKey).(*ent.AdminUser); ok {
			p.Email = a.Email
		}
	}
	p.WS, _ = c.Locals(workspaceKey).(*ent.Workspace)
	return p
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func fmtTimePtr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return fmtTime(*t)
}

func planLine(ws *ent.Workspace) string {
	s := string(ws.Plan) + " plan"
	if ws.CommerceMode {
		s += " · commerce mode"
	}
	if ws.CommerceModule {
		s += " · commerce module"
	}
	return s
}

func statusText(code int) string { return strconv.Itoa(code) + " " + http.StatusText(code) }
