package web

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/ent"
)

// Every admin form that writes carries an idempotency token (_idem, new on
// every render, as the record forms' is) and answers with a redirect, so a
// reload after a write reads the page again instead of sending the form
// again. The writes that are not the API's declared operations (keys,
// roles, webhook endpoints, workspaces) keep their token in the API's
// idempotency store, in the write's own transaction: the same form sent
// again (a double click, or sent again from the browser's history) is
// redirected where the first one was, without writing.

// written is where a form's write leads, and a secret it made, which the
// page there shows once (see flash.go).
type written struct {
	To     string
	Secret string
}

// formOnce runs write under the posted form's token, in one transaction
// with the token kept, then redirects to where it leads. scope is whose
// tokens these are: the workspace's id, or the admin's for the workspaces
// page. A form without a token writes without one. A token sent before
// with other values is idempotency_key_reused (409); write's errors come
// back as they are, with nothing written or kept.
func (u *UI) formOnce(c *fiber.Ctx, scope string, write func(ctx context.Context, db *ent.Client) (written, error)) error {
	ctx := c.UserContext()
	var w written
	run := func(p *idempotency.Pending) error {
		return u.db.InTx(ctx, func(tx *ent.Tx) error {
			_, _, err := p.Within(ctx, tx, func() (int, []byte, error) {
				var err error
				w, err = write(ctx, tx.Client())
				return http.StatusSeeOther, []byte(w.To), err
			})
			return err
		})
	}
	key := c.FormValue(idemName)
	if key == "" {
		if err := run(nil); err != nil {
			return err
		}
	} else {
		prev, err := u.idem.Once(ctx, scope, key, idempotency.Hash(c.Method(), c.Path(), c.Body()), run)
		if err != nil {
			return err
		}
		if prev != nil {
			return redirect(c, string(prev.Body)) // sent before: go where it went
		}
	}
	if w.Secret != "" {
		u.setFlash(c, w.To, w.Secret)
	}
	return redirect(c, w.To)
}

// sentTwice answers a form whose token came before with other values: the
// first submission stands.
func (u *UI) sentTwice(c *fiber.Ctx) error {
	return u.fail(c, http.StatusConflict, "Already sent",
		"This form was already sent with other values, and that first submission stands. Open the page again to send a new one.")
}

// onceFailed answers an error of formOnce that its caller did not take:
// a refusal as a page saying it, anything else as an internal error.
func (u *UI) onceFailed(c *fiber.Ctx, err error) error {
	e, ok := apierr.As(err)
	switch {
	case !ok || e.Status >= 500:
		return u.internal(c, err)
	case e.Status == http.StatusNotFound:
		return u.notFound(c)
	case e.Code == "idempotency_key_reused":
		return u.sentTwice(c)
	}
	return u.fail(c, e.Status, "Not sent", capitalize(e.Message)+".")
}
