package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// ConfigOp names a write of the appliance's configuration: workspaces,
// API keys, roles and webhook endpoints. They are not records of the
// declarations (api/resource) but take the same way in (Core.Write, with
// WriteRequest.Config): gate, body, idempotency key, one transaction,
// answer. Each is declared once, in configOps.
type ConfigOp string

// The configuration writes. ID (and ChildID) of the WriteRequest name
// the object of those that change one.
const (
	CreateWorkspace ConfigOp = "create workspace"
	UpdateWorkspace ConfigOp = "update workspace" // the principal's
	CreateKey       ConfigOp = "create key"       // answers the secret once (Result.Secret), kept nowhere
	RevokeKey       ConfigOp = "revoke key"
	CreateRole      ConfigOp = "create role"
	UpdateRole      ConfigOp = "update role" // its grants; the name stays, since keys refer to it
	DeleteRole      ConfigOp = "delete role"
	CreateEndpoint  ConfigOp = "create webhook endpoint"
	UpdateEndpoint  ConfigOp = "update webhook endpoint"
	DeleteEndpoint  ConfigOp = "delete webhook endpoint"
	RotateSecret    ConfigOp = "rotate webhook secret"
	RetryDelivery   ConfigOp = "retry webhook delivery" // ChildID is the delivery
)

// configOp is one configuration write: what it manages (its gate's
// refusal names it), its body rule and transaction body (read), whether
// it changes who may call what, and what runs once it committed.
type configOp struct {
	what string
	// access: the write changes keys, roles or a workspace's plan, so
	// cached key lookups are dropped after it (other processes see it
	// through database.AccessGen).
	access bool
	// read checks the request's body and is the write to run in its
	// transaction: the status and JSON it answers.
	read  func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error)
	after func()
}

type txBody func(ctx context.Context, tx *ent.Tx) (writes.Result, error)

// configOps is every configuration write: the one table that says how
// each is gated, read and run. Every one is for admins only: an admin
// key, an admin in the UI, or the command line (access.System).
var configOps = map[ConfigOp]configOp{
	CreateWorkspace: {what: "workspaces", read: rule(jsonBody[workspaceIn], createWorkspace)},
	UpdateWorkspace: {what: "workspaces", access: true, read: rule(jsonBody[workspaceIn], updateWorkspace)},
	CreateKey:       {what: "API keys", access: true, read: rule(jsonBody[keyIn], createKey)},
	RevokeKey:       {what: "API keys", access: true, read: rule(noFields, revokeKey)},
	CreateRole:      {what: "roles", access: true, read: rule(jsonBody[roleIn], createRole)},
	UpdateRole:      {what: "roles", access: true, read: rule(jsonBody[grantsIn], updateRole)},
	DeleteRole:      {what: "roles", access: true, read: rule(noFields, deleteRole)},
	CreateEndpoint:  {what: "webhook endpoints", read: rule(endpointBody(true), createEndpoint)},
	UpdateEndpoint:  {what: "webhook endpoints", read: rule(endpointBody(false), updateEndpoint)},
	DeleteEndpoint:  {what: "webhook endpoints", read: rule(noFields, deleteEndpoint)},
	RotateSecret:    {what: "webhook endpoints", read: rule(noFields, rotateSecret)},
	// Wake the worker again once the delivery is committed.
	RetryDelivery: {what: "webhook endpoints", read: rule(noFields, retryDelivery), after: webhooks.Wake},
}

// rule binds a body rule to the transaction body that takes what it read.
func rule[T any](read func(c *Core, ctx context.Context, w *WriteRequest) (T, error),
	run func(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, in T) (writes.Result, error),
) func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error) {
	return func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error) {
		in, err := read(c, ctx, w)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, tx *ent.Tx) (writes.Result, error) { return run(ctx, tx, w.Principal, w, in) }, nil
	}
}

