package rest

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
)

// exchange is what the middlewares learn about a request and the
// telemetry reads back, in one Locals slot instead of four. It comes from
// a pool: fasthttp closes every io.Closer among a request's values once
// the response is written, and Close puts it back.
type exchange struct {
	requestID   string
	principal   *access.Principal
	rateLimited bool
	authFailure string // the 401's code
}

const exchangeKey = "ledgerbase.exchange"

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

func (x *exchange) Close() error {
	*x = exchange{}
	exchanges.Put(x)
	return nil
}

// exchangeOf is c's exchange, made the first time it is asked.
func exchangeOf(c *fiber.Ctx) *exchange {
	if x, ok := c.Locals(exchangeKey).(*exchange); ok {
		return x
	}
	x := exchanges.Get().(*exchange)
	c.Locals(exchangeKey, x)
	return x
}

// RateLimited reports whether c was refused by the rate limiter.
func RateLimited(c *fiber.Ctx) bool { return exchangeOf(c).rateLimited }

// AuthFailure is the code of c's 401, or "".
func AuthFailure(c *fiber.Ctx) string { return exchangeOf(c).authFailure }
