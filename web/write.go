package web

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// write runs the declared write rt through the core's one way in
// (api.Core.Write), as /v1 does: the same gate, body validation and
// operation, on body, a JSON object ("" or nil for none, as a bodiless
// DELETE or action). id is the record's id (the parent's for a
// sub-resource, whose own id is childID). Under key (none when "") it is
// kept as a POST's Idempotency-Key is: the same key and body answer the
// first outcome again without writing, another body under the key is 409
// idempotency_key_reused. A refusal comes back as the error /v1 would
// answer, with its status, code, message and param.
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
