package web

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// A create that declares a Secret (a gift card's code) answers it once: the
// record's address shows it once after the redirect (flash.go).

type secretData struct {
	page
	R      *resource.Resource
	ID     string
	Label  string // what the secret is: "code"
	Secret string
	URL    string // the record's page
}

func (u *UI) showSecret(c *fiber.Ctx, r *resource.Resource, id, secret string) error {
	ws := workspaceOf(c)
	rt, _ := api.FindRoute(r, resource.Create, "")
	d := secretData{page: u.pageOf(c, humanize(r.Singular)+" "+id, "rec:"+r.Name), R: r, ID: id, Label: rt.Op.Secret, Secret: secret,
		URL: wsURL(ws, "records", r.Name, url.PathEscape(id))}
	d.Notice = "The " + r.Singular + " is created."
	return render(c, http.StatusOK, secretView(d))
}
