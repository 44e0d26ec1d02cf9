package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsClientDir holds the driver of the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned by its package-lock.json).
const tsClientDir = "testdata/tsclient"

// tsCall is one call as client.mjs reports it: the result, or what the
// TypeScript client threw instead of handing the result to the model.
type tsCall struct {
	Name   string
	Result *struct {
		Content []struct {
			Type string
			Text string
		}
		StructuredContent map[string]any
		IsError           bool
	}
	Thrown *struct {
		Code    any
		Message string
	}
}

// needTSClient returns node's path, once the client's package is installed;
// without them the test skips, or fails under CI=true.
func needTSClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("the official TypeScript MCP client is not installed (%v): install Node.js 20+ and run `npm ci --prefix mcpbridge/testdata/tsclient`", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// runTSClient runs client.mjs with node: over stdio when endpoint is empty
// (it spawns the bridge with key), else over streamable HTTP.
func (f *fixture) runTSClient(t *testing.T, key, endpoint string, calls []map[string]any) ([]string, []tsCall) {
	t.Helper()
	node := needTSClient(t)
	in, _ := json.Marshal(calls)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = tsClientDir
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "LEDGERBASE_URL="+f.env.URL, "LEDGERBASE_API_KEY="+key)
	if endpoint == "" {
		cmd.Env = append(cmd.Env, "MCP_COMMAND="+f.bin)
	} else {
		cmd.Env = append(cmd.Env, "MCP_URL="+endpoint)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	if strings.Contains(string(out)+stderr.String(), key) {
		t.Fatal("the API key appears in what the TypeScript client received or logged")
	}
	var answer struct {
		Tools []string
		Calls []tsCall
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatalf("client.mjs answered %v: %s\n%s", err, out, stderr.String())
	}
	if len(answer.Calls) != len(calls) {
		t.Fatalf("client.mjs made %d of %d calls", len(answer.Calls), len(calls))
	}
	return answer.Tools, answer.Calls
}

// The official TypeScript SDK client, which validates structured content
// against each tool's outputSchema, receives every error as a tool error the
// model reads (code, message, param, request_id), and every success.
func typeScriptClientReadsEveryError(t *testing.T, f *fixture) {
	needTSClient(t)
	ws := f.business(t)
	calls := []map[string]any{
		{"name": "whoami"},
		{"name": "list_invoices", "arguments": map[string]any{"limit": 2}},
		{"name": "list_invoices", "arguments": map[string]any{"limit": 500}},
		{"name": "list_invoices", "arguments": map[string]any{"bogus": 1}},
		{"name": "list_addresses", "arguments": map[string]any{"client_id": "cli_nope"}},
		{"name": "get_invoice", "arguments": map[string]any{}},
		{"name": "get_invoice", "arguments": map[string]any{"id": "inv_nope"}},
	}
	check := func(t *testing.T, tools []string, got []tsCall) {
		for _, want := range []string{"whoami", "list_invoices", "list_online_payments", "get_online_payment"} {
			if !slices.Contains(tools, want) {
				t.Errorf("the TypeScript client lists no %s among %v", want, tools)
			}
		}
		for i, c := range got {
			if c.Thrown != nil {
				t.Fatalf("%s(%v): the TypeScript client threw %v %q instead of handing the result to the model",
					c.Name, calls[i]["arguments"], c.Thrown.Code, c.Thrown.Message)
			}
		}
		me, page := got[0].Result, got[1].Result
		if me.IsError || len(me.StructuredContent["data"].([]any)) != 1 {
			t.Fatalf("whoami %+v", me)
		}
		if page.IsError || page.StructuredContent["meta"].(map[string]any)["limit"] != float64(2) {
			t.Fatalf("list_invoices limit 2: %+v", page)
		}
		for i, want := range []struct{ code, param, status string }{
			2: {"invalid_request", "limit", "400"},
			3: {"invalid_request", "bogus", "400"},
			4: {"not_found", "", "404"},
			5: {"invalid_arguments", "id", "<nil>"},
			6: {"not_found", "", "404"},
		} {
			if want.code == "" {
				continue
			}
			r := got[i].Result
			if !r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
				t.Fatalf("%s(%v): want one text block of an error, got %+v", got[i].Name, calls[i]["arguments"], r)
			}
			var structured any
			if r.StructuredContent != nil {
				structured = r.StructuredContent
			}
			e := errorOf(t, got[i].Name, r.Content[0].Text, structured, want.code)
			if fmt.Sprint(e["param"]) != want.param && !(want.param == "" && e["param"] == nil) {
				t.Errorf("%s(%v): param %v, want %s", got[i].Name, calls[i]["arguments"], e["param"], want.param)
			}
			if fmt.Sprint(e["status"]) != want.status {
				t.Errorf("%s(%v): status %v, want %s", got[i].Name, calls[i]["arguments"], e["status"], want.status)
			}
			// An answer of the API carries its request id; the bridge's own refusal has none.
			if rid := fmt.Sprint(e["request_id"]); (want.status != "<nil>") != strings.HasPrefix(rid, "req_") {
				t.Errorf("%s(%v): request_id %s", got[i].Name, calls[i]["arguments"], rid)
			}
		}
	}
	t.Run("stdio", func(t *testing.T) {
		tools, got := f.runTSClient(t, ws.Key, "", calls)
		check(t, tools, got)
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		endpoint, _ := f.serveHTTP(t, ws.Key, "127.0.0.1:0")
		tools, got := f.runTSClient(t, ws.Key, endpoint, calls)
		check(t, tools, got)
	})
}

