package web

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// write runs the declared write rt on body (nil for none) through
// api.Core.Write, as /v1 does, under key as a POST's Idempotency-Key when
// not "". id is the record's (the parent's for a sub-resource, whose own is
// childID). A refusal is the error /v1 would answer.
func (u *UI) write(c *fiber.Ctx, rt api.Route, id, childID string, body []byte, key string) (api.Result, *apierr.Error) {
	if len(body) == 0 {
		body = []byte("{}")
	}
	w := api.WriteRequest{Principal: u.principal(c), Route: rt, ID: id, ChildID: childID, Body: body, ContentType: api.JSON, Key: key,
		RequestID: ids.QuickAt("req", time.Now())}
	res, e := u.core.Write(c.UserContext(), w)
	if e != nil && e.Status >= 500 {
		u.log.Error("admin write failed", "path", rt.Path, "request_id", w.RequestID, "err", e)
	}
	return res, e
}

// configure runs the configuration write op on the page's :id (and
// :delivery) with the body in (nil for none) through api.Core.Write, the
// form's _idem token as the key, so a form sent twice redirects where the
// first went without writing. It redirects to "to", whose {id} is what the
// write made or changed; a secret made is shown there once (flash.go). A
// refusal goes to refused when there is one, else to onceFailed.
func (u *UI) configure(c *fiber.Ctx, op api.ConfigOp, in any, to string, refused func(*apierr.Error) error) error {
	b := []byte("{}")
	if in != nil {
		b, _ = json.Marshal(in)
	}
	w := api.WriteRequest{Principal: u.principal(c), Config: op, ID: c.Params("id"), ChildID: c.Params("delivery"),
		Body: b, ContentType: api.JSON, Key: c.FormValue(idemName), Target: c.Path() + " " + string(c.Body()),
		RequestID: ids.QuickAt("req", time.Now())}
	res, e := u.core.Write(c.UserContext(), w)
	if e != nil {
		if refused != nil {
			return refused(e)
		}
		return u.onceFailed(c, e)
	}
	var made struct{ ID, Secret string }
	if err := json.Unmarshal(res.Body, &made); err != nil {
		return u.internal(c, err)
	}
	to = strings.ReplaceAll(to, "{id}", made.ID)
	if secret := cmp.Or(res.Secret, made.Secret); secret != "" && !res.Replayed {
		u.setFlash(c, to, secret)
	}
	return redirect(c, to)
}

// sentTwice answers a form whose token came before with other values: the
// first submission stands.
func (u *UI) sentTwice(c *fiber.Ctx) error {
	return u.fail(c, http.StatusConflict, "Already sent",
		"This form was already sent with other values, and that first submission stands. Open the page again to send a new one.")
}

// onceFailed answers a refusal of configure that its caller did not take:
// a page saying it, or an internal error.
func (u *UI) onceFailed(c *fiber.Ctx, e *apierr.Error) error {
	switch {
	case e.Status >= 500:
		return u.internal(c, e)
	case e.Status == http.StatusNotFound:
		return u.notFound(c)
	case e.Code == "idempotency_key_reused":
		return u.sentTwice(c)
	}
	return u.fail(c, e.Status, "Not sent", capitalize(e.Message)+".")
}
