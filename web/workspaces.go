package web

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

const workspaceKey = "admin_workspace"

func workspaceOf(c *fiber.Ctx) *ent.Workspace {
	w, _ := c.Locals(workspaceKey).(*ent.Workspace)
	return w
}

// wsURL is the address of a page of the current workspace.
func wsURL(ws *ent.Workspace, parts ...string) string {
	u := Base + "/w/" + ws.ID
	for _, p := range parts {
		u += "/" + p
	}
	return u
}

func (u *UI) loadWorkspace(c *fiber.Ctx) error {
	ws, err := u.db.Reader.Workspace.Get(c.UserContext(), c.Params("ws"))
	if ent.IsNotFound(err) {
		return u.fail(c, http.StatusNotFound, "Workspace not found", "There is no workspace with this id.")
	}
	if err != nil {
		return u.internal(c, err)
	}
	c.Locals(workspaceKey, ws)
	return c.Next()
}

type workspacesData struct {
	page
	List []*ent.Workspace
	Form workspaceForm
}

// workspaceForm is the create and settings form's values.
type workspaceForm struct {
	Name           string `json:"name"`
	Plan           string `json:"plan"`
	CommerceMode   bool   `json:"commerce_mode"`
	CommerceModule bool   `json:"commerce_module"`
}

func formOf(c *fiber.Ctx) workspaceForm {
	return workspaceForm{
		Name:           strings.TrimSpace(c.FormValue("name")),
		Plan:           c.FormValue("plan"),
		CommerceMode:   c.FormValue("commerce_mode") == "on",
		CommerceModule: c.FormValue("commerce_module") == "on",
	}
}

func (f workspaceForm) check() string {
	if f.Name == "" {
		return "Give the workspace a name."
	}
	if _, ok := resource.ParsePlan(f.Plan); !ok {
		return "Choose a plan: starter, growth or business."
	}
	return ""
}

func (u *UI) workspacesData(c *fiber.Ctx) (workspacesData, error) {
	d := workspacesData{page: u.pageOf(c, "Workspaces", "workspaces"), Form: workspaceForm{Plan: "starter"}}
	var err error
	d.List, err = u.db.Reader.Workspace.Query().Order(ent.Desc(workspace.FieldCreatedAt), ent.Desc(workspace.FieldID)).All(c.UserContext())
	return d, err
}

func (u *UI) workspaces(c *fiber.Ctx) error {
	d, err := u.workspacesData(c)
	if err != nil {
		return u.internal(c, err)
	}
	return render(c, http.StatusOK, workspacesView(d))
}

func (u *UI) createWorkspace(c *fiber.Ctx) error {
	f := formOf(c)
	if msg := f.check(); msg != "" {
		d, err := u.workspacesData(c)
		if err != nil {
			return u.internal(c, err)
		}
		d.Form, d.Error = f, msg
		return render(c, http.StatusUnprocessableEntity, workspacesView(d))
	}
	// No workspace holds this form's token yet: the core keeps it under the admin's id.
	return u.configure(c, api.CreateWorkspace, f, wsURL(&ent.Workspace{ID: "{id}"})+"?created=1", nil)
}

type settingsData struct {
	page
	Form    workspaceForm
	Company companyForm
}

// settingsData is the Settings page with the workspace as saved and the
// company profile form's values.
func (u *UI) settingsData(c *fiber.Ctx, company companyForm) settingsData {
	ws := workspaceOf(c)
	return settingsData{page: u.pageOf(c, "Settings", "settings"),
		Form:    workspaceForm{Name: ws.Name, Plan: string(ws.Plan), CommerceMode: ws.CommerceMode, CommerceModule: ws.CommerceModule},
		Company: company}
}

// savedCompany is the company profile form of the saved profile.
func (u *UI) savedCompany(c *fiber.Ctx) (companyForm, error) {
	p, err := u.core.Company(c.UserContext(), workspaceOf(c).ID)
	if err != nil {
		return companyForm{}, err
	}
	return companyFormOf(p), nil
}

func (u *UI) settingsPage(c *fiber.Ctx) error {
	company, err := u.savedCompany(c)
	if err != nil {
		return u.internal(c, err)
	}
	d := u.settingsData(c, company)
	switch {
	case c.Query("saved") != "":
		d.Notice = "Saved. API calls see the change from their next request."
	case c.Query("company") != "":
		d.Notice = "Company profile saved. Documents show it from now on."
	}
	return render(c, http.StatusOK, settingsView(d))
}

func (u *UI) saveSettings(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	f := formOf(c)
	if msg := f.check(); msg != "" {
		company, err := u.savedCompany(c)
		if err != nil {
			return u.internal(c, err)
		}
		d := u.settingsData(c, company)
		d.Form, d.Error = f, msg
		return render(c, http.StatusUnprocessableEntity, settingsView(d))
	}
	return u.configure(c, api.UpdateWorkspace, f, wsURL(ws, "settings")+"?saved=1", nil)
}

var planChoices = []struct{ Value, Label string }{
	{"starter", "Starter"},
	{"growth", "Growth: + clients"},
	{"business", "Business: + commerce"},
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
