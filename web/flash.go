package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A secret a form makes (an API key's, a gift card's code) reaches the page
// the form redirects to in a cookie sealed with a key derived from the
// session's token, which the server keeps only a hash of: no other session
// can open it, it is in no URL or log, and any process can show it. The
// page that shows it clears it.

const (
	flashCookie = "lb_flash"
	flashTTL    = 2 * time.Minute
)

type flash struct {
	Page   string `json:"p"` // the address (path and query) of the page that shows it
	Secret string `json:"s"`
	Until  int64  `json:"u"` // Unix seconds
}

// flashAEAD is the session's sealing key; nil outside a session.
func flashAEAD(c *fiber.Ctx) cipher.AEAD {
	tok := c.Cookies(sessionCookie)
	if tok == "" {
		return nil
	}
	mac := hmac.New(sha256.New, []byte(tok))
	mac.Write([]byte("ledgerbase admin flash v1"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil
	}
	return aead
}

func flashCookieOf(c *fiber.Ctx, path, value string, expires time.Time) *fiber.Cookie {
	return &fiber.Cookie{Name: flashCookie, Value: value, Path: path, Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"}
}

// setFlash has the page at to (a path and query) show secret, once.
func (u *UI) setFlash(c *fiber.Ctx, to, secret string) {
	aead := flashAEAD(c)
	if aead == nil {
		return
	}
	path, _, _ := strings.Cut(to, "?")
	until := time.Now().Add(flashTTL)
	plain, _ := json.Marshal(flash{Page: to, Secret: secret, Until: until.Unix()})
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // the system's randomness failed
	}
	sealed := aead.Seal(nonce, nonce, plain, []byte(path))
	c.Cookie(flashCookieOf(c, path, base64.RawURLEncoding.EncodeToString(sealed), until))
}

// takeFlash is the secret this page shows once ("" for none); the cookie
// is cleared whatever it held.
func (u *UI) takeFlash(c *fiber.Ctx) string {
	v := c.Cookies(flashCookie)
	if v == "" {
		return ""
	}
	path := c.Path()
	c.Cookie(flashCookieOf(c, path, "", time.Unix(0, 0)))
	aead := flashAEAD(c)
	sealed, err := base64.RawURLEncoding.DecodeString(v)
	if aead == nil || err != nil || len(sealed) < aead.NonceSize() {
		return ""
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(path))
	var f flash
	if err != nil || json.Unmarshal(plain, &f) != nil || f.Page != c.OriginalURL() || time.Now().Unix() > f.Until {
		return ""
	}
	return f.Secret
}
