package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/web/session"
)

const (
	sessionCookie = "lb_admin"
	// preCSRFCookie carries the double-submit token of the forms shown
	// before there is a session (setup, login).
	preCSRFCookie = "lb_csrf"
	sessionKey    = "admin_session"
	adminKey      = "admin_user"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
)

func sessionOf(c *fiber.Ctx) *ent.AdminSession {
	s, _ := c.Locals(sessionKey).(*ent.AdminSession)
	return s
}

// setCookie sets an HttpOnly, SameSite=Lax cookie for /admin, Secure when
// the request came over TLS (directly or through a proxy saying so).
func setCookie(c *fiber.Ctx, name, value string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: Base, Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https"})
}

func clearCookie(c *fiber.Ctx, name string) {
	setCookie(c, name, "", time.Unix(0, 0))
}

// formToken returns the pre-session CSRF token, minting its cookie once.
func formToken(c *fiber.Ctx) string {
	if t := c.Cookies(preCSRFCookie); len(t) >= 32 {
		return t
	}
	t := session.Token()
	setCookie(c, preCSRFCookie, t, time.Now().Add(24*time.Hour))
	return t
}

func sentToken(c *fiber.Ctx) string {
	if t := c.Get(csrfHeader); t != "" {
		return t
	}
	return c.FormValue(csrfField)
}

func (u *UI) csrfRefused(c *fiber.Ctx) error {
	return u.fail(c, http.StatusForbidden, "Form refused",
		"This form was not sent from this page or has expired. Go back, reload the page and try again.")
}

// checkFormCSRF guards the pre-session forms (double-submit cookie).
func (u *UI) checkFormCSRF(c *fiber.Ctx) error {
	if !session.SameToken(c.Cookies(preCSRFCookie), sentToken(c)) {
		return u.csrfRefused(c)
	}
	return c.Next()
}

// checkSessionCSRF guards every state-changing request of a session.
func (u *UI) checkSessionCSRF(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		return c.Next()
	}
	if !session.SameToken(sessionOf(c).CsrfToken, sentToken(c)) {
		return u.csrfRefused(c)
	}
	return c.Next()
}

// requireSession sends a browser without a live session to sign in (or to
// the first-run setup when no admin exists yet).
func (u *UI) requireSession(c *fiber.Ctx) error {
	ctx := c.UserContext()
	s, err := session.Lookup(ctx, u.db.Reader, c.Cookies(sessionCookie))
	if errors.Is(err, session.ErrNoSession) {
		to := Base + "/login"
		if exists, err := session.AnyAdmin(ctx, u.db.Reader); err != nil {
			return u.internal(c, err)
		} else if !exists {
			to = Base + "/setup"
		}
		return redirect(c, to)
	}
	if err != nil {
		return u.internal(c, err)
	}
	a, err := u.db.Reader.AdminUser.Get(ctx, s.AdminID)
	if ent.IsNotFound(err) { // the account was removed: its sessions end
		clearCookie(c, sessionCookie)
		return redirect(c, Base+"/login")
	}
	if err != nil {
		return u.internal(c, err)
	}
	c.Locals(sessionKey, s)
	c.Locals(adminKey, a)
	return c.Next()
}

type authForm struct {
	page
	Token string // the pre-session CSRF token
	Email string
}

func (u *UI) setupPage(c *fiber.Ctx) error {
	exists, err := session.AnyAdmin(c.UserContext(), u.db.Reader)
	if err != nil {
		return u.internal(c, err)
	}
	if exists {
		return redirect(c, Base+"/login")
	}
	return render(c, http.StatusOK, setupView(authForm{page: page{Title: "Set up Ledgerbase"}, Token: formToken(c)}))
}

func (u *UI) setup(c *fiber.Ctx) error {
	f := authForm{page: page{Title: "Set up Ledgerbase"}, Token: formToken(c), Email: c.FormValue("email")}
	pw, again := c.FormValue("password"), c.FormValue("password_again")
	if pw != again {
		f.Error = "The two passwords differ."
		return render(c, http.StatusUnprocessableEntity, setupView(f))
	}
	a, err := session.CreateFirstAdmin(c.UserContext(), u.db.Writer, f.Email, pw)
	if err != nil {
		f.Error = capitalize(err.Error()) + "."
		return render(c, http.StatusUnprocessableEntity, setupView(f))
	}
	return u.signIn(c, a)
}

func (u *UI) loginPage(c *fiber.Ctx) error {
	if _, err := session.Lookup(c.UserContext(), u.db.Reader, c.Cookies(sessionCookie)); err == nil {
		return redirect(c, Base+"/")
	}
	exists, err := session.AnyAdmin(c.UserContext(), u.db.Reader)
	if err != nil {
		return u.internal(c, err)
	}
	if !exists {
		return redirect(c, Base+"/setup")
	}
	f := authForm{page: page{Title: "Sign in"}, Token: formToken(c)}
	if c.Query("signed_out") != "" {
		f.Notice = "You are signed out."
	}
	return render(c, http.StatusOK, loginView(f))
}

func (u *UI) login(c *fiber.Ctx) error {
	f := authForm{page: page{Title: "Sign in"}, Token: formToken(c), Email: c.FormValue("email")}
	email := strings.ToLower(strings.TrimSpace(f.Email))
	if wait := u.takeLogin(c.IP(), email); wait > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait))
		f.Error = "Too many sign-in attempts. Wait " + strconv.Itoa(wait) + " seconds and try again."
		return render(c, http.StatusTooManyRequests, loginView(f))
	}
	ctx := c.UserContext()
	wait, err := u.accounts.Take(ctx, email, u.AccountFailures, u.AccountWindow, time.Now())
	if err != nil {
		return u.internal(c, err)
	}
	if wait > 0 {
		// Not logged with the email: the log should not collect what
		// strangers type. The address tells where the guessing comes from.
		u.log.Warn("admin sign-in refused: too many failed attempts for the account", "addr", c.IP(), "retry_after_s", wait)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait))
		f.Error = "Too many failed sign-ins for this account. Wait " + waitText(wait) + " and try again."
		return render(c, http.StatusTooManyRequests, loginView(f))
	}
	a, err := session.Verify(ctx, u.db.Reader, email, c.FormValue("password"))
	if errors.Is(err, session.ErrBadCredentials) {
		f.Error = "The email or password is not right."
		return render(c, http.StatusUnauthorized, loginView(f))
	}
	if err != nil {
		return u.internal(c, err)
	}
	if err := u.accounts.Reset(ctx, email); err != nil {
		return u.internal(c, err)
	}
	return u.signIn(c, a)
}

// waitText says a wait in seconds, or in minutes once it is long.
func waitText(s int) string {
	if s < 120 {
		return strconv.Itoa(s) + " seconds"
	}
	return strconv.Itoa((s+59)/60) + " minutes"
}

func (u *UI) signIn(c *fiber.Ctx, a *ent.AdminUser) error {
	tok, s, err := session.Start(c.UserContext(), u.db.Writer, a.ID)
	if err != nil {
		return u.internal(c, err)
	}
	setCookie(c, sessionCookie, tok, s.ExpiresAt)
	return redirect(c, Base+"/")
}

func (u *UI) logout(c *fiber.Ctx) error {
	if err := session.End(c.UserContext(), u.db.Writer, c.Cookies(sessionCookie)); err != nil {
		return u.internal(c, err)
	}
	clearCookie(c, sessionCookie)
	return redirect(c, Base+"/login?signed_out=1")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

const minPassword = session.MinPassword
