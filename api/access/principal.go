package access

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Built-in roles.
const (
	RoleAdmin  = "admin"
	RoleViewer = "viewer"
)

// Workspace is what gating needs of a workspace.
type Workspace struct {
	ID             string
	Name           string
	Plan           resource.Plan
	CommerceMode   bool
	CommerceModule bool
}

// Key is the calling API key (never its secret).
type Key struct {
	ID        string
	Name      string
	Role      string
	Prefix    string
	ExpiresAt *time.Time
	RevokedAt *time.Time
	// RateLimit overrides the plan's per-minute limit; 0 = unlimited.
	RateLimit *int
}

// Principal is an authenticated caller.
type Principal struct {
	Workspace Workspace
	Key       Key
	// Grants is the custom role's matrix; nil for built-in roles.
	Grants map[string]resource.Access
	// Admin is the admin user's id when the caller is a person in the
	// admin UI rather than an API key (Key then names the admin role).
	Admin string
}

// AdminPrincipal is a signed-in admin acting in a workspace through the
// admin UI: the admin role, with the events' actor the admin user.
func AdminPrincipal(ws Workspace, adminID, email string) *Principal {
	return &Principal{Workspace: ws, Key: Key{Name: "admin " + email, Role: RoleAdmin}, Admin: adminID}
}

// System is the command line acting on workspace ws ("" for none, as a
// new workspace): the admin role.
func System(ws string) *Principal {
	return &Principal{Workspace: Workspace{ID: ws}, Key: Key{Name: "command line", Role: RoleAdmin}}
}

// Allowed returns the access the principal's role gives on a resource name.
func (p *Principal) Allowed(name string) resource.Access {
	switch p.Key.Role {
	case RoleAdmin:
		return resource.Write
	case RoleViewer:
		return resource.Read
	}
	return p.Grants[name]
}

// Gate checks that the workspace's plan and commerce settings reach r, then
// that the role allows the access; the 403 names what is missing.
func (p *Principal) Gate(r *resource.Resource, need resource.Access) error {
	if err := GatePlan(p.Workspace, r); err != nil {
		return err
	}
	if r == resource.Me {
		return nil
	}
	if r.Singleton {
		if need == resource.Write && p.Key.Role != RoleAdmin {
			return apierr.Forbidden("permission_denied", "only the admin role may change the %s; the key's role is %q", r.Singular, p.Key.Role)
		}
		return nil
	}
	if p.Allowed(r.PermissionName()) < need {
		verb := "read"
		if need == resource.Write {
			verb = "write"
		}
		return apierr.Forbidden("permission_denied", "the key's role %q may not %s %s", p.Key.Role, verb, r.PermissionName())
	}
	return nil
}

// GatePlan checks only the workspace conditions of r.
func GatePlan(ws Workspace, r *resource.Resource) error {
	switch r.Lack(ws.Plan, ws.CommerceMode, ws.CommerceModule) {
	case resource.LacksPlan:
		return apierr.Forbidden("plan_required", "%s needs the %s plan; this workspace is on %s", r.Name, r.Plan, ws.Plan)
	case resource.LacksCommerceMode:
		return apierr.Forbidden("commerce_mode_required", "%s needs commerce mode, which is off for this workspace", r.Name)
	case resource.LacksCommerceModule:
		return apierr.Forbidden("commerce_module_required", "%s needs the commerce module on the workspace's plan", r.Name)
	}
	return nil
}

// Reachable reports whether the workspace's plan and settings reach r.
func (w Workspace) Reachable(r *resource.Resource) bool { return GatePlan(w, r) == nil }

// Commerce reports whether item reads show product fields.
func (w Workspace) Commerce() bool { return w.CommerceMode && w.CommerceModule }

// KeyExpiry is the instant a key stops working, as every door shows it:
// expires_at in UTC to the whole second, also for keys stored with a
// fraction.
func KeyExpiry(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}

// check turns a key's state into the 401 it deserves, if any.
func (k *Key) check(now time.Time) error {
	if k.RevokedAt != nil {
		return apierr.Unauthorized("revoked_api_key", fmt.Sprintf("this API key was revoked at %s", k.RevokedAt.UTC().Format(time.RFC3339)))
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return apierr.Unauthorized("expired_api_key", fmt.Sprintf("this API key expired at %s", k.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	return nil
}

var errMissing = &apierr.Error{Status: http.StatusUnauthorized, Code: "missing_api_key",
	Message: "send your API key as 'Authorization: Bearer lb_...'"}
var errInvalid = &apierr.Error{Status: http.StatusUnauthorized, Code: "invalid_api_key",
	Message: "the API key is not valid"}
