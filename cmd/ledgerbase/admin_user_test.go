package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/web/session"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	c := root()
	var out bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetIn(strings.NewReader(stdin))
	c.SetArgs(args)
	err := c.Execute()
	return out.String(), err
}

// These tests are not parallel: each migrates a fresh database, and ent's
// migration rewrites package-level table descriptions, so two migrations
// in one process race.

func TestAdminCreate(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "cli.db")
	out, err := runCLI(t, "a long enough password\n", "admin", "create", "--database-url", url, "--email", "Ops@Example.com", "--password-stdin")
	if err != nil || !strings.HasPrefix(out, "adm_") {
		t.Fatalf("admin create: %q %v", out, err)
	}
	db, err := database.Open(context.Background(), url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := session.Verify(context.Background(), db.Reader, "ops@example.com", "a long enough password"); err != nil {
		t.Fatalf("cannot sign in with the created account: %v", err)
	}
	for name, args := range map[string][]string{
		"same email":        {"--email", "ops@example.com", "--password-stdin"},
		"no password-stdin": {"--email", "other@example.com"},
		"bad email":         {"--email", "not-an-email", "--password-stdin"},
	} {
		if _, err := runCLI(t, "a long enough password\n", append([]string{"admin", "create", "--database-url", url}, args...)...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := runCLI(t, "short\n", "admin", "create", "--database-url", url, "--email", "s@example.com", "--password-stdin"); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("short password: %v", err)
	}
}

func TestDemoCreatesAnAdminOnce(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "demo.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, searches()); err != nil {
		t.Fatal(err)
	}
	line, err := demoAdmin(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	_, password, ok := strings.Cut(line, "password ")
	if !ok {
		t.Fatalf("banner line %q", line)
	}
	if _, err := session.Verify(ctx, db.Reader, "admin@example.com", password); err != nil {
		t.Fatalf("the printed password does not sign in: %v", err)
	}
	again, err := demoAdmin(ctx, db)
	if err != nil || strings.Contains(again, "password ") {
		t.Fatalf("second start: %q %v", again, err)
	}
}
