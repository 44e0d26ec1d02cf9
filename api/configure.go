package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
)

// ConfigOp names a write of the appliance's configuration (workspaces, API
// keys, roles, webhook endpoints): not records of api/resource, but taking
// the same way in (Core.Write with WriteRequest.Config). See configOps.
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
	SendEmailAgain  ConfigOp = "send email again"       // ID is the document, ChildID the message
)

// configOp is one configuration write: what it manages (its gate's
// refusal names it), its body rule and transaction body (read), and what
// runs once it committed.
type configOp struct {
	what string
	// access: the write changes keys, roles or a plan, so cached key
	// lookups are dropped after it.
	access bool
	read   func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error)
	after  func()
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
	UpdateRole:      {what: "roles", access: true, read: rule(jsonBody[roleIn], onRole(updateRole))},
	DeleteRole:      {what: "roles", access: true, read: rule(noFields, onRole(deleteRole))},
	CreateEndpoint:  {what: "webhook endpoints", read: rule(endpointBody(true), createEndpoint)},
	UpdateEndpoint:  {what: "webhook endpoints", read: rule(endpointBody(false), onEndpoint(updateEndpoint))},
	DeleteEndpoint:  {what: "webhook endpoints", read: rule(noFields, onEndpoint(deleteEndpoint))},
	RotateSecret:    {what: "webhook endpoints", read: rule(noFields, onEndpoint(rotateSecret))},
	// Wake the worker again once the delivery is committed.
	RetryDelivery: {what: "webhook endpoints", read: rule(noFields, onEndpoint(retryDelivery)), after: webhooks.Wake},
	// The outbox is served by the webhooks' worker: the same wake.
	SendEmailAgain: {what: "emails", read: rule(noFields, sendEmailAgain), after: webhooks.Wake},
}

