package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/spf13/pflag"

	"github.com/ledgerbase/ledgerbase/api/mail"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/rest"
	"github.com/ledgerbase/ledgerbase/api/telemetry"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Config is every setting of `ledgerbase serve`: its koanf tag is its YAML
// key, tls.cert is also --tls-cert and LEDGERBASE_TLS_CERT. Precedence:
// default < file < env < flag. configs/ledgerbase.yaml documents each.
type Config struct {
	Addr     string `koanf:"addr" help:"address to listen on (host:port)"`
	Demo     bool   `koanf:"demo" help:"on an empty database, create a demo workspace with data; on every start, print a fresh admin key and revoke the one printed before"`
	Database struct {
		URL          string `koanf:"url" help:"sqlite:PATH or postgres://..."`
		MaxOpenConns int    `koanf:"max_open_conns" help:"read pool size on SQLite (the writer is one connection), pool size on PostgreSQL; 0 = by CPU count"`
		MaxIdleConns int    `koanf:"max_idle_conns" help:"idle connections kept open on PostgreSQL; 0 = as many as max_open_conns"`
	} `koanf:"database"`
	TLS struct {
		Cert string `koanf:"cert" help:"PEM certificate (chain) file; with --tls-key, serve HTTPS"`
		Key  string `koanf:"key" help:"PEM private key file of --tls-cert"`
	} `koanf:"tls"`
	BodyLimit     int           `koanf:"body_limit" help:"largest request body in bytes (larger gets 413)"`
	ReadTimeout   time.Duration `koanf:"read_timeout" help:"time to read a request, headers and body"`
	WriteTimeout  time.Duration `koanf:"write_timeout" help:"time to write a response"`
	IdleTimeout   time.Duration `koanf:"idle_timeout" help:"time a keep-alive connection may wait for its next request"`
	ShutdownGrace time.Duration `koanf:"shutdown_grace" help:"on SIGTERM/SIGINT, time requests in flight get to finish"`
	ShutdownDelay time.Duration `koanf:"shutdown_delay" help:"on SIGTERM/SIGINT, time to keep serving while /readyz says 503, so load balancers stop sending first"`
	KeyCacheTTL   time.Duration `koanf:"key_cache_ttl" help:"the longest a cached key lookup is used (changes by any process are seen within a second regardless)"`
	RecordCacheMB int           `koanf:"record_cache_mb" help:"memory for rendered records' JSON, checked against each row's updated_at on every read (0 = off)"`
	RateLimit     struct {
		Starter  int  `koanf:"starter" help:"requests per minute per key on the starter plan (0 = unlimited)"`
		Growth   int  `koanf:"growth" help:"requests per minute per key on the growth plan (0 = unlimited)"`
		Business int  `koanf:"business" help:"requests per minute per key on the business plan (0 = unlimited)"`
		Shared   bool `koanf:"shared" help:"keep rate-limit buckets in the database, so every server sharing it enforces one limit per key (one small write per request); off = each process counts alone"`
	} `koanf:"rate_limit"`
	Log struct {
		Format string `koanf:"format" help:"text or json"`
		Level  string `koanf:"level" help:"debug, info, warn or error"`
		Access bool   `koanf:"access" help:"log one line per request"`
	} `koanf:"log"`
	Webhooks struct {
		AllowHTTP            bool          `koanf:"allow_http" help:"accept http:// webhook URLs (else https only)"`
		AllowPrivateNetworks bool          `koanf:"allow_private_networks" help:"accept webhook URLs resolving to loopback, private, link-local or metadata addresses"`
		RetrySchedule        string        `koanf:"retry_schedule" help:"delays before each webhook retry, a comma list (empty = 5s,5m,30m,2h,5h then 10h, about three days)"`
		Poll                 time.Duration `koanf:"poll" help:"how often the delivery worker looks for due webhooks when no write woke it"`
	} `koanf:"webhooks"`
	SMTP struct {
		URL           string        `koanf:"url" help:"SMTP server documents are emailed through: smtp://user:pass@host:587 (STARTTLS required), smtps://user:pass@host:465 (implicit TLS) or smtp://host:25?tls=none (a local relay without TLS); empty: emails wait as not_configured"`
		From          string        `koanf:"from" help:"sender address of emailed documents (empty: the company profile's email)"`
		RetrySchedule string        `koanf:"retry_schedule" help:"delays before each email retry, a comma list (empty = 5s,5m,30m,2h,5h then 10h, about three days)"`
		Timeout       time.Duration `koanf:"timeout" help:"time one SMTP conversation may take"`
	} `koanf:"smtp"`
	Metrics struct {
		Enabled bool   `koanf:"enabled" help:"serve Prometheus metrics at /metrics"`
		Addr    string `koanf:"addr" help:"serve /metrics on this separate address (host:port) instead of the main listener"`
	} `koanf:"metrics"`
	Events struct {
		Retention time.Duration `koanf:"retention" help:"how long GET /v1/events keeps an event; older ones are deleted in the background"`
	} `koanf:"events"`
	ShortcutsOff []string `koanf:"shortcuts_off" help:"shortcuts and caches to switch off, by name (ent/shortcut.Names; each answers as the plain path does, only sooner): for measuring"`
}

