// Package apitest starts real Ledgerbase servers on loopback ports for
// tests, on SQLite or PostgreSQL (PostgresEnv). Each test package shares
// one database; tests isolate themselves in workspaces of their own.
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/openapi"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// PostgresEnv names the variable holding the PostgreSQL URL for tests.
const PostgresEnv = "LEDGERBASE_TEST_POSTGRES_URL"

var (
	shared     *database.DB
	sharedURL  string
	sharedErr  error
	sharedOnce sync.Once
	cleanup    func()
)

// Main runs a test package's tests and then drops its database. Use it as
// `func TestMain(m *testing.M) { apitest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	os.Exit(code)
}

// DB returns the package's shared, migrated database and its URL.
func DB(t testing.TB) (*database.DB, string) {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedURL, sharedErr = open() })
	if sharedErr != nil {
		t.Fatalf("apitest: database: %v", sharedErr)
	}
	return shared, sharedURL
}

// Backend names the database tests run on: "sqlite" or "postgres".
func Backend() string {
	if os.Getenv(PostgresEnv) != "" {
		return "postgres"
	}
	return "sqlite"
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func open() (*database.DB, string, error) {
	ctx := context.Background()
	var dsn string
	var opts database.Options
	var drop func()
	if pg := os.Getenv(PostgresEnv); pg != "" {
		// A schema per test process keeps concurrent packages apart.
		admin, err := sql.Open("pgx", pg)
		if err != nil {
			return nil, "", err
		}
		schema := "lbtest_" + randomName()
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			admin.Close()
			return nil, "", fmt.Errorf("create schema on %s: %w", pg, err)
		}
		u, err := url.Parse(pg)
		if err != nil {
			return nil, "", err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		dsn, opts.MaxOpenConns = u.String(), 20
		drop = func() {
			_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		}
	} else {
		dir, err := os.MkdirTemp("", "ledgerbase-test-")
		if err != nil {
			return nil, "", err
		}
		dsn = "sqlite:" + filepath.Join(dir, "test.db")
		drop = func() { os.RemoveAll(dir) }
	}
	db, err := database.Open(ctx, dsn, opts)
	if err != nil {
		return nil, "", err
	}
	cleanup = func() { db.Close(); drop() }
	return db, dsn, db.Migrate(ctx, records.Searches(resource.All))
}

// Env is one running server.
type Env struct {
	URL    string
	DB     *database.DB
	Server *rest.Server
	Client *http.Client
}

// Option adjusts the server's configuration before it starts.
type Option func(*rest.Config)

// WithRateLimits sets per-plan limits.
func WithRateLimits(m map[resource.Plan]int) Option {
	return func(c *rest.Config) { c.RateLimits = m }
}

// WithSharedRateLimits keeps rate-limit buckets in the database.
func WithSharedRateLimits() Option {
	return func(c *rest.Config) { c.SharedRateLimits = true }
}

// WithRecordCache sizes the render cache of records (negative: off).
func WithRecordCache(bytes int) Option {
	return func(c *rest.Config) { c.RecordCacheBytes = bytes }
}

// Start runs a server on a loopback port until the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	db, _ := DB(t)
	return Serve(t, NewServer(t, db, opts...))
}

// NewServer prepares a server on db as serve does, for Serve.
func NewServer(t testing.TB, db *database.DB, opts ...Option) *rest.Server {
	t.Helper()
	cfg := rest.Config{Config: api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), KeyCacheTTL: 200 * time.Millisecond}}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := rest.New(db, cfg)
	if err != nil {
		t.Fatalf("apitest: server: %v", err)
	}
	if err := openapi.Register(srv); err != nil {
		t.Fatalf("apitest: openapi: %v", err)
	}
	return srv
}

