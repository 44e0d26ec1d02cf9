package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

func TestMain(m *testing.M) {
	runCLIChildIfAsked()
	apitest.Main(m)
}

// running is an appliance serving on a loopback port.
type running struct {
	a          *appliance
	url        string // main listener, http:// or https://
	metricsURL string // separate metrics listener, when configured
	env        *apitest.Env
	served     chan error // what serve returned, once it has
}

// testConfig is the default configuration on a free loopback port, with
// a short key cache so tests see key changes quickly.
func testConfig() Config {
	cfg := defaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.KeyCacheTTL = 200 * time.Millisecond
	cfg.Log.Access = false
	cfg.ShutdownGrace = 5 * time.Second
	return cfg
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// start runs an appliance on db until the test ends.
func start(t *testing.T, cfg Config, log *slog.Logger, db *database.DB, mounts ...func(*fiber.App)) *running {
	t.Helper()
	a, err := newAppliance(cfg, log, db, mounts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, mln, err := a.listen()
	if err != nil {
		t.Fatal(err)
	}
	r := &running{a: a, served: make(chan error, 1)}
	go func() { r.served <- a.serve(ln, mln) }()
	t.Cleanup(func() {
		_ = a.app.ShutdownWithTimeout(5 * time.Second)
		if a.metrics != nil {
			_ = a.metrics.Close()
		}
	})
	scheme := "http"
	if cfg.TLS.Cert != "" {
		scheme = "https"
	}
	r.url = scheme + "://" + ln.Addr().String()
	if mln != nil {
		r.metricsURL = "http://" + mln.Addr().String()
	}
	r.env = &apitest.Env{URL: r.url, DB: db, Server: a.api, Client: &http.Client{Timeout: 30 * time.Second}}
	return r
}

// ownDB opens a database handle of the test's own on the package's
// migrated database, for tests that close it.
func ownDB(t *testing.T) *database.DB {
	t.Helper()
	_, url := apitest.DB(t)
	db, err := database.Open(context.Background(), url, database.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
