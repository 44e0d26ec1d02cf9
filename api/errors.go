package api

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Error maps an error of the core to what a client is answered: a refusal
// as it is, a fault of the database as 507 storage_full or 503
// database_unavailable, a refusal of the data model as 400 or 409, and
// anything else as 500. /v1 and the admin UI map errors through it alike.
func (c *Core) Error(err error) *apierr.Error {
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
		c.Log.Warn("the database refused a value that request validation let through", "code", e.Code, "param", e.Param, "err", err)
		return e
	}
	return apierr.Internal(err)
}

// FaultMark is where a transport notes the database fault a request was
// answered with ("storage_full", "database_unavailable"), for its metrics.
const FaultMark = "ledgerbase.fault"

// Fault is the error answered when err is a fault of the database (507
// storage_full, 503 database_unavailable), nil for any other error. The
// first of an episode is logged at ERROR with attrs (the request's id,
// method and path), the rest at DEBUG.
func (c *Core) Fault(err error, attrs ...any) *apierr.Error {
	e, ok := apierr.As(err)
	if !ok || FaultOf(e) == database.NoFault {
		if e = faultError(err); e == nil {
			return nil
		}
	}
	c.NoteFault(e, attrs...)
	return e
}

// NoteFault logs e, an answer to a fault of the database, at ERROR at the
// start of its episode (at DEBUG after that).
func (c *Core) NoteFault(e *apierr.Error, attrs ...any) {
	f := FaultOf(e)
	if !c.faults.seen(f, time.Now()) {
		c.Log.Debug("request refused by a database fault", append(attrs, "code", e.Code, "err", e.Cause)...)
		return
	}
	msg := "the database is unavailable: requests that need it are answered 503 database_unavailable until it is back"
	if f == database.StorageFull {
		msg = "the database's storage is full: writes are answered 507 storage_full until space is freed; reads keep working"
	}
	c.Log.Error(msg, append(attrs, "err", e.Cause)...)
}

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

// FaultOf is the fault an answer reports.
func FaultOf(e *apierr.Error) database.Fault {
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

// faultLog remembers the episodes of database faults: a line per failed
// request would bury the one that tells the operator what is wrong.
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

// databaseRefusal maps a refusal of the data model (ent's validators, the
// database's constraints) to the client's 400 or 409, never a 500: it is
// the net under request validation. The message names no SQL.
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
