package rest_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// answerTo renders err through the server's one error handler, as a
// request that failed with it would be answered.
func answerTo(t *testing.T, env *apitest.Env, err error) (int, map[string]any) {
	t.Helper()
	app := env.Server.App
	c := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(c)
	if herr := app.Config().ErrorHandler(c, err); herr != nil {
		t.Fatal(herr)
	}
	var b struct {
		Error map[string]any `json:"error"`
	}
	if jerr := json.Unmarshal(c.Response().Body(), &b); jerr != nil || b.Error == nil {
		t.Fatalf("not an error body: %s", c.Response().Body())
	}
	return c.Response().StatusCode(), b.Error
}

// The net under request validation: real refusals of the data model —
// ent's validators, the database's constraints and data checks, on
// whichever database the harness runs — are the client's 400 or 409,
// never a 500, and show no SQL.
func TestDatabaseRefusalsAre4xx(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	ctx := context.Background()
	db := env.DB.Writer
	ven, err := db.Vendor.Create().SetWorkspaceID(ws.ID).SetName("V").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Category.Create().SetWorkspaceID(ws.ID).SetName("C").SetSlug("c").Save(ctx); err != nil {
		t.Fatal(err)
	}
	type refusal struct {
		what   string
		err    error
		status int
		code   string
	}
	var cases []refusal
	add := func(what string, status int, code string, err error) {
		if err == nil {
			t.Fatalf("%s: the database accepted it", what)
		}
		cases = append(cases, refusal{what, err, status, code})
	}
	_, err = db.Customer.Create().SetWorkspaceID(ws.ID).SetName("").Save(ctx)
	add("ent NotEmpty", 400, "invalid_request", err)
	_, err = db.Vendor.Create().SetWorkspaceID(ws.ID).SetName("V").SetCurrencyCode("EURO").Save(ctx)
	add("ent MaxLen", 400, "invalid_request", err)
	_, err = db.Category.Create().SetID(ids.New("cat")).SetWorkspaceID(ws.ID).SetName("C2").SetSlug("c").Save(ctx)
	add("unique index", 409, "duplicate", err)
	_, err = env.DB.WritePool.ExecContext(ctx, "UPDATE vendors SET name = NULL WHERE id = $1", ven.ID)
	add("NOT NULL", 400, "invalid_request", err)
	if apitest.Backend() == "postgres" {
		_, err = env.DB.WritePool.ExecContext(ctx, "UPDATE vendors SET notes = $1 WHERE id = $2", "a\x00b", ven.ID)
		add("NUL in text (22021)", 400, "invalid_request", err)
	}
	cli, err := db.Customer.Create().SetWorkspaceID(ws.ID).SetName("C").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adr, err := db.Address.Create().SetWorkspaceID(ws.ID).SetClientID(cli.ID).SetName("A").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.DB.WritePool.ExecContext(ctx, "UPDATE addresses SET client_id = 'cli_nope' WHERE id = $1", adr.ID)
	add("foreign key", 400, "invalid_request", err)
	for _, c := range cases {
		status, e := answerTo(t, env, c.err)
		if status != c.status || e["code"] != c.code {
			t.Errorf("%s: answered %d %v, want %d %s (%v)", c.what, status, e["code"], c.status, c.code, c.err)
		}
		for _, leak := range []string{"UPDATE", "INSERT", "vendors", "constraint"} {
			if msg, _ := e["message"].(string); strings.Contains(msg, leak) {
				t.Errorf("%s: the message shows %q: %s", c.what, leak, msg)
			}
		}
	}
}

// Faults of the database are not the request's: a full disk is 507
// storage_full and an unreachable database or a cut connection 503
// database_unavailable with Retry-After, however the error is wrapped
// (a 5xx made by a caller included), and their messages show no SQL or
// address. Refusals and bugs keep their own answers. The real faults are
// in cmd/ledgerbase's outage tests; this holds every shape the drivers
// give them.
func TestDatabaseFaultsAreRetryable(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		what   string
		err    error
		status int
		code   string
	}{
		{"SQLITE_FULL", fmt.Errorf("ent: %w", sqlite3.Error{Code: sqlite3.ErrFull}), 507, "storage_full"},
		{"SQLITE_IOERR with ENOSPC", sqlite3.Error{Code: sqlite3.ErrIoErr, ExtendedCode: sqlite3.ErrIoErrWrite, SystemErrno: syscall.ENOSPC}, 507, "storage_full"},
		{"ENOSPC on the WAL", &os.PathError{Op: "write", Path: "/data/ledgerbase.db-wal", Err: syscall.ENOSPC}, 507, "storage_full"},
		{"PostgreSQL disk_full", &pgconn.PgError{Code: "53100", Message: "could not extend file"}, 507, "storage_full"},
		{"admin_shutdown", &pgconn.PgError{Code: "57P01", Severity: "FATAL"}, 503, "database_unavailable"},
		{"cannot_connect_now", &pgconn.PgError{Code: "57P03", Severity: "FATAL"}, 503, "database_unavailable"},
		{"connection_failure", &pgconn.PgError{Code: "08006"}, 503, "database_unavailable"},
		{"connection refused", opErr, 503, "database_unavailable"},
		{"unexpected EOF", errors.Join(io.ErrUnexpectedEOF, errors.New("failed to deallocate cached statement(s)")), 503, "database_unavailable"},
		{"conn closed", fmt.Errorf("commit: %w", pgconn.ErrConnClosed), 503, "database_unavailable"},
		{"bad connection", driver.ErrBadConn, 503, "database_unavailable"},
		{"connection done", sql.ErrConnDone, 503, "database_unavailable"},
		{"a caller's 500", apierr.Internal(fmt.Errorf("render: %w", io.EOF)), 503, "database_unavailable"},
		{"a caller's 503", apierr.Unavailable(&pgconn.PgError{Code: "57P01"}), 503, "database_unavailable"},
		{"a refusal stays", &pgconn.PgError{Code: "23505"}, 409, "duplicate"},
		{"a bug stays", errors.New("nil map"), 500, "internal_error"},
		{"a client that left", fmt.Errorf("query: %w", context.Canceled), 500, "internal_error"},
		{"SQLITE_BUSY stays", sqlite3.Error{Code: sqlite3.ErrBusy}, 500, "internal_error"},
	}
	for _, c := range cases {
		status, e := answerTo(t, env, c.err)
		if status != c.status || e["code"] != c.code {
			t.Errorf("%s: answered %d %v, want %d %s", c.what, status, e["code"], c.status, c.code)
		}
		msg, _ := e["message"].(string)
		for _, leak := range []string{"SQLSTATE", "tcp", "wal", "extend", "EOF"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: the message shows %q: %s", c.what, leak, msg)
			}
		}
	}
	app := env.Server.App
	c := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(c)
	if err := app.Config().ErrorHandler(c, opErr); err != nil {
		t.Fatal(err)
	}
	if ra := string(c.Response().Header.Peek("Retry-After")); ra == "" || ra == "0" {
		t.Errorf("503 database_unavailable with Retry-After %q", ra)
	}
	if d := rest.DatabaseFault(c); d != "database_unavailable" {
		t.Errorf("the response is marked with fault %q for the metrics", d)
	}
}
