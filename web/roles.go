package web

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
)

// grantRow is one line of a role matrix.
type grantRow struct {
	Resource *resource.Resource
	Access   resource.Access
}

// matrix lays out grants over every grantable resource.
func matrix(grants map[string]resource.Access) []grantRow {
	var out []grantRow
	for _, name := range resource.Grantable() {
		out = append(out, grantRow{Resource: resource.ByName(name), Access: grants[name]})
	}
	return out
}

// builtinGrants is what admin and viewer allow, as a matrix.
func builtinGrants(a resource.Access) map[string]resource.Access {
	m := map[string]resource.Access{}
	for _, name := range resource.Grantable() {
		m[name] = a
	}
	return m
}

var accessLevels = []resource.Access{resource.None, resource.Read, resource.Write}

type roleSummary struct {
	ID, Name string
	Builtin  bool
	Matrix   []grantRow
	Keys     int // live keys with the role
}

type rolesData struct {
	page
	Roles []roleSummary
}

func (u *UI) roles(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	ctx := c.UserContext()
	d := rolesData{page: u.pageOf(c, "Roles", "roles")}
	switch c.Query("done") {
	case "created":
		d.Notice = "Role created. Keys with this role follow it at once."
	case "deleted":
		d.Notice = "Role deleted. Keys that had it can no longer reach any resource."
	}
	custom, err := u.db.Reader.Role.Query().Where(role.WorkspaceID(ws.ID)).Order(ent.Asc(role.FieldName)).All(ctx)
	if err != nil {
		return u.internal(c, err)
	}
	d.Roles = []roleSummary{
		{Name: access.RoleAdmin, Builtin: true, Matrix: matrix(builtinGrants(resource.Write))},
		{Name: access.RoleViewer, Builtin: true, Matrix: matrix(builtinGrants(resource.Read))},
	}
	for _, r := range custom {
		d.Roles = append(d.Roles, roleSummary{ID: r.ID, Name: r.Name, Matrix: matrix(access.ParseGrants(r.Grants))})
	}
	for i := range d.Roles {
		n, err := u.db.Reader.APIKey.Query().Where(apikey.WorkspaceID(ws.ID), apikey.Role(d.Roles[i].Name), apikey.RevokedAtIsNil()).Count(ctx)
		if err != nil {
			return u.internal(c, err)
		}
		d.Roles[i].Keys = n
	}
	return render(c, http.StatusOK, rolesView(d))
}

type roleData struct {
	page
	Role   *ent.Role // nil for a new role
	Name   string
	Matrix []grantRow
}

func (u *UI) newRolePage(c *fiber.Ctx) error {
	d := roleData{page: u.pageOf(c, "New role", "roles"), Matrix: matrix(nil)}
	return render(c, http.StatusOK, roleView(d))
}

// grantsOf reads the matrix form; anything but read or write grants nothing.
func grantsOf(c *fiber.Ctx) map[string]string {
	g := map[string]string{}
	for _, name := range resource.Grantable() {
		v := c.FormValue("grant." + name)
		if v == "read" || v == "write" {
			g[name] = v
		} else {
			g[name] = "none"
		}
	}
	return g
}

func (u *UI) createRole(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	g := grantsOf(c)
	name := strings.TrimSpace(c.FormValue("name"))
	in := map[string]any{"name": name, "grants": g}
	return u.configure(c, api.CreateRole, in, wsURL(ws, "roles")+"?done=created", func(e *apierr.Error) error {
		d := roleData{page: u.pageOf(c, "New role", "roles"), Name: name, Matrix: matrix(access.ParseGrants(g))}
		switch {
		case e.Code == "duplicate":
			d.Error = "A role named " + name + " exists already; choose another name."
		case e.Status == http.StatusBadRequest:
			d.Error = capitalize(e.Message) + "."
		default:
			return u.onceFailed(c, e)
		}
		return render(c, http.StatusUnprocessableEntity, roleView(d))
	})
}

func (u *UI) rolePage(c *fiber.Ctx) error {
	r, err := u.db.Reader.Role.Query().Where(role.ID(c.Params("id")), role.WorkspaceID(workspaceOf(c).ID)).Only(c.UserContext())
	if err != nil {
		return u.lookupFailed(c, err)
	}
	d := roleData{page: u.pageOf(c, "Role "+r.Name, "roles"), Role: r, Name: r.Name, Matrix: matrix(access.ParseGrants(r.Grants))}
	if c.Query("saved") != "" {
		d.Notice = "Saved. Keys with this role follow the new matrix from their next request."
	}
	return render(c, http.StatusOK, roleView(d))
}

// saveRole changes a role's matrix; the name stays, since keys refer to it.
func (u *UI) saveRole(c *fiber.Ctx) error {
	return u.configure(c, api.UpdateRole, map[string]any{"grants": grantsOf(c)}, wsURL(workspaceOf(c), "roles", "{id}")+"?saved=1", nil)
}

func (u *UI) deleteRole(c *fiber.Ctx) error {
	return u.configure(c, api.DeleteRole, nil, wsURL(workspaceOf(c), "roles")+"?done=deleted", nil)
}

func roleAction(d roleData) string {
	if d.Role == nil {
		return wsURL(d.WS, "roles")
	}
	return wsURL(d.WS, "roles", d.Role.ID)
}