// Serve finishes and runs a prepared server.
func Serve(t testing.TB, srv *rest.Server) *Env {
	t.Helper()
	app := srv.Finish()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("apitest: listen: %v", err)
	}
	go func() { _ = app.Listener(ln) }()
	env := &Env{URL: "http://" + ln.Addr().String(), DB: srv.DB, Server: srv,
		Client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		// Idle keep-alive connections would hold shutdown for its whole timeout.
		env.Client.CloseIdleConnections()
		_ = app.ShutdownWithTimeout(5 * time.Second)
	})
	return env
}

// Workspace is a test workspace with an admin key.
type Workspace struct {
	ID  string
	Key string // admin secret
	env *Env
}

// Workspace creates a workspace on plan with the given commerce settings.
func (e *Env) Workspace(t testing.TB, plan string, commerceMode, commerceModule bool) *Workspace {
	t.Helper()
	ws, err := access.NewWorkspace(context.Background(), e.DB.Writer, "Test "+randomName(), plan, commerceMode, commerceModule)
	if err != nil {
		t.Fatalf("apitest: workspace: %v", err)
	}
	w := &Workspace{ID: ws.ID, env: e}
	w.Key = w.NewKey(t, access.KeySpec{Role: access.RoleAdmin, RateLimit: intp(0)})
	return w
}

func intp(n int) *int { return &n }

// NewKey mints another key of the workspace.
func (w *Workspace) NewKey(t testing.TB, s access.KeySpec) string {
	t.Helper()
	s.WorkspaceID = w.ID
	secret, _, err := access.NewKey(context.Background(), w.env.DB.Writer, s)
	if err != nil {
		t.Fatalf("apitest: key: %v", err)
	}
	return secret
}

// Role creates a custom role from "clients:read,invoices:write".
func (w *Workspace) Role(t testing.TB, name, grants string) {
	t.Helper()
	g, err := access.ParseGrantList(grants)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := access.NewRole(context.Background(), w.env.DB.Writer, w.ID, name, g); err != nil {
		t.Fatal(err)
	}
}

// Response is a received response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.Body)
	}
}

// Do sends a request. body may be nil, a string or []byte (sent as is), or
// any value (sent as JSON). headers are name, value pairs.
func (e *Env) Do(t testing.TB, method, path, key string, body any, headers ...string) *Response {
	t.Helper()
	var sent []byte
	isJSON := body != nil
	switch b := body.(type) {
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	case nil:
	default:
		var err error
		if sent, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	var rd io.Reader
	if isJSON {
		rd = bytes.NewReader(sent)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.Client.Do(req)
	// The server answers an oversized request (413, 431) before reading it
	// all and closes the connection; the client may then see the reset
	// while still sending instead of the answer. Send it again.
	oversized := len(sent) > 1<<20 || len(req.URL.RequestURI()) > 8192
	for attempt := 0; err != nil && oversized && attempt < 20; attempt++ {
		if isJSON {
			req.Body = io.NopCloser(bytes.NewReader(sent))
		}
		res, err = e.Client.Do(req)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, req, sent, res, b)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Get is Do with GET.
func (e *Env) Get(t testing.TB, path, key string) *Response {
	t.Helper()
	return e.Do(t, "GET", path, key, nil)
}

// WantError checks a response is an error of status and code whose body
// has a message and the request id of the X-Request-Id header.
func (r *Response) WantError(t testing.TB, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var b struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil || b.Error == nil {
		t.Fatalf("not an error body: %s", r.Body)
	}
	if b.Error["code"] != code {
		t.Fatalf("code %v, want %s: %s", b.Error["code"], code, r.Body)
	}
	if m, _ := b.Error["message"].(string); m == "" {
		t.Fatalf("error without a message: %s", r.Body)
	}
	rid, _ := b.Error["request_id"].(string)
	if rid == "" || rid != r.Header.Get("X-Request-Id") {
		t.Fatalf("request_id %q does not match X-Request-Id %q", rid, r.Header.Get("X-Request-Id"))
	}
	return b.Error
}

// WantStatus fails unless the response has the status.
func (r *Response) WantStatus(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}
