package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// Fault is a failure of the database itself, not of the request: the
// request was fine and the same request succeeds once the fault ends.
type Fault int

const (
	// NoFault: the error is something else (a refusal, a bug).
	NoFault Fault = iota
	// StorageFull: the database has no room to write (SQLite's SQLITE_FULL,
	// the OS's ENOSPC or EDQUOT under it, PostgreSQL's 53100 disk_full). Nothing was
	// written; reads still work.
	StorageFull
	// Unavailable: the database cannot be reached, or the connection was
	// cut while the request used it (a restart, a crash, a network fault).
	// A write cut during its commit may have committed.
	Unavailable
)

func (f Fault) String() string {
	switch f {
	case StorageFull:
		return "storage_full"
	case Unavailable:
		return "database_unavailable"
	}
	return ""
}

// FaultOf classifies err, an error of a database call, wrapped or joined
// however deep.
func FaultOf(err error) Fault {
	// A context's end is the caller's (a client that left, a deadline),
	// even where it surfaces as a net.Error.
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return NoFault
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return StorageFull
	}
	var lite sqlite3.Error
	if errors.As(err, &lite) {
		switch {
		case lite.Code == sqlite3.ErrFull, lite.SystemErrno == syscall.ENOSPC, lite.SystemErrno == syscall.EDQUOT:
			return StorageFull
		}
		return NoFault
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "53100": // disk_full
			return StorageFull
		case pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
			pg.Code == "53300",               // too_many_connections
			strings.HasPrefix(pg.Code, "08"): // connection exceptions
			return Unavailable
		}
		return NoFault
	}
	var connect *pgconn.ConnectError
	var netErr *net.OpError // a socket's dial, read or write
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr),
		errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Unavailable
	}
	return NoFault
}
