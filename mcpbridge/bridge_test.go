package mcpbridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// The bridge is tested as users run it: the built binary, spawned over
// stdio or serving streamable HTTP, driven by the official MCP Go SDK
// client (not mcp-go), against a real Ledgerbase on a loopback port.
func TestBridge(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "ledgerbase-mcp")
	build := exec.Command("go", "build", "-o", bin, "../cmd/ledgerbase-mcp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := apitest.Start(t)
	for name, test := range map[string]func(*testing.T, *fixture){
		"ListsToolsWithTheirSchemas":             listsToolsWithTheirSchemas,
		"ListsGetsAndWritesThroughTheAPI":        listsGetsAndWritesThroughTheAPI,
		"APIErrorsAreToolErrorsWithTheirCode":    apiErrorsAreToolErrors,
		"ReadOnlyHidesEveryWriteTool":            readOnlyHidesEveryWriteTool,
		"StarterPlanSeesNoCommerceTools":         starterPlanSeesNoCommerceTools,
		"ToolsetsNarrowTheTools":                 toolsetsNarrowTheTools,
		"RetriesA429AfterRetryAfter":             retriesA429,
		"ServesStreamableHTTP":                   servesStreamableHTTP,
		"BulkAnswersPerProduct":                  bulkAnswersPerProduct,
		"DownServerIsAClearErrorNotAHang":        downServerIsAClearError,
		"FindsPaidUnshippedOnlineOrdersAndShips": findsPaidUnshippedOnlineOrdersAndShips,
		"TypeScriptClientReadsEveryError":        typeScriptClientReadsEveryError,
		"HTTPRefusesForeignOrigins":              httpRefusesForeignOrigins,
		"ListsEventsLikeTheAPI":                  listsEventsLikeTheAPI,
		"DocumentPDFIsAnEmbeddedResource":        documentPDFIsAnEmbeddedResource,
		"CompanyProfileThroughTools":             companyProfileThroughTools,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, &fixture{bin: bin, env: env})
		})
	}
}

type fixture struct {
	bin string
	env *apitest.Env
}

// lockedBuffer collects a process's stderr while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// session is one connected MCP client and the bridge's stderr.
type session struct {
	*sdk.ClientSession
	stderr *lockedBuffer
	key    string
}

func (f *fixture) command(key string, args ...string) *exec.Cmd {
	cmd := exec.Command(f.bin, args...)
	cmd.Env = append(os.Environ(), "LEDGERBASE_URL="+f.env.URL, "LEDGERBASE_API_KEY="+key)
	return cmd
}

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "ledgerbase-test", Version: "1"}, nil)
}

// stdio spawns the bridge as a desktop assistant does.
func (f *fixture) stdio(t *testing.T, key string, args ...string) *session {
	t.Helper()
	cmd := f.command(key, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\nstderr: %s", err, stderr)
	}
	s := &session{ClientSession: cs, stderr: stderr, key: key}
	t.Cleanup(func() {
		_ = cs.Close()
		// The secret must never reach a log line.
		if strings.Contains(stderr.String(), key) {
			t.Errorf("the API key appears in the bridge's log:\n%s", stderr)
		}
	})
	return s
}

// http starts the bridge on a loopback port and connects over streamable HTTP.
func (f *fixture) http(t *testing.T, key string, args ...string) *session {
	t.Helper()
	endpoint, stderr := f.serveHTTP(t, key, "127.0.0.1:0", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v\nstderr: %s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &session{ClientSession: cs, stderr: stderr, key: key}
}

// serveHTTP starts the bridge with --http addr and returns the MCP URL it
// logs once it listens.
func (f *fixture) serveHTTP(t *testing.T, key, addr string, args ...string) (string, *lockedBuffer) {
	t.Helper()
	cmd := f.command(key, append([]string{"--http", addr}, args...)...)
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = io.MultiWriter(stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving MCP.* url=(http://\S+/mcp)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case endpoint := <-urlc:
		return endpoint, stderr
	case <-exited:
		t.Fatalf("the bridge exited:\n%s", stderr)
		return "", nil
	case <-time.After(20 * time.Second):
		t.Fatalf("the bridge did not start serving HTTP:\n%s", stderr)
		return "", nil
	}
}

func (s *session) tools(t *testing.T) map[string]*sdk.Tool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// call calls a tool and returns its result and structured content; the
// key must not appear in anything a model reads.
func (s *session) call(t *testing.T, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s", name, err, s.stderr)
	}
	raw, _ := json.Marshal(res)
	if strings.Contains(string(raw), s.key) {
		t.Fatalf("%s: the API key appears in the tool result", name)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatalf("%s: structured content is not an object: %s", name, b)
		}
	}
	return res, sc
}

