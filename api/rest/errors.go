package rest

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// toAPIError maps any error to what the client sees: fiber's own errors
// (a body too large, a request too slow) here, every other by the core
// (api.Core.Error), as the admin UI maps them.
func (s *Server) toAPIError(err error) *apierr.Error {
	if _, ok := apierr.As(err); !ok {
		if e := s.fiberError(err); e != nil {
			return e
		}
	}
	return s.Error(err)
}

// fiberError is the answer to an error of fiber's, nil for any other.
func (s *Server) fiberError(err error) *apierr.Error {
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return nil
	}
	switch fe.Code {
	case http.StatusRequestEntityTooLarge:
		return apierr.New(fe.Code, "payload_too_large", "the request body is larger than %s", byteSize(s.cfg.BodyLimit))
	case http.StatusNotFound:
		return apierr.New(fe.Code, "route_not_found", "no such route; see /v1/openapi.json")
	case http.StatusMethodNotAllowed:
		return apierr.New(fe.Code, "method_not_allowed", "method not allowed")
	case http.StatusUnsupportedMediaType:
		return apierr.New(fe.Code, "unsupported_media_type", "send JSON with 'Content-Type: application/json'")
	case http.StatusRequestTimeout:
		return apierr.New(fe.Code, "request_timeout", "the request took too long to arrive")
	case http.StatusServiceUnavailable:
		return apierr.Unavailable(err)
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return apierr.New(fe.Code, "invalid_request", "the request could not be read")
	}
	return nil
}

// errorHandler writes every error response of the app.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	e := s.toAPIError(err)
	rid := requestID(c)
	if f := api.FaultOf(e); f != database.NoFault {
		c.Locals(api.FaultMark, f.String())
		s.NoteFault(e, "request_id", rid, "method", c.Method(), "path", c.Path())
	} else if e.Status >= 500 {
		s.log.Error("request failed", "request_id", rid, "method", c.Method(), "path", c.Path(), "status", e.Status, "err", err)
	} else if e.Cause != nil {
		s.log.Debug("request refused", "request_id", rid, "code", e.Code, "err", e.Cause)
	}
	if e.Allow != "" {
		c.Set(fiber.HeaderAllow, e.Allow)
	}
	if e.RetryAfter > 0 {
		var buf [20]byte
		c.Response().Header.SetCanonical(hdrRetryAfter, strconv.AppendInt(buf[:0], int64(e.RetryAfter), 10))
	}
	var buf [256]byte
	c.Response().SetBody(e.AppendBody(buf[:0], rid)) // copied into fasthttp's pooled buffer
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	c.Status(e.Status)
	return nil
}

// DatabaseFault is the code of the database fault c was answered with
// ("storage_full", "database_unavailable"), or "", by the API or the
// admin UI.
func DatabaseFault(c *fiber.Ctx) string {
	f, _ := c.Locals(api.FaultMark).(string)
	return f
}

var hdrRetryAfter = []byte(fiber.HeaderRetryAfter)

// byteSize says a limit the way a person reads it: 1 MiB, 512 KiB, 100 bytes.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