// The HTTP transport refuses browser pages of foreign origins (DNS
// rebinding), allows this machine's and the --allowed-origins list, and a
// bare port listens on loopback only.
func httpRefusesForeignOrigins(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "starter", false, false)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"browser","version":"1"}}}`
	post := func(endpoint, origin string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	endpoint, stderr := f.serveHTTP(t, ws.Key, ":0", "--allowed-origins", "https://assistant.example.com")
	if u, err := url.Parse(endpoint); err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("--http :0 listens on %s, want loopback 127.0.0.1", endpoint)
	}
	for origin, want := range map[string]int{
		"":                                 200, // not a browser
		"https://assistant.example.com":    200, // allowed
		"https://ASSISTANT.example.com/":   200,
		"http://localhost:6274":            200, // a page of this machine (MCP Inspector)
		"http://127.0.0.1:8080":            200,
		"http://[::1]:3000":                200,
		"http://evil.example":              403,
		"http://assistant.example.com":     403, // another scheme is another origin
		"https://assistant.example.com:81": 403,
		"http://localhost.evil.example":    403,
		"http://127.0.0.1.nip.io":          403,
		"null":                             403,
	} {
		code, body := post(endpoint, origin)
		if code != want {
			t.Errorf("Origin %q: %d, want %d: %s", origin, code, want, body)
		}
		if want == 403 {
			var rpc struct{ Error struct{ Code int } }
			if json.Unmarshal([]byte(body), &rpc) != nil || rpc.Error.Code != -32600 || !strings.Contains(body, "not allowed") {
				t.Errorf("Origin %q: the 403 is not a JSON-RPC error: %s", origin, body)
			}
		}
	}
	if !strings.Contains(stderr.String(), "refused a request from a foreign origin") {
		t.Errorf("refusals are not logged:\n%s", stderr)
	}

	// Without the flag only this machine's pages pass.
	plain, _ := f.serveHTTP(t, ws.Key, "127.0.0.1:0")
	if code, _ := post(plain, "https://assistant.example.com"); code != 403 {
		t.Errorf("an unlisted origin answered %d", code)
	}
	if code, _ := post(plain, "http://localhost:5173"); code != 200 {
		t.Errorf("a local page answered %d", code)
	}

	// A malformed list stops the bridge before it serves anything.
	out, err := f.command(ws.Key, "--http", "127.0.0.1:0", "--allowed-origins", "assistant.example.com").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), `allowed origin "assistant.example.com"`) {
		t.Fatalf("--allowed-origins assistant.example.com: %v %s", err, out)
	}
}
