package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// answerTo renders err through the server's one error handler, as a
// request that failed with it would be answered.
func answerTo(t *testing.T, env *apitest.Env, err error) (int, map[string]any) {
	t.Helper()
	app := env.Server.App
	c := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(c)
	if herr := app.Config().ErrorHandler(c, err); herr != nil {
		t.Fatal(herr)
	}
	var b struct {
		Error map[string]any `json:"error"`
	}
	if jerr := json.Unmarshal(c.Response().Body(), &b); jerr != nil || b.Error == nil {
		t.Fatalf("not an error body: %s", c.Response().Body())
	}
	return c.Response().StatusCode(), b.Error
}

// The net under request validation: real refusals of the data model —
// ent's validators, the database's constraints and data checks, on
// whichever database the harness runs — are the client's 400 or 409,
// never a 500, and show no SQL.
func TestDatabaseRefusalsAre4xx(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "business", true, true)
	ctx := context.Background()
	db := env.DB.Ent
	ven, err := db.Vendor.Create().SetWorkspaceID(ws.ID).SetName("V").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Category.Create().SetWorkspaceID(ws.ID).SetName("C").SetSlug("c").Save(ctx); err != nil {
		t.Fatal(err)
	}
	type refusal struct {
		what   string
		err    error
		status int
		code   string
	}
	var cases []refusal
	add := func(what string, status int, code string, err error) {
		if err == nil {
			t.Fatalf("%s: the database accepted it", what)
		}
		cases = append(cases, refusal{what, err, status, code})
	}
	_, err = db.Customer.Create().SetWorkspaceID(ws.ID).SetName("").Save(ctx)
	add("ent NotEmpty", 400, "invalid_request", err)
	_, err = db.Vendor.Create().SetWorkspaceID(ws.ID).SetName("V").SetCurrencyCode("EURO").Save(ctx)
	add("ent MaxLen", 400, "invalid_request", err)
	_, err = db.Category.Create().SetID(ids.New("cat")).SetWorkspaceID(ws.ID).SetName("C2").SetSlug("c").Save(ctx)
	add("unique index", 409, "duplicate", err)
	_, err = env.DB.Write.ExecContext(ctx, "UPDATE vendors SET name = NULL WHERE id = $1", ven.ID)
	add("NOT NULL", 400, "invalid_request", err)
	if apitest.Backend() == "postgres" {
		_, err = env.DB.Write.ExecContext(ctx, "UPDATE vendors SET notes = $1 WHERE id = $2", "a\x00b", ven.ID)
		add("NUL in text (22021)", 400, "invalid_request", err)
	}
	cli, err := db.Customer.Create().SetWorkspaceID(ws.ID).SetName("C").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adr, err := db.Address.Create().SetWorkspaceID(ws.ID).SetClientID(cli.ID).SetName("A").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.DB.Write.ExecContext(ctx, "UPDATE addresses SET client_id = 'cli_nope' WHERE id = $1", adr.ID)
	add("foreign key", 400, "invalid_request", err)
	for _, c := range cases {
		status, e := answerTo(t, env, c.err)
		if status != c.status || e["code"] != c.code {
			t.Errorf("%s: answered %d %v, want %d %s (%v)", c.what, status, e["code"], c.status, c.code, c.err)
		}
		for _, leak := range []string{"UPDATE", "INSERT", "vendors", "constraint"} {
			if msg, _ := e["message"].(string); strings.Contains(msg, leak) {
				t.Errorf("%s: the message shows %q: %s", c.what, leak, msg)
			}
		}
	}
}
