// Package mcpbridge is the MCP server of ledgerbase-mcp: tools derived from
// the /v1 declarations, each a REST call with the bridge's one key.
package mcpbridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Config is what the bridge needs; cmd/ledgerbase-mcp fills it from flags
// and the environment.
type Config struct {
	URL    string // base URL of Ledgerbase, without /v1
	APIKey string
	// ReadOnly offers only reading tools.
	ReadOnly bool
	// Toolsets narrows the tools to these resource.Toolset names; empty = all.
	Toolsets []string
	// Timeout bounds each HTTP call to Ledgerbase; Retries and MaxRetryWait
	// bound how 429s are retried.
	Timeout      time.Duration
	Retries      int
	MaxRetryWait time.Duration
	Version      string
	Logger       *slog.Logger
	// AllowedOrigins are the browser origins (scheme://host[:port], or "*")
	// besides this machine's that may call the HTTP transport.
	AllowedOrigins []string
}

// Me is the record of /v1/me.
type Me struct {
	WorkspaceID    string `json:"workspace_id"`
	WorkspaceName  string `json:"workspace_name"`
	Plan           string `json:"plan"`
	CommerceMode   bool   `json:"commerce_mode"`
	CommerceModule bool   `json:"commerce_module"`
	Key            struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Role   string `json:"role"`
		Prefix string `json:"prefix"`
	} `json:"key"`
}

// Bridge is a configured MCP server.
type Bridge struct {
	MCP    *server.MCPServer
	Me     Me
	Tools  []Tool // the tools offered, in declaration order
	client *Client
	log    *slog.Logger

	allowedOrigins []string
}

// viewerRole is the built-in read-only role: a bridge holding such a key
// offers no write tool, since every write would be refused.
const viewerRole = "viewer"

// Toolsets lists the toolset names the declarations use.
func Toolsets() []string {
	var out []string
	for _, r := range append(resource.All[:len(resource.All):len(resource.All)], resource.Events) {
		if r.Toolset != "" && !slices.Contains(out, r.Toolset) {
			out = append(out, r.Toolset)
		}
	}
	return out
}

// New reads /v1/me with the key and builds the tools the key can use.
func New(ctx context.Context, cfg Config) (*Bridge, error) {
	if cfg.URL == "" {
		return nil, errors.New("no Ledgerbase URL: set LEDGERBASE_URL or --url")
	}
	if cfg.APIKey == "" {
		return nil, errors.New("no API key: set LEDGERBASE_API_KEY")
	}
	for _, ts := range cfg.Toolsets {
		if !slices.Contains(Toolsets(), ts) {
			return nil, fmt.Errorf("unknown toolset %q; choose among %s", ts, strings.Join(Toolsets(), ", "))
		}
	}
	if err := CheckOrigins(cfg.AllowedOrigins); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	c := &Client{
		base: strings.TrimSuffix(strings.TrimSuffix(cfg.URL, "/"), "/v1"),
		key:  cfg.APIKey,
		http: &http.Client{Timeout: cfg.Timeout, Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: min(cfg.Timeout, 10*time.Second)}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		}},
		retries: cfg.Retries,
		maxWait: cfg.MaxRetryWait,
		ua:      "ledgerbase-mcp/" + cfg.Version,
		log:     cfg.Logger,
	}
	me, err := whoami(ctx, c)
	if err != nil {
		return nil, err
	}
	plan, ok := resource.ParsePlan(me.Plan)
	if !ok {
		return nil, fmt.Errorf("the Ledgerbase server reported an unknown plan %q", me.Plan)
	}
	readOnly := cfg.ReadOnly || me.Key.Role == viewerRole
	b := &Bridge{Me: me, client: c, log: cfg.Logger, allowedOrigins: cfg.AllowedOrigins}
	b.MCP = server.NewMCPServer("ledgerbase", cfg.Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(instructions(me, readOnly)),
	)
	for _, t := range Tools() {
		r := t.Endpoint.Resource
		switch {
		case r == resource.Me:
		case len(cfg.Toolsets) > 0 && !slices.Contains(cfg.Toolsets, r.Toolset):
			continue
		case r.Lack(plan, me.CommerceMode, me.CommerceModule) != resource.Reached:
			continue
		case readOnly && !t.ReadOnly:
			continue
		}
		b.Tools = append(b.Tools, t)
		b.MCP.AddTool(t.mcpTool(), b.handler(t))
	}
	cfg.Logger.Info("ledgerbase-mcp ready", "url", c.base, "workspace", me.WorkspaceID, "plan", me.Plan,
		"key", me.Key.Prefix, "role", me.Key.Role, "read_only", readOnly, "tools", len(b.Tools))
	return b, nil
}

