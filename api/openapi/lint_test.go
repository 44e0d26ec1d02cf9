package openapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// redoclyCLI is the linter's pinned version (Node 20 runs it; later
// releases need Node 22).
const redoclyCLI = "@redocly/cli@2.77.0"

// Redocly CLI, a linter nobody here wrote, finds no error and no warning in
// the served document under its recommended rules. It runs with Node's npx
// (which fetches the pinned version once from the npm registry); without
// Node the test skips, and fails under CI=true.
func TestRedoclyFindsNothingInTheDocument(t *testing.T) {
	t.Parallel()
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no npx on PATH: Redocly CLI cannot lint the document (install Node.js)")
		}
		t.Skip("no npx on PATH: skipping the Redocly lint (install Node.js to run it)")
	}
	env := apitest.Start(t)
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, env.Get(t, "/v1/openapi.json", "").WantStatus(t, http.StatusOK).Body, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "--yes", redoclyCLI, "lint", "--format=json", file)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_UPDATE_NOTIFIER=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var report struct {
		Totals   struct{ Errors, Warnings int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Location []struct{ Pointer string }
		}
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v (%v)\n%s\n%s", err, jerr, out, stderr.String())
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if err != nil && len(report.Problems) == 0 {
		t.Fatalf("redocly lint: %v\n%s", err, stderr.String())
	}
}

// GET /v1/openapi.json has its own refusals: a request line longer than
// the server reads is 431 with the API's error body, as the document says.
func TestDocumentRequestTooLargeIsDocumented(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	env.Get(t, "/v1/openapi.json?pad="+strings.Repeat("x", 9000), "").WantError(t, http.StatusRequestHeaderFieldsTooLarge, "invalid_request")
}