// configure gates and reads a configuration write, and is the write to
// run in its transaction with the key's pending answer.
func (c *Core) configure(ctx context.Context, w *WriteRequest) (func(p *idempotency.Pending) (writes.Result, error), error) {
	op, ok := configOps[w.Config]
	if !ok {
		return nil, apierr.New(http.StatusNotFound, "route_not_found", "no such operation")
	}
	if err := adminOnly(w.Principal, op.what); err != nil {
		return nil, err
	}
	run, err := op.read(c, ctx, w)
	if err != nil {
		return nil, err
	}
	return func(p *idempotency.Pending) (writes.Result, error) {
		var res writes.Result
		err := c.DB.InTx(ctx, func(tx *ent.Tx) error {
			_, _, err := p.Within(ctx, tx, func() (int, []byte, error) {
				var err error
				res, err = run(ctx, tx)
				return res.Status, res.Body, err
			})
			return err
		})
		if err == nil {
			if op.access {
				c.Auth.Invalidate()
			}
			if op.after != nil {
				op.after()
			}
		}
		return res, err
	}, nil
}

// adminOnly is the gate of every configuration write, and of the
// webhook endpoints' reads: admins only.
func adminOnly(p *access.Principal, what string) error {
	if p.Key.Role != access.RoleAdmin {
		return apierr.Forbidden("permission_denied", "the key's role %q may not manage %s (admin only)", p.Key.Role, what)
	}
	return nil
}

// answer is a configuration write's answer: status and v as JSON.
func answer(status int, v any) (writes.Result, error) {
	b, err := json.Marshal(v)
	return writes.Result{Status: status, Body: b}, err
}

// jsonBody reads a body of JSON into T, strictly (an unknown field is
// 400), and checks it.
func jsonBody[T interface{ check() error }](_ *Core, _ context.Context, w *WriteRequest) (T, error) {
	var in T
	raw, err := body.Read(w.ContentType, w.Body, true)
	if err != nil {
		return in, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		return in, apierr.InvalidJSON("the body is not the JSON this write takes: %v", err)
	}
	return in, in.check()
}

// noFields reads the body of a DELETE or an action that takes no fields
// as every such write reads its body: none, or a JSON object with no
// field in it.
func noFields(_ *Core, _ context.Context, w *WriteRequest) (struct{}, error) {
	raw, err := body.Read(w.ContentType, w.Body, true)
	if err == nil {
		_, err = body.Parse(raw, nil)
	}
	return struct{}{}, err
}

// Workspaces.

// workspaceIn is a workspace's create or settings.
type workspaceIn struct {
	Name           string `json:"name"`
	Plan           string `json:"plan"`
	CommerceMode   bool   `json:"commerce_mode"`
	CommerceModule bool   `json:"commerce_module"`
}

func (in workspaceIn) check() error {
	if strings.TrimSpace(in.Name) == "" {
		return apierr.Invalid("name", "a workspace needs a name")
	}
	if _, ok := resource.ParsePlan(in.Plan); !ok {
		return apierr.Invalid("plan", "unknown plan %q: use starter, growth or business", in.Plan)
	}
	return nil
}

func showWorkspace(ws *ent.Workspace) any {
	return map[string]any{"id": ws.ID, "object": "workspace", "name": ws.Name, "plan": ws.Plan,
		"commerce_mode": ws.CommerceMode, "commerce_module": ws.CommerceModule}
}

func createWorkspace(ctx context.Context, tx *ent.Tx, _ *access.Principal, _ *WriteRequest, in workspaceIn) (writes.Result, error) {
	ws, err := access.NewWorkspace(ctx, tx.Client(), in.Name, in.Plan, in.CommerceMode, in.CommerceModule)
	if err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusCreated, showWorkspace(ws))
}

