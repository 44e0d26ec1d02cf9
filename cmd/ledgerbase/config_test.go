package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// parseServe parses args as `ledgerbase serve ARGS` would and loads the
// configuration with environ as the process environment.
func parseServe(t *testing.T, environ []string, args ...string) (Config, error) {
	t.Helper()
	cmd, _, err := root().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return loadConfig(cmd.Flags(), environ)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPrecedenceIsFileThenEnvThenFlag(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "ledgerbase.yaml", `
addr: 0.0.0.0:1111
database:
  url: sqlite:/file/db.sqlite
  max_open_conns: 7
rate_limit:
  growth: 42
  business: 4242
log:
  level: debug
  format: json
read_timeout: 11s
tls:
`)
	env := []string{
		"LEDGERBASE_ADDR=0.0.0.0:2222",
		"LEDGERBASE_DATABASE_URL=sqlite:/env/db.sqlite",
		"LEDGERBASE_RATE_LIMIT_BUSINESS=77",
		"LEDGERBASE_LOG_LEVEL=warn",
		"LEDGERBASE_SHUTDOWN_GRACE=3s",
		"LEDGERBASE_METRICS_ENABLED=false",
		"LEDGERBASE_TEST_POSTGRES_URL=postgres://ignored", // not a setting
		"OTHER=1",
	}
	cfg, err := parseServe(t, env, "--config", file, "--addr", "127.0.0.1:3333", "--log-level", "error", "--shutdown-delay", "4s")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr (flag over env over file)", cfg.Addr, "127.0.0.1:3333"},
		{"log.level (flag over env over file)", cfg.Log.Level, "error"},
		{"database.url (env over file)", cfg.Database.URL, "sqlite:/env/db.sqlite"},
		{"rate_limit.business (env over file)", cfg.RateLimit.Business, 77},
		{"rate_limit.growth (file)", cfg.RateLimit.Growth, 42},
		{"database.max_open_conns (file)", cfg.Database.MaxOpenConns, 7},
		{"log.format (file)", cfg.Log.Format, "json"},
		{"read_timeout (file)", cfg.ReadTimeout, 11 * time.Second},
		{"shutdown_grace (env)", cfg.ShutdownGrace, 3 * time.Second},
		{"metrics.enabled (env)", cfg.Metrics.Enabled, false},
		{"shutdown_delay (flag)", cfg.ShutdownDelay, 4 * time.Second},
		{"rate_limit.starter (default)", cfg.RateLimit.Starter, 120},
		{"write_timeout (default)", cfg.WriteTimeout, 60 * time.Second},
		{"body_limit (default)", cfg.BodyLimit, 1 << 20},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := cfg.rateLimits(); got[resource.Growth] != 42 || got[resource.Business] != 77 {
		t.Errorf("rate limits by plan %v", got)
	}

	// The root's --database-url flag beats the environment too.
	cfg, err = parseServe(t, env, "--config", file, "--database-url", "sqlite:/flag/db.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database.URL != "sqlite:/flag/db.sqlite" || cfg.Addr != "0.0.0.0:2222" {
		t.Errorf("database.url %q addr %q", cfg.Database.URL, cfg.Addr)
	}
}

func TestConfigDefaultsAndTheConfigVariable(t *testing.T) {
	t.Parallel()
	cfg, err := parseServe(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:8080" || cfg.Database.URL != database.DefaultURL || !cfg.Metrics.Enabled || cfg.Demo {
		t.Errorf("defaults: %+v", cfg)
	}
	file := writeFile(t, "c.yaml", "demo: true\nmetrics:\n  addr: 127.0.0.1:9999\n")
	cfg, err = parseServe(t, []string{"LEDGERBASE_CONFIG=" + file})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Demo || cfg.Metrics.Addr != "127.0.0.1:9999" {
		t.Errorf("LEDGERBASE_CONFIG was not read: %+v", cfg)
	}
	cfg, err = parseServe(t, []string{"LEDGERBASE_DEMO=false"}, "--config", file, "--demo")
	if err != nil || !cfg.Demo {
		t.Errorf("--demo: %v %v", cfg.Demo, err)
	}
}

func TestConfigRefusesWhatItCannotHonour(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file string
		env        []string
		args       []string
		want       string
	}{
		{name: "a misspelt setting", file: "adr: 1.2.3.4:5\n", want: `unknown setting "adr"`},
		{name: "a misspelt nested setting", file: "tls:\n  crt: x\n", want: `unknown setting "tls.crt"`},
		{name: "a bad duration", env: []string{"LEDGERBASE_READ_TIMEOUT=soon"}, want: "read_timeout"},
		{name: "a bad number", file: "body_limit: lots\n", want: "body_limit"},
		{name: "a log format", args: []string{"--log-format", "xml"}, want: "log.format"},
		{name: "a log level", env: []string{"LEDGERBASE_LOG_LEVEL=loud"}, want: "log.level"},
		{name: "a certificate without key", args: []string{"--tls-cert", "c.pem"}, want: "tls.cert and tls.key"},
		{name: "a negative limit", args: []string{"--rate-limit-starter", "-1"}, want: "rate_limit.starter"},
		{name: "a missing file", args: []string{"--config", "/nonexistent/ledgerbase.yaml"}, want: "/nonexistent/ledgerbase.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := c.args
			if c.file != "" {
				args = append(args, "--config", writeFile(t, "c.yaml", c.file))
			}
			_, err := parseServe(t, c.env, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// The help lists every setting with its flag and environment variable, and
// the example file documents every setting.
func TestEverySettingIsListedAndDocumented(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"serve", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../../configs/ledgerbase.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServe(t, []string{"LEDGERBASE_CONFIG=../../configs/ledgerbase.yaml"})
	if err != nil {
		t.Fatalf("the example configuration does not load: %v", err)
	}
	if def := defaultConfig(); !reflect.DeepEqual(cfg, def) {
		t.Errorf("the example's values differ from the defaults:\n%+v\n%+v", cfg, def)
	}
	def := defaultConfig()
	for _, s := range settings(&def) {
		if !strings.Contains(out.String(), "--"+s.flag()+" ") || !strings.Contains(out.String(), s.env()) {
			t.Errorf("serve --help does not list --%s / %s", s.flag(), s.env())
		}
		leaf := s.key[strings.LastIndex(s.key, ".")+1:]
		if !strings.Contains(string(example), leaf+":") {
			t.Errorf("configs/ledgerbase.yaml does not explain %s", s.key)
		}
	}
}

// Every command, not only serve, finds its database through the same
// settings: here `workspace create` through --config.
func TestCommandsReadTheDatabaseFromTheConfigFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "from-config.db")
	file := writeFile(t, "c.yaml", "database:\n  url: sqlite:"+path+"\n")
	out, err := runCLI(t, "", "workspace", "create", "--config", file, "--name", "Configured", "--plan", "growth")
	if err != nil {
		t.Fatalf("workspace create: %v %s", err, out)
	}
	db, err := database.Open(context.Background(), "sqlite:"+path, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, err := db.Reader.Workspace.Get(context.Background(), strings.TrimSpace(out))
	if err != nil || ws.Name != "Configured" {
		t.Fatalf("the workspace is not in the configured database: %v %v", ws, err)
	}
}
