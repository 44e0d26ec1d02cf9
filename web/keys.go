package web

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
)

// expiryChoices are the lifetimes the key form offers ("" = never).
var expiryChoices = []struct{ Value, Label string }{
	{"", "Never"}, {"24h", "1 day"}, {"168h", "7 days"}, {"720h", "30 days"}, {"2160h", "90 days"}, {"8760h", "1 year"},
}

type keyRow struct {
	K     *ent.APIKey
	State string // active, expired or revoked
}

type keysData struct {
	page
	Keys   []keyRow
	Roles  []string // every role a key may have
	Secret string   // the new key's secret, shown once
	New    *ent.APIKey
	Form   struct{ Name, Role, Expiry string }
}

func (u *UI) keysData(c *fiber.Ctx) (keysData, error) {
	ws := workspaceOf(c)
	d := keysData{page: u.pageOf(c, "API keys", "keys")}
	d.Form.Role = access.RoleAdmin
	ctx := c.UserContext()
	keys, err := u.db.Reader.APIKey.Query().Where(apikey.WorkspaceID(ws.ID)).
		Order(ent.Desc(apikey.FieldCreatedAt), ent.Desc(apikey.FieldID)).All(ctx)
	if err != nil {
		return d, err
	}
	now := time.Now()
	for _, k := range keys {
		d.Keys = append(d.Keys, keyRow{K: k, State: access.KeyState(k, now)})
	}
	custom, err := u.db.Reader.Role.Query().Where(role.WorkspaceID(ws.ID)).Order(ent.Asc(role.FieldName)).Select(role.FieldName).Strings(ctx)
	if err != nil {
		return d, err
	}
	d.Roles = append([]string{access.RoleAdmin, access.RoleViewer}, custom...)
	return d, nil
}

func (u *UI) keys(c *fiber.Ctx) error {
	d, err := u.keysData(c)
	if err != nil {
		return u.internal(c, err)
	}
	secret := u.takeFlash(c)
	for _, r := range d.Keys {
		if r.K.ID == c.Query("revoked") && r.State == "revoked" {
			d.Notice = "The key " + r.K.Name + " (" + r.K.Prefix + "…) is revoked: its next API call gets 401."
		}
		if r.K.ID == c.Query("created") {
			d.New = r.K
			if d.Secret = secret; secret == "" {
				d.Notice = "The key " + r.K.Name + " (" + r.K.Prefix + "…) is created. Its secret was shown once, when it was made."
			}
		}
	}
	return render(c, http.StatusOK, keysView(d))
}

func (u *UI) createKey(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	d, err := u.keysData(c)
	if err != nil {
		return u.internal(c, err)
	}
	d.Form.Name = strings.TrimSpace(c.FormValue("name"))
	d.Form.Role = c.FormValue("role")
	d.Form.Expiry = c.FormValue("expires_in")
	switch {
	case d.Form.Name == "":
		d.Error = "Give the key a name, so you can tell it apart later."
	case !slices.Contains(d.Roles, d.Form.Role):
		d.Error = "Choose one of the listed roles."
	case !slices.ContainsFunc(expiryChoices, func(e struct{ Value, Label string }) bool { return e.Value == d.Form.Expiry }):
		d.Error = "Choose one of the listed expiry times."
	}
	if d.Error != "" {
		return render(c, http.StatusUnprocessableEntity, keysView(d))
	}
	// The secret goes to the keys page once (flash.go); only its hash is stored.
	in := map[string]any{"name": d.Form.Name, "role": d.Form.Role, "expires_in": d.Form.Expiry}
	return u.configure(c, api.CreateKey, in, wsURL(ws, "keys")+"?created={id}", func(e *apierr.Error) error {
		if e.Code != "key_limit_reached" {
			return u.onceFailed(c, e)
		}
		d.Error = e.Message + "."
		return render(c, http.StatusUnprocessableEntity, keysView(d))
	})
}

type revokeData struct {
	page
	Key *ent.APIKey
}

func (u *UI) revokePage(c *fiber.Ctx) error {
	k, err := u.db.Reader.APIKey.Query().Where(apikey.ID(c.Params("id")), apikey.WorkspaceID(workspaceOf(c).ID)).Only(c.UserContext())
	if err != nil {
		return u.lookupFailed(c, err)
	}
	d := revokeData{page: u.pageOf(c, "Revoke key", "keys"), Key: k}
	return render(c, http.StatusOK, revokeView(d))
}

func (u *UI) revokeKey(c *fiber.Ctx) error {
	return u.configure(c, api.RevokeKey, nil, wsURL(workspaceOf(c), "keys")+"?revoked={id}", nil)
}

// keyExpiry shows when a key stops working, to the second, as /v1/me does.
func keyExpiry(k *ent.APIKey) (rfc3339, shown string) {
	t := access.KeyExpiry(k.ExpiresAt)
	if t == nil {
		return "", "never"
	}
	return t.Format(time.RFC3339), t.Format("2006-01-02 15:04:05 UTC")
}

func keyName(k *ent.APIKey) string {
	if k.Name == "" {
		return "(no name)"
	}
	return k.Name
}
