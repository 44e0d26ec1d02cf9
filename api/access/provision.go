package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// NewWorkspace creates a workspace.
func NewWorkspace(ctx context.Context, db *ent.Client, name, plan string, commerceMode, commerceModule bool) (*ent.Workspace, error) {
	if err := checkWorkspace(name, plan); err != nil {
		return nil, err
	}
	return db.Workspace.Create().SetName(name).SetPlan(workspace.Plan(plan)).
		SetCommerceMode(commerceMode).SetCommerceModule(commerceModule).Save(ctx)
}

// UpdateWorkspace changes workspace id's settings.
func UpdateWorkspace(ctx context.Context, db *ent.Client, id, name, plan string, commerceMode, commerceModule bool) (*ent.Workspace, error) {
	if err := checkWorkspace(name, plan); err != nil {
		return nil, err
	}
	return db.Workspace.UpdateOneID(id).SetName(name).SetPlan(workspace.Plan(plan)).
		SetCommerceMode(commerceMode).SetCommerceModule(commerceModule).Save(ctx)
}

func checkWorkspace(name, plan string) error {
	if strings.TrimSpace(name) == "" {
		return apierr.Invalid("name", "a workspace needs a name")
	}
	if _, ok := resource.ParsePlan(plan); !ok {
		return apierr.Invalid("plan", "unknown plan %q: use starter, growth or business", plan)
	}
	return nil
}

// KeySpec describes a key to create.
type KeySpec struct {
	WorkspaceID string
	Name        string
	Role        string        // admin, viewer or a custom role's name
	ExpiresIn   time.Duration // 0 = never
	RateLimit   *int          // per minute; nil = the plan's; 0 = unlimited
}

// KeyCaps is how many active (neither revoked nor expired) keys a workspace
// may hold on each plan; the spec has the business plan raise the cap.
var KeyCaps = map[resource.Plan]int{resource.Starter: 10, resource.Growth: 25, resource.Business: 100}

// KeyCapError refuses a key beyond the plan's cap; its message is for people.
type KeyCapError struct {
	Plan resource.Plan
	Cap  int
}

func (e *KeyCapError) Error() string {
	return fmt.Sprintf("this workspace already has %d active API keys, the most the %s plan allows; revoke one first", e.Cap, e.Plan)
}

// NewKey creates a key and returns its secret, which is never stored.
func NewKey(ctx context.Context, db *ent.Client, s KeySpec) (string, *ent.APIKey, error) {
	ws, err := db.Workspace.Get(ctx, s.WorkspaceID)
	if err != nil {
		return "", nil, fmt.Errorf("workspace %s: %w", s.WorkspaceID, err)
	}
	plan, _ := resource.ParsePlan(string(ws.Plan))
	active, err := db.APIKey.Query().Where(apikey.WorkspaceID(ws.ID), apikey.RevokedAtIsNil(),
		apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(time.Now().UTC()))).Count(ctx)
	if err != nil {
		return "", nil, err
	}
	if active >= KeyCaps[plan] {
		return "", nil, &KeyCapError{Plan: plan, Cap: KeyCaps[plan]}
	}
	if s.Role == "" {
		s.Role = RoleAdmin
	}
	if s.Role != RoleAdmin && s.Role != RoleViewer {
		ok, err := db.Role.Query().Where(role.WorkspaceID(s.WorkspaceID), role.Name(s.Role)).Exist(ctx)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", nil, fmt.Errorf("no role %q in workspace %s: use admin, viewer or a custom role", s.Role, s.WorkspaceID)
		}
	}
	if s.RateLimit != nil && *s.RateLimit < 0 {
		return "", nil, apierr.Invalid("rate_limit", "rate limit must be 0 (unlimited) or more")
	}
	secret, display, hash := NewSecret()
	c := db.APIKey.Create().SetWorkspaceID(s.WorkspaceID).SetName(s.Name).SetRole(s.Role).
		SetSecretHash(hash).SetPrefix(display).SetNillableRateLimit(s.RateLimit)
	if s.ExpiresIn > 0 {
		// Stored to the second, the precision every place shows it in, so
		// the shown instant is the one at which the key stops working.
		at := time.Now().Add(s.ExpiresIn)
		c.SetExpiresAt(*KeyExpiry(&at))
	}
	k, err := c.Save(ctx)
	if err != nil {
		return "", nil, err
	}
	return secret, k, nil
}

// KeyState is what k is at now: active, expired or revoked.
func KeyState(k *ent.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*KeyExpiry(k.ExpiresAt)):
		return "expired"
	}
	return "active"
}

// RevokeKey revokes a key; revoking twice keeps the first time.
func RevokeKey(ctx context.Context, db *ent.Client, keyID string) error {
	n, err := db.APIKey.Update().Where(apikey.ID(keyID), apikey.RevokedAtIsNil()).SetRevokedAt(time.Now().UTC()).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		if ok, _ := db.APIKey.Query().Where(apikey.ID(keyID)).Exist(ctx); !ok {
			return fmt.Errorf("no key %s", keyID)
		}
	}
	return nil
}

// ParseGrantList reads "clients:write,invoices:read" into a role matrix.
func ParseGrantList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, acc, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("grant %q: want resource:none|read|write", part)
		}
		if !slices.Contains(resource.Grantable(), name) {
			return nil, fmt.Errorf("grant %q: unknown resource %q (one of %s)", part, name, strings.Join(resource.Grantable(), ", "))
		}
		if _, ok := resource.ParseAccess(acc); !ok {
			return nil, fmt.Errorf("grant %q: access must be none, read or write", part)
		}
		out[name] = acc
	}
	return out, nil
}

// NewRole creates a custom role.
func NewRole(ctx context.Context, db *ent.Client, workspaceID, name string, grants map[string]string) (*ent.Role, error) {
	if name == RoleAdmin || name == RoleViewer {
		return nil, apierr.Invalid("name", "%q is a built-in role", name)
	}
	if strings.TrimSpace(name) == "" {
		return nil, apierr.Invalid("name", "a role needs a name")
	}
	return db.Role.Create().SetWorkspaceID(workspaceID).SetName(name).SetGrants(grants).Save(ctx)
}