func whoami(ctx context.Context, c *Client) (Me, error) {
	raw, err := c.Do(ctx, http.MethodGet, "/v1/me", nil, nil)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return Me{}, fmt.Errorf("the Ledgerbase server refused the API key: %s (%s)", ae.Message, ae.Code)
		}
		return Me{}, err
	}
	var page struct {
		Data []Me `json:"data"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Data) != 1 {
		return Me{}, fmt.Errorf("%s/v1/me did not answer a Ledgerbase me record; is LEDGERBASE_URL the Ledgerbase server?", c.base)
	}
	return page.Data[0], nil
}

func instructions(me Me, readOnly bool) string {
	s := fmt.Sprintf("Tools over the business records of the Ledgerbase workspace %q (%s plan). "+
		"Each tool calls the Ledgerbase /v1 API with the workspace's API key; tools for records the plan does not include are not offered. "+
		"Ids carry a prefix naming their type (inv_ invoice, so_ sales order, cli_ client...). "+
		"Money is integer minor units in *_cents fields with a currency_code; quantities are thousandths in *_milli fields. "+
		"Lists are newest first and answer meta.total; narrow them with their filters rather than reading every page. "+
		"A failed call answers an error with code, message and request_id: fix the argument named by param, or report the request_id.",
		me.WorkspaceName, me.Plan)
	if readOnly {
		s += " This bridge is read-only: it cannot change records."
	}
	return s
}

// listOutput is what every list answers; records' fields are not declared
// (the spec leaves them open), so items are any object.
var listOutput = json.RawMessage(`{"type":"object","properties":{` +
	`"data":{"type":"array","items":{"type":"object"}},` +
	`"meta":{"type":"object","properties":{"limit":{"type":"integer"},"offset":{"type":"integer"},"total":{"type":"integer"}},"required":["limit","offset","total"]}` +
	`},"required":["data","meta"]}`)

// mcpTool is the tool as MCP lists it.
func (t Tool) mcpTool() mcp.Tool {
	schema, err := json.Marshal(t.Schema)
	if err != nil {
		panic(err) // the schemas are built from declarations; a failure is a bug
	}
	var out json.RawMessage
	if t.Endpoint.Op.Kind == resource.List {
		out = listOutput
	}
	return mcp.Tool{
		Name:            t.Name,
		RawOutputSchema: out,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  schema,
		Annotations: mcp.ToolAnnotation{
			Title:           t.Title,
			ReadOnlyHint:    mcp.ToBoolPtr(t.ReadOnly),
			DestructiveHint: mcp.ToBoolPtr(t.Destructive),
			IdempotentHint:  mcp.ToBoolPtr(t.Idempotent),
			// The tools reach one closed system, the workspace's records.
			OpenWorldHint: mcp.ToBoolPtr(false),
		},
	}
}

// handler calls the endpoint and answers its JSON as structured content; an
// API error becomes a tool error an assistant can act on.
func (b *Bridge) handler(t Tool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path, query, body, err := t.request(req.GetArguments())
		if err != nil {
			ae := &APIError{Code: "invalid_arguments", Message: err.Error()}
			var arg *argError
			if errors.As(err, &arg) {
				ae.Param = arg.param
			}
			return errorResult(ae), nil
		}
		if t.Endpoint.Op.Kind == resource.Document {
			pdf, name, err := b.client.PDF(ctx, path, query)
			if err != nil {
				return b.callError(t, err), nil
			}
			return pdfResult(b.client.base+path, name, pdf), nil
		}
		var payload any
		if body != nil {
			payload = body
		}
		raw, err := b.client.Do(ctx, t.Endpoint.Method, path, query, payload)
		if err != nil {
			return b.callError(t, err), nil
		}
		return structured(raw), nil
	}
}

// callError is a failed call of t as the tool error an assistant acts on.
func (b *Bridge) callError(t Tool, err error) *mcp.CallToolResult {
	var ae *APIError
	if errors.As(err, &ae) {
		ae.Param = t.argName(ae.Param)
		return errorResult(ae)
	}
	return errorResult(&APIError{Code: "unreachable", Message: err.Error()})
}

// pdfResult answers a document's PDF as an embedded resource (its /v1
// address, application/pdf, the bytes in base64), with a line of text
// naming it for clients that show only text.
func pdfResult(uri, name string, pdf []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(fmt.Sprintf("%s (application/pdf, %d bytes), embedded below.", name, len(pdf))),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: uri, MIMEType: "application/pdf", Blob: base64.StdEncoding.EncodeToString(pdf)}),
	}}
}

// structured answers the API's JSON as structured content and as text (for
// clients that read only text); MCP wants an object, so others are {"data": ...}.
func structured(raw []byte) *mcp.CallToolResult {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		raw = append(append([]byte(`{"data":`), raw...), '}')
	}
	return &mcp.CallToolResult{
		Content:              []mcp.Content{mcp.NewTextContent(string(raw))},
		StructuredContent:    json.RawMessage(raw),
		RawStructuredContent: raw,
	}
}

// errorResult is an API error as a tool error: isError with {"error":
// ..., "hint": ...} in a text block and no structured content, which would
// have to match the tool's outputSchema (the TypeScript client rejects it
// with -32602, hiding the error from the model).
func errorResult(e *APIError) *mcp.CallToolResult {
	body, err := json.Marshal(struct {
		Error *APIError `json:"error"`
		Hint  string    `json:"hint,omitempty"`
	}{e, hint(e)})
	if err != nil {
		body = []byte(e.Error())
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(string(body))},
		IsError: true,
	}
}

// hint says what to do about the errors whose remedy is not in the message.
func hint(e *APIError) string {
	switch {
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("The rate limit held after retries; wait %d seconds before calling again.", max(e.RetryAfter, 1))
	case e.Code == "permission_denied":
		return "The API key's role does not allow this; ask a workspace admin for a key whose role does."
	case e.Status == http.StatusNotFound && e.Code == "not_found":
		return "Check the id, e.g. by listing or searching first."
	case e.Code == "unreachable":
		return "Try again later, or tell the user Ledgerbase is not reachable."
	case e.Param != "" && (e.Status == 0 || e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity):
		return "Fix the argument " + e.Param + " and call again."
	}
	return ""
}