func updateWorkspace(ctx context.Context, tx *ent.Tx, p *access.Principal, _ *WriteRequest, in workspaceIn) (writes.Result, error) {
	ws, err := tx.Workspace.UpdateOneID(p.Workspace.ID).SetName(in.Name).SetPlan(workspace.Plan(in.Plan)).
		SetCommerceMode(in.CommerceMode).SetCommerceModule(in.CommerceModule).Save(ctx)
	if err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, showWorkspace(ws))
}

// API keys.

// keyIn is a new key: ExpiresIn a Go duration ("720h"; "" never expires),
// RateLimit per minute (nil the plan's, 0 unlimited).
type keyIn struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	ExpiresIn string `json:"expires_in"`
	RateLimit *int   `json:"rate_limit"`
}

func (in keyIn) check() error {
	if d, err := time.ParseDuration(in.ExpiresIn); in.ExpiresIn != "" && (err != nil || d <= 0) {
		return apierr.Invalid("expires_in", "expires_in must be a positive duration, e.g. 720h")
	}
	if in.RateLimit != nil && *in.RateLimit < 0 {
		return apierr.Invalid("rate_limit", "rate limit must be 0 (unlimited) or more")
	}
	return nil
}

// KeyJSON is a key as a configuration write answers it: never its secret
// (Result.Secret has it, once) nor its hash.
type KeyJSON struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func createKey(ctx context.Context, tx *ent.Tx, p *access.Principal, _ *WriteRequest, in keyIn) (writes.Result, error) {
	spec := access.KeySpec{WorkspaceID: p.Workspace.ID, Name: in.Name, Role: in.Role, RateLimit: in.RateLimit}
	spec.ExpiresIn, _ = time.ParseDuration(in.ExpiresIn)
	secret, k, err := access.NewKey(ctx, tx.Client(), spec)
	var capped *access.KeyCapError
	if errors.As(err, &capped) {
		return writes.Result{}, apierr.Conflict("key_limit_reached", "%s", capped.Error())
	}
	if err != nil {
		return writes.Result{}, err
	}
	res, err := answer(http.StatusCreated, KeyJSON{ID: k.ID, Object: "api_key", Name: k.Name, Role: k.Role, Prefix: k.Prefix,
		ExpiresAt: access.KeyExpiry(k.ExpiresAt)})
	res.Secret = secret
	return res, err
}

func revokeKey(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, _ struct{}) (writes.Result, error) {
	ok, err := tx.APIKey.Query().Where(apikey.ID(w.ID), apikey.WorkspaceID(p.Workspace.ID)).Exist(ctx)
	if err != nil {
		return writes.Result{}, err
	}
	if !ok {
		return writes.Result{}, apierr.NotFound("API key")
	}
	if err := access.RevokeKey(ctx, tx.Client(), w.ID); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, map[string]any{"id": w.ID, "object": "api_key", "revoked": true})
}

// Roles.

// grantsIn is a role's matrix: resource name to none, read or write.
type grantsIn struct {
	Grants map[string]string `json:"grants"`
}

func (in grantsIn) check() error {
	for name, acc := range in.Grants {
		if !slices.Contains(resource.Grantable(), name) {
			return apierr.Invalid("grants", "unknown resource %q (one of %s)", name, strings.Join(resource.Grantable(), ", "))
		}
		if _, ok := resource.ParseAccess(acc); !ok {
			return apierr.Invalid("grants", "access to %s must be none, read or write", name)
		}
	}
	return nil
}

// roleIn is a new role.
type roleIn struct {
	Name string `json:"name"`
	grantsIn
}

func (in roleIn) check() error {
	switch {
	case in.Name == access.RoleAdmin || in.Name == access.RoleViewer:
		return apierr.Invalid("name", "%q is a built-in role", in.Name)
	case strings.TrimSpace(in.Name) == "":
		return apierr.Invalid("name", "a role needs a name")
	}
	return in.grantsIn.check()
}

func showRole(r *ent.Role) any {
	return map[string]any{"id": r.ID, "object": "role", "name": r.Name, "grants": r.Grants}
}

