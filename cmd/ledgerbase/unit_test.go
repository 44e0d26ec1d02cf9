package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const unitFile = "../../configs/ledgerbase.service"

// unit is a systemd unit file: section → directive → values, in order
// (a directive may repeat).
type unit map[string]map[string][]string

func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, section := unit{}, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case strings.HasSuffix(line, "\\"):
			t.Fatalf("%s:%d: continuation lines are not expected", path, n)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a directive in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one is the single value of a directive.
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) != 1 {
		t.Fatalf("the unit's [%s] has %d %s= lines, want one", section, len(v), key)
	}
	return v[0]
}

// systemdSeconds reads a systemd time span such as 30s, 1min 30s or 90.
func systemdSeconds(t *testing.T, s string) time.Duration {
	t.Helper()
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(strings.NewReplacer("min", "m", " ", "").Replace(s))
	if err != nil {
		t.Fatalf("time span %q: %v", s, err)
	}
	return d
}

// configs/ledgerbase.service runs the real command with settings that
// exist, keeps the database where systemd lets it write, is hardened, and
// gives the graceful shutdown time to finish before SIGKILL. systemd's own
// parser checks it too where systemd-analyze is installed.
func TestSystemdUnitRunsServeHardenedWithRealSettings(t *testing.T) {
	t.Parallel()
	u := readUnit(t, unitFile)
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u[s] == nil {
			t.Fatalf("the unit has no [%s] section", s)
		}
	}
	want := map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"Restart": "on-failure", "KillSignal": "SIGTERM", "PrivateTmp": "yes", "ProtectHome": "yes",
	}
	for k, v := range want {
		if got := u.one(t, "Service", k); got != v {
			t.Errorf("%s=%s, want %s", k, got, v)
		}
	}
	if got := u.one(t, "Install", "WantedBy"); got != "multi-user.target" {
		t.Errorf("WantedBy=%s", got)
	}

	// ExecStart is `ledgerbase serve` with flags serve really has.
	argv := strings.Fields(u.one(t, "Service", "ExecStart"))
	if len(argv) < 2 || !filepath.IsAbs(argv[0]) || filepath.Base(argv[0]) != "ledgerbase" {
		t.Fatalf("ExecStart=%v: want an absolute path to ledgerbase", argv)
	}
	cmd, rest, err := root().Find(argv[1:])
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("ExecStart=%v does not run serve: %v", argv, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("ExecStart=%v: %v", argv, err)
	}

	// Every LEDGERBASE_ variable it sets is a setting of config.go.
	known := map[string]bool{envPrefix + "CONFIG": true}
	def := defaultConfig()
	for _, s := range settings(&def) {
		known[s.env()] = true
	}
	var environ []string
	for _, e := range u[`Service`]["Environment"] {
		for _, kv := range strings.Fields(e) {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || !known[k] {
				t.Errorf("Environment=%s: %s is not a setting of ledgerbase serve", e, k)
			}
			environ = append(environ, kv)
		}
	}
	cfg, err := loadConfig(cmd.Flags(), environ)
	if err != nil {
		t.Fatalf("the unit's settings do not load: %v", err)
	}

	// The database is a file in the state directory, where it may write.
	state := "/var/lib/" + u.one(t, "Service", "StateDirectory")
	if !strings.HasPrefix(cfg.Database.URL, "sqlite:"+state+"/") {
		t.Errorf("database.url %s is not in the StateDirectory %s", cfg.Database.URL, state)
	}
	if wd := u.one(t, "Service", "WorkingDirectory"); wd != state {
		t.Errorf("WorkingDirectory=%s, want the state directory %s", wd, state)
	}
	if rw := u.one(t, "Service", "ReadWritePaths"); strings.TrimPrefix(rw, "-") != state {
		t.Errorf("ReadWritePaths=%s, want the state directory %s", rw, state)
	}

	// systemd sends SIGKILL after TimeoutStopSec: it must outlast the
	// delay plus the grace serve takes on SIGTERM, with room to close.
	stop := systemdSeconds(t, u.one(t, "Service", "TimeoutStopSec"))
	if need := cfg.ShutdownDelay + cfg.ShutdownGrace + 5*time.Second; stop < need {
		t.Errorf("TimeoutStopSec=%s is shorter than shutdown_delay %s + shutdown_grace %s + 5s to close",
			stop, cfg.ShutdownDelay, cfg.ShutdownGrace)
	}
	if got := u.one(t, "Service", "KillMode"); !slices.Contains([]string{"mixed", "control-group"}, got) {
		t.Errorf("KillMode=%s", got)
	}

	t.Run("systemd-analyze verify", func(t *testing.T) {
		if _, err := exec.LookPath("systemd-analyze"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("systemd-analyze is not installed (.ci/run installs systemd)")
			}
			t.Skip("systemd-analyze is not installed")
		}
		// verify wants ExecStart's program to exist: this test binary
		// stands in for /usr/local/bin/ledgerbase.
		b, err := os.ReadFile(unitFile)
		if err != nil {
			t.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(t.TempDir(), "ledgerbase.service")
		if err := os.WriteFile(copied, bytes.ReplaceAll(b, []byte(argv[0]), []byte(self)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("systemd-analyze", "verify", "--man=no", copied).CombinedOutput()
		// verify only warns (exit 0) about an unknown directive or a bad value.
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
}