func defaultConfig() Config {
	var c Config
	c.Addr = "127.0.0.1:8080"
	c.Database.URL = database.DefaultURL
	c.BodyLimit = 1 << 20
	c.ReadTimeout = 30 * time.Second
	c.WriteTimeout = 60 * time.Second
	c.IdleTimeout = 120 * time.Second
	c.ShutdownGrace = 20 * time.Second
	c.KeyCacheTTL = 5 * time.Second
	c.Events.Retention = 30 * 24 * time.Hour
	c.RecordCacheMB = records.DefaultCacheBytes >> 20
	d := rest.DefaultRateLimits()
	c.RateLimit.Starter, c.RateLimit.Growth, c.RateLimit.Business = d[resource.Starter], d[resource.Growth], d[resource.Business]
	c.Log.Format, c.Log.Level, c.Log.Access = "text", "info", true
	c.Metrics.Enabled = true
	c.Webhooks.Poll = time.Second
	c.SMTP.Timeout = 30 * time.Second
	c.ShortcutsOff = []string{}
	return c
}

// recordCacheBytes is api.Config's value: there 0 is the default, and off is negative.
func (c Config) recordCacheBytes() int {
	if c.RecordCacheMB <= 0 {
		return -1
	}
	return c.RecordCacheMB << 20
}

const envPrefix = "LEDGERBASE_"

// setting is one leaf of Config.
type setting struct {
	key  string // koanf path: "tls.cert"
	help string
	val  reflect.Value
}

func (s setting) flag() string { return strings.NewReplacer(".", "-", "_", "-").Replace(s.key) }
func (s setting) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

