package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// toAPIError maps any error to what the client sees. This is the one place
// errors become HTTP.
func (s *Server) toAPIError(err error) *apierr.Error {
	if e, ok := apierr.As(err); ok {
		if e.Status >= 500 {
			if f := faultError(err); f != nil {
				return f // a 5xx made by a caller that saw a database error
			}
		}
		return e
	}
	if e := faultError(err); e != nil {
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
	if f := faultOf(e); f != database.NoFault {
		s.noteFault(c, f, e)
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

// FaultOf is the error the API answers when err is a fault of the database
// (507 storage_full, 503 database_unavailable), noted for c's metrics and
// logged once per episode as the API's own are; nil for any other error.
// The admin UI shows these faults as the API names them.
func (s *Server) FaultOf(c *fiber.Ctx, err error) *apierr.Error {
	e, ok := apierr.As(err)
	if !ok || faultOf(e) == database.NoFault {
		if e = faultError(err); e == nil {
			return nil
		}
	}
	s.noteFault(c, faultOf(e), e)
	return e
}

// DatabaseFault is the code of the database fault c was answered with
// ("storage_full", "database_unavailable"), or "".
func DatabaseFault(c *fiber.Ctx) string {
	f, _ := c.Locals(faultKey).(string)
	return f
}

const faultKey = "ledgerbase.fault"

// faultError is the answer to a fault of the database, nil for any other
// error: the request was fine, and the same request succeeds once the
// fault ends.
func faultError(err error) *apierr.Error {
	switch database.FaultOf(err) {
	case database.StorageFull:
		return apierr.StorageFull(err)
	case database.Unavailable:
		return apierr.DatabaseUnavailable(err)
	}
	return nil
}

// faultOf is the fault an answer reports.
func faultOf(e *apierr.Error) database.Fault {
	switch e.Code {
	case database.StorageFull.String():
		return database.StorageFull
	case database.Unavailable.String():
		return database.Unavailable
	}
	return database.NoFault
}

// faultQuiet is how long a fault must go unseen for its episode to end.
const faultQuiet = time.Minute

// faultLog remembers the episodes of database faults: a full disk or an
// outage fails every request while it lasts, and a line per request would
// bury the one that tells the operator what is wrong.
type faultLog struct {
	mu   sync.Mutex
	last [3]time.Time // by database.Fault: when it was last seen
}

// seen records f now and reports whether it starts an episode.
func (l *faultLog) seen(f database.Fault, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := now.Sub(l.last[f]) >= faultQuiet
	l.last[f] = now
	return first
}

// noteFault logs a fault at ERROR at the start of its episode (at DEBUG
// after that) and marks c with it for the metrics.
func (s *Server) noteFault(c *fiber.Ctx, f database.Fault, e *apierr.Error) {
	c.Locals(faultKey, f.String())
	if !s.faults.seen(f, time.Now()) {
		s.log.Debug("request refused by a database fault", "request_id", requestID(c), "code", e.Code, "err", e.Cause)
		return
	}
	msg := "the database is unavailable: requests that need it are answered 503 database_unavailable until it is back"
	if f == database.StorageFull {
		msg = "the database's storage is full: writes are answered 507 storage_full until space is freed; reads keep working"
	}
	s.log.Error(msg, "request_id", requestID(c), "method", c.Method(), "path", c.Path(), "err", e.Cause)
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