// rule binds a body rule to the transaction body that takes what it read.
func rule[T any](read func(c *Core, ctx context.Context, w *WriteRequest) (T, error),
	run func(ctx context.Context, tx *ent.Tx, w *WriteRequest, in T) (writes.Result, error),
) func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error) {
	return func(c *Core, ctx context.Context, w *WriteRequest) (txBody, error) {
		in, err := read(c, ctx, w)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, tx *ent.Tx) (writes.Result, error) { return run(ctx, tx, w, in) }, nil
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

// answer is a configuration write's answer unless it failed (err): status
// and what show gives, as JSON.
func answer(status int, err error, show func() any) (writes.Result, error) {
	if err != nil {
		return writes.Result{}, err
	}
	b, err := json.Marshal(show())
	return writes.Result{Status: status, Body: b}, err
}

// deleted is the answer of a delete, as every DELETE answers.
func deleted(id, object string) func() any {
	return func() any { return json.RawMessage(writes.Deleted(id, object)) }
}

// jsonBody reads a body of JSON into T, strictly: an unknown field is
// 400. What it holds is checked where it is written (api/access).
func jsonBody[T any](_ *Core, _ context.Context, w *WriteRequest) (T, error) {
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
	return in, nil
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

// workspaceIn is a workspace's create or settings.
type workspaceIn struct {
	Name           string `json:"name"`
	Plan           string `json:"plan"`
	CommerceMode   bool   `json:"commerce_mode"`
	CommerceModule bool   `json:"commerce_module"`
}

func createWorkspace(ctx context.Context, tx *ent.Tx, _ *WriteRequest, in workspaceIn) (writes.Result, error) {
	ws, err := access.NewWorkspace(ctx, tx.Client(), in.Name, in.Plan, in.CommerceMode, in.CommerceModule)
	return answer(http.StatusCreated, err, func() any { return showWorkspace(ws) })
}

func updateWorkspace(ctx context.Context, tx *ent.Tx, w *WriteRequest, in workspaceIn) (writes.Result, error) {
	ws, err := access.UpdateWorkspace(ctx, tx.Client(), w.Principal.Workspace.ID, in.Name, in.Plan, in.CommerceMode, in.CommerceModule)
	return answer(http.StatusOK, err, func() any { return showWorkspace(ws) })
}

func showWorkspace(ws *ent.Workspace) any {
	return map[string]any{"id": ws.ID, "object": "workspace", "name": ws.Name, "plan": ws.Plan,
		"commerce_mode": ws.CommerceMode, "commerce_module": ws.CommerceModule}
}

// keyIn is a new key: ExpiresIn a Go duration ("720h"; "" never expires),
// RateLimit per minute (nil the plan's, 0 unlimited).
type keyIn struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	ExpiresIn string `json:"expires_in"`
	RateLimit *int   `json:"rate_limit"`
}

// createKey answers the key (never its hash) and its secret once, in
// Result.Secret: not in the body, so kept nowhere.
func createKey(ctx context.Context, tx *ent.Tx, w *WriteRequest, in keyIn) (writes.Result, error) {
	spec := access.KeySpec{WorkspaceID: w.Principal.Workspace.ID, Name: in.Name, Role: in.Role, RateLimit: in.RateLimit}
	if in.ExpiresIn != "" {
		var err error
		if spec.ExpiresIn, err = time.ParseDuration(in.ExpiresIn); err != nil || spec.ExpiresIn <= 0 {
			return writes.Result{}, apierr.Invalid("expires_in", "expires_in must be a positive duration, e.g. 720h")
		}
	}
	secret, k, err := access.NewKey(ctx, tx.Client(), spec)
	if capped := (*access.KeyCapError)(nil); errors.As(err, &capped) {
		return writes.Result{}, apierr.Conflict("key_limit_reached", "%s", capped.Error())
	}
	res, err := answer(http.StatusCreated, err, func() any { return showKey(k) })
	res.Secret = secret
	return res, err
}

func showKey(k *ent.APIKey) any {
	return map[string]any{"id": k.ID, "object": "api_key", "name": k.Name, "role": k.Role, "prefix": k.Prefix,
		"expires_at": access.KeyExpiry(k.ExpiresAt)}
}

func revokeKey(ctx context.Context, tx *ent.Tx, w *WriteRequest, _ struct{}) (writes.Result, error) {
	k, err := tx.APIKey.Query().Where(apikey.ID(w.ID), apikey.WorkspaceID(w.Principal.Workspace.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return writes.Result{}, apierr.NotFound("API key")
	}
	if err == nil {
		err = access.RevokeKey(ctx, tx.Client(), k.ID)
	}
	return answer(http.StatusOK, err, func() any { return showKey(k) })
}

// roleIn is a role: its name (on create; it stays, since keys refer to
// it) and its grants, resource name to none, read or write.
type roleIn struct {
	Name   string            `json:"name"`
	Grants map[string]string `json:"grants"`
}

func createRole(ctx context.Context, tx *ent.Tx, w *WriteRequest, in roleIn) (writes.Result, error) {
	r, err := access.NewRole(ctx, tx.Client(), w.Principal.Workspace.ID, in.Name, in.Grants)
	if ent.IsConstraintError(err) {
		return writes.Result{}, apierr.Conflict("duplicate", "a role named %s exists already", in.Name)
	}
	return answer(http.StatusCreated, err, func() any { return showRole(r) })
}

func showRole(r *ent.Role) any {
	return map[string]any{"id": r.ID, "object": "role", "name": r.Name, "grants": r.Grants}
}

// onRole runs write on the principal's workspace's role w.ID.
func onRole[T any](write func(ctx context.Context, tx *ent.Tx, r *ent.Role, in T) (writes.Result, error)) func(context.Context, *ent.Tx, *WriteRequest, T) (writes.Result, error) {
	return func(ctx context.Context, tx *ent.Tx, w *WriteRequest, in T) (writes.Result, error) {
		r, err := tx.Role.Query().Where(role.ID(w.ID), role.WorkspaceID(w.Principal.Workspace.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			return writes.Result{}, apierr.NotFound("role")
		}
		if err != nil {
			return writes.Result{}, err
		}
		return write(ctx, tx, r, in)
	}
}

func updateRole(ctx context.Context, tx *ent.Tx, r *ent.Role, in roleIn) (writes.Result, error) {
	r, err := r.Update().SetGrants(in.Grants).Save(ctx)
	return answer(http.StatusOK, err, func() any { return showRole(r) })
}

func deleteRole(ctx context.Context, tx *ent.Tx, r *ent.Role, _ struct{}) (writes.Result, error) {
	return answer(http.StatusOK, tx.Role.DeleteOne(r).Exec(ctx), deleted(r.ID, "role"))
}

// Webhook endpoints, shown as endpoints.go shows them.

func endpointBody(create bool) func(c *Core, ctx context.Context, w *WriteRequest) (webhooks.EndpointChange, error) {
	return func(c *Core, ctx context.Context, w *WriteRequest) (webhooks.EndpointChange, error) {
		return c.EndpointBody(ctx, w.ContentType, w.Body, create)
	}
}

// createEndpoint answers the new endpoint's secret, this once (and again
// to a retry under the same key, since a client that lost the answer has
// no other way to learn it).
func createEndpoint(ctx context.Context, tx *ent.Tx, w *WriteRequest, in webhooks.EndpointChange) (writes.Result, error) {
	e, err := webhooks.CreateEndpoint(ctx, tx.Client(), w.Principal.Workspace.ID, in)
	return answer(http.StatusCreated, err, func() any { return showEndpoint(e, true) })
}

// onEndpoint runs write on the principal's workspace's endpoint w.ID.
func onEndpoint[T any](write func(ctx context.Context, tx *ent.Tx, w *WriteRequest, e *ent.WebhookEndpoint, in T) (writes.Result, error)) func(context.Context, *ent.Tx, *WriteRequest, T) (writes.Result, error) {
	return func(ctx context.Context, tx *ent.Tx, w *WriteRequest, in T) (writes.Result, error) {
		e, err := webhooks.FindEndpoint(ctx, tx.Client(), w.Principal.Workspace.ID, w.ID)
		if err != nil {
			return writes.Result{}, err
		}
		return write(ctx, tx, w, e, in)
	}
}

func updateEndpoint(ctx context.Context, tx *ent.Tx, _ *WriteRequest, e *ent.WebhookEndpoint, in webhooks.EndpointChange) (writes.Result, error) {
	e, err := webhooks.UpdateEndpoint(ctx, e, tx.Client(), in)
	return answer(http.StatusOK, err, func() any { return showEndpoint(e, false) })
}

// deleteEndpoint deletes the endpoint; its deliveries and their log go
// with it.
func deleteEndpoint(ctx context.Context, tx *ent.Tx, _ *WriteRequest, e *ent.WebhookEndpoint, _ struct{}) (writes.Result, error) {
	return answer(http.StatusOK, webhooks.DeleteEndpoint(ctx, tx, e.ID), deleted(e.ID, "webhook_endpoint"))
}

// rotateSecret issues the endpoint a new secret; the old one keeps
// signing for 24 h, so receivers can switch without missing a delivery.
// Under a key a retry replays the first rotation: a second one would end
// the first secret's overlap before anyone learned the new one.
func rotateSecret(ctx context.Context, tx *ent.Tx, _ *WriteRequest, e *ent.WebhookEndpoint, _ struct{}) (writes.Result, error) {
	e, err := webhooks.RotateSecret(ctx, tx.Client(), e)
	return answer(http.StatusOK, err, func() any { return showEndpoint(e, true) })
}

// retryDelivery ("send again") makes the endpoint's delivery ChildID due
// now, whatever its state.
func retryDelivery(ctx context.Context, tx *ent.Tx, w *WriteRequest, e *ent.WebhookEndpoint, _ struct{}) (writes.Result, error) {
	d, err := webhooks.Retry(ctx, tx.Client(), e.ID, w.ChildID)
	return answer(http.StatusOK, err, func() any { return showDelivery(d) })
}
