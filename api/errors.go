package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
)

// toAPIError maps any error to what the client sees. This is the one place
// errors become HTTP.
func (s *Server) toAPIError(err error) *apierr.Error {
	if e, ok := apierr.As(err); ok {
		return e
	}
	if e := databaseRefusal(err); e != nil {
		// Validation should have refused this first: the declarations in
		// api/resource miss a constraint of the data model. Say so loudly.
		s.log.Warn("the database refused a value that request validation let through", "code", e.Code, "param", e.Param, "err", err)
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
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
	}
	return apierr.Internal(err)
}

// errorHandler writes every error response of the app.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	e := s.toAPIError(err)
	rid := requestID(c)
	if e.Status >= 500 {
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

// databaseRefusal maps a refusal of the data model (ent's validators, the
// database's constraints and data checks) to the client's 400 or 409: the
// request carried a value the model cannot hold, which is the client's to
// fix, never a 500. Request validation refuses these first; this is the
// net under it. The message names no SQL.
func databaseRefusal(err error) *apierr.Error {
	var ve *ent.ValidationError
	if errors.As(err, &ve) {
		e := apierr.Invalid(ve.Name, "%s has a value that cannot be stored", ve.Name)
		e.Cause = err
		return e
	}
	invalid := func(param string) *apierr.Error {
		e := apierr.Invalid(param, "a value of the request cannot be stored")
		if param != "" {
			e.Message = param + " has a value that cannot be stored"
		}
		e.Cause = err
		return e
	}
	duplicate := func() *apierr.Error {
		e := apierr.Conflict("duplicate", "another record already has a value of the request that must be unique")
		e.Cause = err
		return e
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "23505": // unique_violation
			return duplicate()
		case strings.HasPrefix(pg.Code, "22"), strings.HasPrefix(pg.Code, "23"):
			// data exceptions (22001 too long, 22021 NUL, 22P05 NUL in jsonb,
			// 22003 out of range, 22007/22008 dates) and the other integrity
			// constraints (23502 not null, 23503 foreign key, 23514 check)
			return invalid(pg.ColumnName)
		}
		return nil
	}
	var lite sqlite3.Error
	if errors.As(err, &lite) {
		switch {
		case lite.ExtendedCode == sqlite3.ErrConstraintUnique || lite.ExtendedCode == sqlite3.ErrConstraintPrimaryKey:
			return duplicate()
		case lite.Code == sqlite3.ErrConstraint, lite.Code == sqlite3.ErrTooBig, lite.Code == sqlite3.ErrMismatch, lite.Code == sqlite3.ErrRange:
			return invalid("")
		}
	}
	return nil
}