// settings lists the leaves of the struct c points to.
func settings(c *Config) []setting {
	var out []setting
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			key := prefix + f.Tag.Get("koanf")
			if f.Type.Kind() == reflect.Struct {
				walk(v.Field(i), key+".")
				continue
			}
			out = append(out, setting{key: key, help: f.Tag.Get("help"), val: v.Field(i)})
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

// addConfigFlags declares the flags of the settings named by keys (all
// when none) on fs, with their defaults. --config and --database-url are
// the root command's, so every command reads the same file and database.
func addConfigFlags(fs *pflag.FlagSet, keys ...string) {
	def := defaultConfig()
	for _, s := range settings(&def) {
		if s.key == "database.url" || len(keys) > 0 && !slices.Contains(keys, s.key) {
			continue
		}
		help := fmt.Sprintf("%s (env %s)", s.help, s.env())
		switch v := s.val.Addr().Interface().(type) {
		case *string:
			fs.String(s.flag(), *v, help)
		case *int:
			fs.Int(s.flag(), *v, help)
		case *bool:
			fs.Bool(s.flag(), *v, help)
		case *time.Duration:
			fs.Duration(s.flag(), *v, help)
		case *[]string:
			fs.StringSlice(s.flag(), *v, help)
		default:
			panic(fmt.Sprintf("config: no flag type for %s", s.key))
		}
	}
}

// loadConfig reads the defaults, the file of --config or LEDGERBASE_CONFIG,
// LEDGERBASE_* variables of environ, then the flags of fs that were set.
func loadConfig(fs *pflag.FlagSet, environ []string) (Config, error) {
	cfg := defaultConfig()
	all := settings(&cfg)
	byEnv, byFlag := map[string]string{}, map[string]string{}
	known, sections := map[string]bool{}, map[string]bool{}
	ko := koanf.New(".")
	for _, s := range all {
		byEnv[s.env()], byFlag[s.flag()], known[s.key] = s.key, s.key, true
		if sec, _, ok := strings.Cut(s.key, "."); ok {
			sections[sec] = true
		}
		if err := ko.Set(s.key, s.val.Interface()); err != nil {
			return cfg, err
		}
	}
	path, _ := fs.GetString("config")
	path = cmp.Or(path, lookupEnv(environ, envPrefix+"CONFIG"))
	if path != "" {
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(path), yaml.Parser()); err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
		// A misspelt setting must not be silently ignored (an empty
		// section, "tls:" alone, is harmless).
		for _, k := range fk.Keys() {
			if !known[k] && !(sections[k] && fk.Get(k) == nil) {
				return cfg, fmt.Errorf("config %s: unknown setting %q (see configs/ledgerbase.yaml)", path, k)
			}
		}
		if err := ko.Merge(fk); err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
	}
	err := ko.Load(env.Provider(".", env.Opt{
		Prefix:        envPrefix,
		EnvironFunc:   func() []string { return environ },
		TransformFunc: func(k, v string) (string, any) { return byEnv[k], v },
	}), nil)
	if err != nil {
		return cfg, err
	}
	err = ko.Load(posflag.ProviderWithFlag(fs, ".", ko, func(f *pflag.Flag) (string, any) {
		return byFlag[f.Name], posflag.FlagVal(fs, f)
	}), nil)
	if err != nil {
		return cfg, err
	}
	if err := ko.Unmarshal("", &cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, cfg.validate()
}

func lookupEnv(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func (c *Config) validate() error {
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("config: log.format must be text or json, not %q", c.Log.Format)
	}
	if _, err := c.logLevel(); err != nil {
		return fmt.Errorf("config: log.level: %w", err)
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		return fmt.Errorf("config: tls.cert and tls.key go together")
	}
	if c.BodyLimit <= 0 {
		return fmt.Errorf("config: body_limit must be positive")
	}
	if err := mail.CheckURL(c.SMTP.URL); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := mail.CheckFrom(c.SMTP.From); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if _, err := webhooks.ParseSchedule(c.SMTP.RetrySchedule); err != nil {
		return fmt.Errorf("config: smtp.retry_schedule: %w", err)
	}
	if err := shortcut.Check(c.ShortcutsOff); err != nil {
		return fmt.Errorf("config: shortcuts_off: %w", err)
	}
	for _, s := range settings(c) {
		if s.val.CanInt() && s.val.Int() < 0 { // the counts and durations
			return fmt.Errorf("config: %s must not be negative", s.key)
		}
	}
	return nil
}

func (c *Config) logLevel() (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(c.Log.Level))
	return l, err
}

// logger builds the process's logger from the log settings, writing to
// out (standard error, batched by serve).
func (c *Config) logger(out io.Writer) *slog.Logger {
	level, _ := c.logLevel()
	// slog's JSON or text handler, with a fast path for the access log line.
	return slog.New(telemetry.NewLogHandler(out, c.Log.Format == "json", level))
}

// rateLimits maps the per-plan settings onto the API's plans.
func (c *Config) rateLimits() map[resource.Plan]int {
	return map[resource.Plan]int{
		resource.Starter:  c.RateLimit.Starter,
		resource.Growth:   c.RateLimit.Growth,
		resource.Business: c.RateLimit.Business,
	}
}

// databaseOptions are the pool settings.
func (c *Config) databaseOptions() database.Options {
	return database.Options{MaxOpenConns: c.Database.MaxOpenConns, MaxIdleConns: c.Database.MaxIdleConns, ShortcutsOff: c.ShortcutsOff}
}

// mail are the outbox's settings.
func (c *Config) mail(log *slog.Logger) mail.Settings {
	sched, _ := webhooks.ParseSchedule(c.SMTP.RetrySchedule) // checked by validate
	return mail.Settings{URL: c.SMTP.URL, From: c.SMTP.From, Schedule: sched, Timeout: c.SMTP.Timeout, Logger: log}
}

// webhooks are the webhook settings for the API and the delivery worker.
func (c *Config) webhooks(log *slog.Logger) (webhooks.Settings, error) {
	sched, err := webhooks.ParseSchedule(c.Webhooks.RetrySchedule)
	return webhooks.Settings{AllowHTTP: c.Webhooks.AllowHTTP, AllowPrivateNetworks: c.Webhooks.AllowPrivateNetworks,
		Schedule: sched, Poll: c.Webhooks.Poll, Logger: log}, err
}