// ok calls a tool that must succeed.
func (s *session) ok(t *testing.T, name string, args map[string]any) map[string]any {
	t.Helper()
	res, sc := s.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	if sc == nil {
		t.Fatalf("%s answered no structured content", name)
	}
	return sc
}

// toolError calls a tool that must fail with an API error of code.
func (s *session) toolError(t *testing.T, name string, args map[string]any, code string) map[string]any {
	t.Helper()
	res, _ := s.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want error %s", name, args, code)
	}
	return errorOf(t, name, text(res), res.StructuredContent, code)
}

// errorOf checks a tool error as every client shows it: no structured
// content (it would have to match the tool's outputSchema, and the
// TypeScript client refuses it otherwise), and the error as JSON in the
// text, {"error": {code, message, param, request_id, ...}, "hint"}.
func errorOf(t *testing.T, name, text string, structured any, code string) map[string]any {
	t.Helper()
	if structured != nil {
		t.Fatalf("%s: an error result carries structured content %v", name, structured)
	}
	var body struct {
		Error map[string]any
		Hint  string
	}
	if err := json.Unmarshal([]byte(text), &body); err != nil {
		t.Fatalf("%s: the error text is not the error's JSON: %v\n%s", name, err, text)
	}
	e := body.Error
	if e == nil || e["code"] != code {
		t.Fatalf("%s: error %s, want code %s", name, text, code)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("%s: error without a message: %v", name, e)
	}
	return e
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func schemaOf(t *testing.T, tl *sdk.Tool) map[string]any {
	t.Helper()
	b, _ := json.Marshal(tl.InputSchema)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func prop(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := schema
	for _, p := range path {
		if p == "items" {
			cur, _ = cur["items"].(map[string]any)
		} else {
			props, _ := cur["properties"].(map[string]any)
			cur, _ = props[p].(map[string]any)
		}
		if cur == nil {
			t.Fatalf("no %v in schema %v", path, schema)
		}
	}
	return cur
}

func required(schema map[string]any) []string {
	var out []string
	for _, r := range schema["required"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// orders creates sales orders in the workspace: online ones with their
// payment and shipping status, each with one line of 2 units.
type order struct {
	number          string
	online          bool
	payment, shipst string
}

func (f *fixture) orders(t *testing.T, wsID string, os ...order) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	for _, o := range os {
		c := f.env.DB.Writer.SalesOrder.Create().SetWorkspaceID(wsID).SetNumber(o.number).SetDate("2026-11-20").
			SetStatus(salesorder.StatusConfirmed).SetOnline(o.online).SetClientName("Ada Shop").
			SetAmountExclVatCents(2000).SetVatAmountCents(400).SetAmountInclVatCents(2400)
		if o.online {
			c.SetPaymentStatus(salesorder.PaymentStatus(o.payment)).SetShippingStatus(salesorder.ShippingStatus(o.shipst))
		}
		so, err := c.Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.env.DB.Writer.OrderLine.Create().SetWorkspaceID(wsID).SetSalesOrderID(so.ID).SetSku("MUG-1").
			SetDescription("Mug").SetQtyMilli(2000).SetUnitPriceCents(1000).SetAmountExclVatCents(2000).
			SetVatAmountCents(400).SetAmountInclVatCents(2400).Save(ctx); err != nil {
			t.Fatal(err)
		}
		ids[o.number] = so.ID
	}
	return ids
}

// business is a business workspace with commerce on and demo records.
func (f *fixture) business(t *testing.T) *apitest.Workspace {
	t.Helper()
	ws := f.env.Workspace(t, "business", true, true)
	if err := demo.Seed(context.Background(), f.env.DB, ws.ID, demo.Options{Invoices: 6}); err != nil {
		t.Fatal(err)
	}
	return ws
}

var writeVerbs = regexp.MustCompile(`^(create|update|add|upsert|bulk_upsert|delete|send|void|accept|decline|invoice|issue|apply|open|confirm|cancel|archive)_`)

func listsToolsWithTheirSchemas(t *testing.T, f *fixture) {
	ws := f.business(t)
	tools := f.stdio(t, ws.Key).tools(t)
	for _, name := range []string{"whoami", "list_sales_orders", "get_sales_order", "create_shipment", "update_shipment",
		"add_tracking_events", "add_invoice_payment", "add_bill_payment", "add_promotion_code", "list_invoice_payments",
		"create_client", "update_client", "add_address", "update_address", "create_vendor", "upsert_item",
		"bulk_upsert_products", "create_category", "get_online_payment", "list_online_payments", "list_gift_cards"} {
		if tools[name] == nil {
			t.Errorf("no tool %s among %v", name, names(tools))
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	so := schemaOf(t, tools["list_sales_orders"])
	if l := prop(t, so, "limit"); l["type"] != "integer" || l["maximum"] != float64(100) || l["minimum"] != float64(1) {
		t.Errorf("limit schema %v", l)
	}
	if o := prop(t, so, "online"); o["type"] != "boolean" {
		t.Errorf("online filter %v", o)
	}
	if p := prop(t, so, "payment_status"); fmt.Sprint(p["enum"]) != "[unpaid authorized paid partially_refunded refunded]" {
		t.Errorf("payment_status filter %v", p)
	}
	if p := prop(t, so, "shipping_status"); fmt.Sprint(p["enum"]) != "[not_shipped partially_shipped shipped delivered]" {
		t.Errorf("shipping_status filter %v", p)
	}
	if out := mustJSON(tools["list_sales_orders"].OutputSchema); !strings.Contains(out, `"total":{"type":"integer"}`) {
		t.Errorf("list output schema %s", out)
	}
	if so["additionalProperties"] != false {
		t.Errorf("list arguments must refuse unknown names: %v", so)
	}

	shp := schemaOf(t, tools["create_shipment"])
	if !slices.Equal(required(shp), []string{"sales_order_id"}) {
		t.Errorf("create_shipment requires %v", required(shp))
	}
	if q := prop(t, shp, "lines", "items", "qty_milli"); q["type"] != "integer" || q["minimum"] != float64(0) {
		t.Errorf("shipment line qty_milli %v", q)
	}
	// status is for updates only: a new shipment is shipped.
	if _, ok := shp["properties"].(map[string]any)["status"]; ok {
		t.Errorf("create_shipment offers status, which only updates take: %v", shp["properties"])
	}
	if st := prop(t, schemaOf(t, tools["update_shipment"]), "status"); fmt.Sprint(st["enum"]) != "[shipped in_transit delivered]" {
		t.Errorf("update_shipment status %v", st)
	}
	// add_tracking_events takes its events as a list, and says so.
	trk := tools["add_tracking_events"]
	if ts := schemaOf(t, trk); !slices.Equal(required(ts), []string{"shipment_id", "events"}) ||
		prop(t, ts, "events")["type"] != "array" || prop(t, ts, "events", "items", "occurred_at")["format"] != "date-time" {
		t.Errorf("add_tracking_events schema %s", mustJSON(ts))
	}
	if d := trk.Description; strings.Contains(d, "{events") || !strings.Contains(d, "Give them in events, a list of 1 to 100") {
		t.Errorf("add_tracking_events description does not match its schema: %s", d)
	}
	bulk := schemaOf(t, tools["bulk_upsert_products"])
	if p := prop(t, bulk, "products"); p["maxItems"] != float64(100) || p["minItems"] != float64(1) {
		t.Errorf("bulk products %v", p)
	}
	if n := prop(t, bulk, "products", "items", "name"); n["type"] != "string" {
		t.Errorf("bulk product name %v", n)
	}
	cli := schemaOf(t, tools["update_client"])
	if !slices.Equal(required(cli), []string{"id", "name"}) {
		t.Errorf("update_client requires %v", required(cli))
	}
	if pl := prop(t, cli, "preferred_language"); fmt.Sprint(pl["type"]) != "[string null]" || fmt.Sprint(pl["enum"]) != "[en fr ar bilingual <nil>]" {
		t.Errorf("preferred_language %v", pl)
	}
	pay := schemaOf(t, tools["add_invoice_payment"])
	if !slices.Equal(required(pay), []string{"invoice_id", "id", "number", "status", "date"}) {
		t.Errorf("add_invoice_payment requires %v", required(pay))
	}
	if d := prop(t, pay, "date"); d["format"] != "date" {
		t.Errorf("payment date %v", d)
	}

	for name, tl := range tools {
		a := tl.Annotations
		if a == nil || a.DestructiveHint == nil {
			t.Fatalf("%s has no annotations", name)
		}
		if write := writeVerbs.MatchString(name); a.ReadOnlyHint == write {
			t.Errorf("%s: readOnlyHint %v", name, a.ReadOnlyHint)
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", name)
		}
	}
	ann := func(name string) string {
		a := tools[name].Annotations
		return fmt.Sprintf("ro=%v destructive=%v idempotent=%v", a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint)
	}
	for name, want := range map[string]string{
		"list_invoices":        "ro=true destructive=false idempotent=true",
		"create_shipment":      "ro=false destructive=false idempotent=false",
		"update_shipment":      "ro=false destructive=true idempotent=true",
		"add_invoice_payment":  "ro=false destructive=false idempotent=true", // the caller's id is stored once
		"upsert_item":          "ro=false destructive=true idempotent=true",
		"bulk_upsert_products": "ro=false destructive=true idempotent=false",
	} {
		if got := ann(name); got != want {
			t.Errorf("%s annotations %s, want %s", name, got, want)
		}
	}
}

func names[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func listsGetsAndWritesThroughTheAPI(t *testing.T, f *fixture) {
	ws := f.business(t)
	s := f.stdio(t, ws.Key)

	me := s.ok(t, "whoami", nil)["data"].([]any)[0].(map[string]any)
	if me["workspace_id"] != ws.ID || me["plan"] != "business" {
		t.Fatalf("whoami %v", me)
	}

	type listAnswer struct {
		Data []map[string]any
		Meta struct{ Total float64 }
	}
	var api listAnswer
	f.env.Get(t, "/v1/invoices?limit=2", ws.Key).WantStatus(t, 200).Decode(t, &api)
	page := s.ok(t, "list_invoices", map[string]any{"limit": 2})
	meta := page["meta"].(map[string]any)
	if api.Meta.Total < 2 || meta["total"] != api.Meta.Total || meta["limit"] != float64(2) || len(page["data"].([]any)) != 2 {
		t.Fatalf("list_invoices %v, API total %v", meta, api.Meta.Total)
	}
	first := page["data"].([]any)[0].(map[string]any)
	if first["id"] != api.Data[0]["id"] {
		t.Fatalf("first invoice %v, API %v", first, api.Data[0])
	}
	// A named filter reaches the API as its query parameter.
	var byStatus listAnswer
	f.env.Get(t, "/v1/invoices?status="+first["status"].(string), ws.Key).WantStatus(t, 200).Decode(t, &byStatus)
	filtered := s.ok(t, "list_invoices", map[string]any{"status": first["status"]})
	if filtered["meta"].(map[string]any)["total"] != byStatus.Meta.Total {
		t.Fatalf("list_invoices status=%v: %v, API %v", first["status"], filtered["meta"], byStatus.Meta.Total)
	}
	for _, inv := range filtered["data"].([]any) {
		if inv.(map[string]any)["status"] != first["status"] {
			t.Fatalf("status filter let through %v", inv)
		}
	}

	got := s.ok(t, "get_invoice", map[string]any{"id": first["id"]})
	var want map[string]any
	f.env.Get(t, "/v1/invoices/"+first["id"].(string), ws.Key).WantStatus(t, 200).Decode(t, &want)
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Fatalf("get_invoice\n%s\nAPI\n%s", g, w)
	}

	// A write, then found through the API.
	v := s.ok(t, "create_vendor", map[string]any{"name": "Qwzx Paper Mill", "email": "orders@mill.example", "preferred_language": "fr"})
	id, _ := v["id"].(string)
	if !strings.HasPrefix(id, "ven_") {
		t.Fatalf("create_vendor answered %v", v)
	}
	var stored map[string]any
	f.env.Get(t, "/v1/vendors/"+id, ws.Key).WantStatus(t, 200).Decode(t, &stored)
	if stored["name"] != "Qwzx Paper Mill" || stored["preferred_language"] != "fr" {
		t.Fatalf("stored vendor %v", stored)
	}
	found := s.ok(t, "list_vendors", map[string]any{"q": "qwzx"})
	if found["meta"].(map[string]any)["total"] != float64(1) || found["data"].([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("list_vendors q=qwzx %v", found)
	}
}

// Bulk answers per product: one bad product does not fail the others.
func bulkAnswersPerProduct(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "business", true, true)
	s := f.stdio(t, ws.Key)
	res := s.ok(t, "bulk_upsert_products", map[string]any{"products": []any{
		map[string]any{"name": "Mug", "sku": "MUG-1", "unit_price_cents": 1200},
		map[string]any{"name": "Cup", "sku": "CUP-1", "unit_price_cents": -5},
	}})
	rows, _ := res["data"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["error"] != nil || rows[1].(map[string]any)["error"] == nil {
		t.Fatalf("bulk answer %v", res)
	}
	found := s.ok(t, "list_products", map[string]any{"q": "MUG-1"})
	if found["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("the bulk-created product is not listed: %v", found)
	}
	tooMany := make([]any, 101)
	for i := range tooMany {
		tooMany[i] = map[string]any{"name": fmt.Sprint("P", i)}
	}
	if e := s.toolError(t, "bulk_upsert_products", map[string]any{"products": tooMany}, "invalid_request"); e["param"] != "products" {
		t.Fatalf("101 products: %v", e)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func apiErrorsAreToolErrors(t *testing.T, f *fixture) {
	ws := f.business(t)
	s := f.stdio(t, ws.Key)
	e := s.toolError(t, "get_invoice", map[string]any{"id": "inv_doesnotexist"}, "not_found")
	if rid, _ := e["request_id"].(string); !strings.HasPrefix(rid, "req_") {
		t.Fatalf("not_found without the API's request_id: %v", e)
	}
	e = s.toolError(t, "list_invoices", map[string]any{"status": "sent", "client_id": ""}, "invalid_request")
	if e["param"] != "client_id" {
		t.Fatalf("invalid_request names param %v", e["param"])
	}
	// A missing id is refused before any call, naming what it is.
	e = s.toolError(t, "get_invoice", map[string]any{}, "invalid_arguments")
	if e["param"] != "id" || e["message"] != "id is required: the invoice's id (inv_...)" {
		t.Fatalf("get_invoice {}: %v", e)
	}
	e = s.toolError(t, "list_addresses", map[string]any{"client_id": "cli_nope"}, "not_found")
	if e["status"] != float64(404) || !strings.HasPrefix(fmt.Sprint(e["request_id"]), "req_") {
		t.Fatalf("list_addresses of an unknown client: %v", e)
	}

	// A custom role that only reads invoices: the vendors tools are offered
	// (the bridge cannot see grants) and the API's 403 reaches the model.
	ws.Role(t, "invoice-reader", "invoices:read")
	reader := ws.NewKey(t, access.KeySpec{Role: "invoice-reader"})
	r := f.stdio(t, reader)
	r.ok(t, "list_invoices", nil)
	e = r.toolError(t, "list_vendors", nil, "permission_denied")
	if rid, _ := e["request_id"].(string); rid == "" {
		t.Fatalf("permission_denied without request_id: %v", e)
	}
}

func readOnlyHidesEveryWriteTool(t *testing.T, f *fixture) {
	ws := f.business(t)
	all := f.stdio(t, ws.Key).tools(t)
	for _, s := range []*session{
		f.stdio(t, ws.Key, "--read-only"),
		f.stdio(t, ws.NewKey(t, access.KeySpec{Role: access.RoleViewer})), // a viewer key cannot write either
	} {
		ro := s.tools(t)
		var want []string
		for name, tl := range all {
			if tl.Annotations.ReadOnlyHint {
				want = append(want, name)
			}
		}
		if got := names(ro); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Fatalf("read-only tools %v\nwant %v", got, want)
		}
		for name := range ro {
			if writeVerbs.MatchString(name) {
				t.Fatalf("read-only bridge offers %s", name)
			}
		}
		if len(ro) < 30 {
			t.Fatalf("read-only bridge offers only %d tools", len(ro))
		}
	}
}

func starterPlanSeesNoCommerceTools(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "starter", false, false)
	tools := f.stdio(t, ws.Key).tools(t)
	for name := range tools {
		// Business-plan commerce resources, growth-plan clients, and the
		// catalog's commerce-mode products and categories are all out of reach.
		if regexp.MustCompile(`shipment|tracking|store|return|promotion|gift_card|online_payment|list_payments|client|address|product|categor`).MatchString(name) {
			t.Errorf("a starter workspace without commerce is offered %s", name)
		}
	}
	for _, name := range []string{"whoami", "list_invoices", "add_invoice_payment", "list_sales_orders", "create_vendor", "upsert_item"} {
		if tools[name] == nil {
			t.Errorf("a starter workspace is not offered %s", name)
		}
	}
	// Commerce mode and module on a starter plan open products and categories only.
	cws := f.env.Workspace(t, "starter", true, true)
	ct := f.stdio(t, cws.Key).tools(t)
	if ct["list_products"] == nil || ct["create_category"] == nil || ct["create_shipment"] != nil || ct["list_stores"] != nil {
		t.Errorf("starter with commerce: %v", names(ct))
	}
}

func toolsetsNarrowTheTools(t *testing.T, f *fixture) {
	ws := f.business(t)
	tools := f.stdio(t, ws.Key, "--toolsets", "catalog,purchasing").tools(t)
	for name := range tools {
		if !regexp.MustCompile(`^whoami$|item|product|categor|vendor|bill`).MatchString(name) {
			t.Errorf("--toolsets catalog,purchasing offers %s", name)
		}
	}
	if tools["bulk_upsert_products"] == nil || tools["add_bill_payment"] == nil || tools["whoami"] == nil {
		t.Errorf("--toolsets catalog,purchasing: %v", names(tools))
	}
	out, err := f.command(ws.Key, "--toolsets", "sales,nope").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown toolset "nope"`) {
		t.Fatalf("an unknown toolset must stop the bridge: %v %s", err, out)
	}
}

func retriesA429(t *testing.T, f *fixture) {
	ws := f.business(t)
	// 30 a minute: the bucket refills one request every 2 seconds.
	key := ws.NewKey(t, access.KeySpec{Role: access.RoleAdmin, RateLimit: ptr(30)})
	s := f.stdio(t, key)
	noRetry := f.stdio(t, key, "--retries", "0")
	drain := func() {
		for i := 0; i < 100; i++ {
			if r := f.env.Get(t, "/v1/me", key); r.Status == 429 {
				return
			}
		}
		t.Fatal("the rate limit never answered 429")
	}

	drain()
	e := noRetry.toolError(t, "list_invoices", nil, "rate_limited")
	if e["retry_after"] == nil {
		t.Fatalf("rate_limited without retry_after: %v", e)
	}

	drain()
	start := time.Now()
	page := s.ok(t, "list_invoices", nil)
	var api struct{ Meta struct{ Total float64 } }
	f.env.Get(t, "/v1/invoices", ws.Key).WantStatus(t, 200).Decode(t, &api)
	if page["meta"].(map[string]any)["total"] != api.Meta.Total {
		t.Fatalf("list after retry %v, API total %v", page["meta"], api.Meta.Total)
	}
	if !strings.Contains(s.stderr.String(), "rate limited; retrying") || time.Since(start) < time.Second {
		t.Fatalf("the call succeeded without waiting out the 429 (%s):\n%s", time.Since(start), s.stderr)
	}
}

func ptr(n int) *int { return &n }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func servesStreamableHTTP(t *testing.T, f *fixture) {
	ws := f.business(t)
	ids := f.orders(t, ws.ID, order{number: "SO-H1", online: true, payment: "paid", shipst: "not_shipped"})
	s := f.http(t, ws.Key)
	tools := s.tools(t)
	if tools["list_sales_orders"] == nil || tools["create_shipment"] == nil {
		t.Fatalf("HTTP tools %v", names(tools))
	}
	got := s.ok(t, "get_sales_order", map[string]any{"id": ids["SO-H1"]})
	if got["number"] != "SO-H1" || len(got["lines"].([]any)) != 1 {
		t.Fatalf("get_sales_order over HTTP %v", got)
	}
	s.toolError(t, "get_sales_order", map[string]any{"id": "so_nope"}, "not_found")

	ro := f.http(t, ws.Key, "--read-only").tools(t)
	for name := range ro {
		if writeVerbs.MatchString(name) {
			t.Fatalf("read-only over HTTP offers %s", name)
		}
	}
}

func downServerIsAClearError(t *testing.T, f *fixture) {
	ws := f.business(t)
	run := func(url string, args ...string) (string, time.Duration) {
		cmd := exec.Command(f.bin, args...)
		cmd.Env = append(os.Environ(), "LEDGERBASE_URL="+url, "LEDGERBASE_API_KEY="+ws.Key)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the bridge started against %s: %s", url, out)
		}
		if strings.Contains(string(out), ws.Key) {
			t.Fatalf("the key appears in the error: %s", out)
		}
		return string(out), time.Since(start)
	}

	// Nothing listens: refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if out, _ := run(closed); !strings.Contains(out, "cannot reach Ledgerbase at "+closed) {
		t.Fatalf("down server: %s", out)
	}

	// A server that accepts and never answers: the timeout ends the wait.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	out, took := run("http://"+hang.Addr().String(), "--timeout", "1s")
	if !strings.Contains(out, "did not answer within 1s") || took > 10*time.Second {
		t.Fatalf("hanging server (%s): %s", took, out)
	}

	// Down in the middle of a session: the call answers a tool error at once.
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(mustURL(t, f.env.URL)))
	defer proxy.Close()
	cmd := exec.Command(f.bin)
	cmd.Env = append(os.Environ(), "LEDGERBASE_URL="+proxy.URL, "LEDGERBASE_API_KEY="+ws.Key)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s := &session{ClientSession: cs, stderr: &lockedBuffer{}, key: ws.Key}
	s.ok(t, "list_invoices", nil)
	proxy.Close()
	if e := s.toolError(t, "list_invoices", nil, "unreachable"); !strings.Contains(e["message"].(string), "cannot reach Ledgerbase at "+proxy.URL) {
		t.Fatalf("server gone mid-session: %v", e)
	}

	// A wrong key says so.
	cmd = exec.Command(f.bin)
	cmd.Env = append(os.Environ(), "LEDGERBASE_URL="+f.env.URL, "LEDGERBASE_API_KEY=lb_wrong")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "refused the API key") {
		t.Fatalf("wrong key: %v %s", err, out)
	}
}

// The done-when scenario: given only the bridge, an assistant answers
// "which online orders are paid but not shipped?" with one filtered list
// call, and ships one of them.
func findsPaidUnshippedOnlineOrdersAndShips(t *testing.T, f *fixture) {
	ws := f.env.Workspace(t, "business", true, true) // only the orders below
	ids := f.orders(t, ws.ID,
		order{number: "SO-1", online: true, payment: "paid", shipst: "not_shipped"},
		order{number: "SO-2", online: true, payment: "paid", shipst: "not_shipped"},
		order{number: "SO-3", online: true, payment: "unpaid", shipst: "not_shipped"},
		order{number: "SO-4", online: true, payment: "paid", shipst: "shipped"},
		order{number: "SO-5", online: false},
	)
	s := f.stdio(t, ws.Key)
	ask := map[string]any{"online": true, "payment_status": "paid", "shipping_status": "not_shipped"}
	page := s.ok(t, "list_sales_orders", ask)
	var numbers []string
	for _, o := range page["data"].([]any) {
		numbers = append(numbers, o.(map[string]any)["number"].(string))
	}
	if !slices.Equal(numbers, []string{"SO-2", "SO-1"}) || page["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("paid, unshipped online orders: %v (meta %v)", numbers, page["meta"])
	}

	shp := s.ok(t, "create_shipment", map[string]any{"sales_order_id": ids["SO-1"], "carrier": "UPS", "tracking_no": "1Z999"})
	if !strings.HasPrefix(fmt.Sprint(shp["id"]), "shp_") || shp["sales_order_id"] != ids["SO-1"] {
		t.Fatalf("create_shipment %v", shp)
	}
	var so map[string]any
	f.env.Get(t, "/v1/sales-orders/"+ids["SO-1"], ws.Key).WantStatus(t, 200).Decode(t, &so)
	if so["shipping_status"] != "shipped" {
		t.Fatalf("after shipping, the order's shipping_status is %v", so["shipping_status"])
	}
	page = s.ok(t, "list_sales_orders", ask)
	if page["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("after shipping SO-1 the question answers %v", page["data"])
	}
	// The carrier's events join the shipment's timeline; a repeat is stored once.
	ev := map[string]any{"carrier_event_id": "ups-1", "occurred_at": "2026-11-21T09:00:00Z", "status": "in_transit", "location": "Lyon"}
	s.ok(t, "add_tracking_events", map[string]any{"shipment_id": shp["id"], "events": []any{ev}})
	got := s.ok(t, "add_tracking_events", map[string]any{"shipment_id": shp["id"], "events": []any{ev}})
	if events, _ := got["events"].([]any); len(events) != 1 {
		t.Fatalf("tracking events after a repeat: %v", got["events"])
	}

	// Shipping it again: nothing remains, and the model is told why.
	if e := s.toolError(t, "create_shipment", map[string]any{"sales_order_id": ids["SO-1"]}, "over_shipment"); e["status"] != float64(409) {
		t.Fatalf("shipping twice: %v", e)
	}

	// An online order pushed through the bridge itself, with its capture,
	// is then the answer to the question, and ships.
	store := s.ok(t, "create_store", map[string]any{"name": "Web", "free_address": "web.example.shop"})
	pushed := s.ok(t, "create_sales_order", map[string]any{"client_name": "Ana", "store_id": store["id"],
		"lines":    []any{map[string]any{"description": "Mug", "qty_milli": 2000, "unit_price_cents": 1500, "vat_rate_bp": 2000}},
		"payments": []any{map[string]any{"kind": "capture", "amount_cents": 3600, "external_id": "ch_1"}}})
	if pushed["payment_status"] != "paid" || pushed["shipping_status"] != "not_shipped" || pushed["status"] != "confirmed" {
		t.Fatalf("pushed order %v", pushed)
	}
	page = s.ok(t, "list_sales_orders", ask)
	if first := page["data"].([]any)[0].(map[string]any); first["id"] != pushed["id"] {
		t.Fatalf("the pushed order is not the newest paid, unshipped one: %v", first["id"])
	}
	s.ok(t, "create_shipment", map[string]any{"sales_order_id": pushed["id"], "carrier": "UPS"})
	if page = s.ok(t, "list_sales_orders", ask); page["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("after shipping the pushed order the question answers %v", page["data"])
	}
}