func createRole(ctx context.Context, tx *ent.Tx, p *access.Principal, _ *WriteRequest, in roleIn) (writes.Result, error) {
	r, err := access.NewRole(ctx, tx.Client(), p.Workspace.ID, in.Name, in.Grants)
	if ent.IsConstraintError(err) {
		return writes.Result{}, apierr.Conflict("duplicate", "a role named %s exists already", in.Name)
	}
	if err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusCreated, showRole(r))
}

// roleOf is p's workspace's role id.
func roleOf(ctx context.Context, tx *ent.Tx, p *access.Principal, id string) (*ent.Role, error) {
	r, err := tx.Role.Query().Where(role.ID(id), role.WorkspaceID(p.Workspace.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("role")
	}
	return r, err
}

func updateRole(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, in grantsIn) (writes.Result, error) {
	r, err := roleOf(ctx, tx, p, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	if r, err = r.Update().SetGrants(in.Grants).Save(ctx); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, showRole(r))
}

func deleteRole(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, _ struct{}) (writes.Result, error) {
	r, err := roleOf(ctx, tx, p, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	if err := tx.Role.DeleteOne(r).Exec(ctx); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, map[string]any{"id": r.ID, "object": "role", "deleted": true})
}

// Webhook endpoints (endpoints.go shows them).

func endpointBody(create bool) func(c *Core, ctx context.Context, w *WriteRequest) (webhooks.EndpointChange, error) {
	return func(c *Core, ctx context.Context, w *WriteRequest) (webhooks.EndpointChange, error) {
		return c.EndpointBody(ctx, w.ContentType, w.Body, create)
	}
}

// createEndpoint answers the new endpoint's secret, this once (and again
// to a retry under the same key, since a client that lost the answer has
// no other way to learn it).
func createEndpoint(ctx context.Context, tx *ent.Tx, p *access.Principal, _ *WriteRequest, in webhooks.EndpointChange) (writes.Result, error) {
	e, err := webhooks.CreateEndpoint(ctx, tx.Client(), p.Workspace.ID, in)
	if err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusCreated, showEndpoint(e, true))
}

func updateEndpoint(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, in webhooks.EndpointChange) (writes.Result, error) {
	e, err := webhooks.FindEndpoint(ctx, tx.Client(), p.Workspace.ID, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	if e, err = webhooks.UpdateEndpoint(ctx, e, tx.Client(), in); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, showEndpoint(e, false))
}

// deleteEndpoint deletes the endpoint; its deliveries and their log go
// with it.
func deleteEndpoint(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, _ struct{}) (writes.Result, error) {
	e, err := webhooks.FindEndpoint(ctx, tx.Client(), p.Workspace.ID, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	if err := webhooks.DeleteEndpoint(ctx, tx, e.ID); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, map[string]any{"id": e.ID, "object": "webhook_endpoint", "deleted": true})
}

// rotateSecret issues the endpoint a new secret; the old one keeps
// signing for 24 h, so receivers can switch without missing a delivery.
// Under a key a retry replays the first rotation: a second one would end
// the first secret's overlap before anyone learned the new one.
func rotateSecret(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, _ struct{}) (writes.Result, error) {
	e, err := webhooks.FindEndpoint(ctx, tx.Client(), p.Workspace.ID, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	if e, err = webhooks.RotateSecret(ctx, tx.Client(), e); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, showEndpoint(e, true))
}

// retryDelivery ("send again") makes the delivery ChildID of the endpoint
// due now, whatever its state.
func retryDelivery(ctx context.Context, tx *ent.Tx, p *access.Principal, w *WriteRequest, _ struct{}) (writes.Result, error) {
	e, err := webhooks.FindEndpoint(ctx, tx.Client(), p.Workspace.ID, w.ID)
	if err != nil {
		return writes.Result{}, err
	}
	d, err := webhooks.Retry(ctx, tx.Client(), e.ID, w.ChildID)
	if err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, showDelivery(d))
}
