package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// saneRequestID accepts a client's id if it is short and plain.
func saneRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// requestID returns the request's id, assigning one (and the response
// header) the first time it is asked.
func requestID(c *fiber.Ctx) string {
	x := exchangeOf(c)
	if x.requestID != "" {
		return x.requestID
	}
	id := string(c.Request().Header.Peek(fiber.HeaderXRequestID))
	if !saneRequestID(id) {
		id = ids.QuickAt("req", Arrival(c))
	}
	x.requestID = id
	c.Response().Header.SetCanonical(hdrRequestID, []byte(id))
	return id
}

// hdrRequestID is X-Request-ID as fasthttp writes it (it normalizes names).
var hdrRequestID = []byte("X-Request-Id")

// RequestID is the request id of c, for other packages' logs.
func RequestID(c *fiber.Ctx) string { return requestID(c) }
