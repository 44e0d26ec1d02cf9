// Package apierr holds the errors /v1 answers with: a code, a message and
// optionally the offending parameter (api.Core.Error maps every error to one).
package apierr

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ledgerbase/ledgerbase/api/jsonout"
)

// Error is an error a client can act on.
type Error struct {
	Status  int
	Code    string
	Message string
	Param   string
	// Allow lists the methods of a 405; RetryAfter the seconds of a 429.
	Allow      string
	RetryAfter int
	// Cause is logged, never shown.
	Cause error
	// pre is the body up to the request id, for errors made once and
	// shared (they must not be modified).
	pre []byte
}

// AppendBody appends the JSON body of the error as the client sees it.
func (e *Error) AppendBody(b []byte, requestID string) []byte {
	if e.pre != nil {
		b = append(b, e.pre...)
	} else {
		b = e.appendHead(b)
	}
	b = append(b, `,"request_id":`...)
	b = jsonout.String(b, requestID)
	if e.Param != "" {
		b = append(b, `,"param":`...)
		b = jsonout.String(b, e.Param)
	}
	return append(b, "}}"...)
}

func (e *Error) appendHead(b []byte) []byte {
	b = append(b, `{"error":{"code":`...)
	b = jsonout.String(b, e.Code)
	b = append(b, `,"message":`...)
	return jsonout.String(b, e.Message)
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// As returns err as an *Error when it is one.
func As(err error) (*Error, bool) {
	if e, ok := err.(*Error); ok { // the usual case, without errors.As's reflection
		return e, true
	}
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func New(status int, code, format string, a ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

// Invalid is a 400 naming the parameter at fault.
func Invalid(param, format string, a ...any) *Error {
	e := New(http.StatusBadRequest, "invalid_request", format, a...)
	e.Param = param
	return e
}

func InvalidJSON(format string, a ...any) *Error {
	return New(http.StatusBadRequest, "invalid_json", format, a...)
}

func NotFound(what string) *Error {
	return New(http.StatusNotFound, "not_found", "no such %s", what)
}

func RouteNotFound(method, path string) *Error {
	return New(http.StatusNotFound, "route_not_found", "no route %s %s; see /v1/openapi.json", method, path)
}

func MethodNotAllowed(allow string) *Error {
	e := New(http.StatusMethodNotAllowed, "method_not_allowed", "this route allows %s", allow)
	e.Allow = allow
	return e
}

// Conflict is a 409 of one of DESIGN.md's kinds.
func Conflict(code, format string, a ...any) *Error {
	return New(http.StatusConflict, code, format, a...)
}

func Unauthorized(code, msg string) *Error { return New(http.StatusUnauthorized, code, "%s", msg) }

func Forbidden(code, format string, a ...any) *Error {
	return New(http.StatusForbidden, code, format, a...)
}

// rateLimited are RateLimited's errors for the waits a per-minute bucket
// can ask for (up to a minute), made and rendered once: a 429 must cost
// almost nothing. They are shared, so nobody may modify them.
var rateLimited = func() []*Error {
	m := make([]*Error, 61)
	for i := range m {
		m[i] = rateLimitedError(i)
		m[i].pre = m[i].appendHead(nil)
	}
	return m
}()

func rateLimitedError(retryAfter int) *Error {
	unit := "seconds"
	if retryAfter == 1 {
		unit = "second"
	}
	e := New(http.StatusTooManyRequests, "rate_limited", "rate limit exceeded; retry after %d %s", retryAfter, unit)
	e.RetryAfter = retryAfter
	return e
}

// RateLimited is a 429; the error may be shared: do not modify it.
func RateLimited(retryAfter int) *Error {
	if retryAfter >= 0 && retryAfter < len(rateLimited) {
		return rateLimited[retryAfter]
	}
	return rateLimitedError(retryAfter)
}

func Internal(cause error) *Error {
	e := New(http.StatusInternalServerError, "internal_error", "something went wrong on our side; quote the request id if you contact support")
	e.Cause = cause
	return e
}

func Unavailable(cause error) *Error {
	e := New(http.StatusServiceUnavailable, "unavailable", "the service is temporarily unavailable; retry with backoff")
	e.Cause = cause
	return e
}

// DatabaseRetryAfter is the wait, in seconds, that a 503
// database_unavailable suggests: about a database's restart.
const DatabaseRetryAfter = 5

// StorageFull is a 507: the database has no room left, and nothing of the
// request was written. Reads keep working; writes resume once an operator
// frees space.
func StorageFull(cause error) *Error {
	e := New(http.StatusInsufficientStorage, "storage_full",
		"the server's storage is full, so nothing was written; retry once its operator has freed space")
	e.Cause = cause
	return e
}

// DatabaseUnavailable is a 503: the database cannot be reached or the
// connection to it was cut. A write cut during its commit may have
// committed; a retry under the same Idempotency-Key answers it once.
func DatabaseUnavailable(cause error) *Error {
	e := New(http.StatusServiceUnavailable, "database_unavailable",
		"the database is unavailable; retry after %d seconds (a POST with the same Idempotency-Key, so it is not written twice)", DatabaseRetryAfter)
	e.RetryAfter = DatabaseRetryAfter
	e.Cause = cause
	return e
}
