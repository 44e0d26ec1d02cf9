package writes

import (
	"net/http"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/promotion"
	"github.com/ledgerbase/ledgerbase/ent/promotioncode"
)

func init() {
	register(resource.PromotionCodes, resource.Create, addPromotionCode)
}

// addPromotionCode adds a code to a promotion of kind code. An archived
// promotion is 404, as on reads (archived promotions are not listed); an
// automatic one is 409 invalid_state_transition. Codes are unique in the
// workspace ignoring case (code_key is the lower-cased code): a clash is
// 409 duplicate, also when two requests race (the unique index decides and
// the loser is re-run).
func addPromotionCode(q *Request) (Result, error) {
	v, ws := q.Body, q.Principal.Workspace.ID
	raw, _ := v.String("code")
	code := strings.TrimSpace(raw)
	if code == "" {
		return Result{}, apierr.Invalid("code", "code must not be blank")
	}
	maxUses, hasMax := v.Int("max_uses")
	perCustomer, hasPer := v.Int("max_uses_per_customer")
	if hasMax && hasPer && perCustomer > maxUses {
		return Result{}, apierr.Invalid("max_uses_per_customer", "max_uses_per_customer (%d) exceeds max_uses (%d)", perCustomer, maxUses)
	}
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		p, err := tx.Promotion.Query().
			Where(promotion.WorkspaceID(ws), promotion.ID(q.ID), promotion.StatusNEQ(promotion.StatusArchived)).Only(q.Ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("promotion")
		}
		if err != nil {
			return err
		}
		if p.Kind != promotion.KindCode {
			return apierr.Conflict("invalid_state_transition", "codes can be added only to a promotion of kind code; this one is %s", p.Kind)
		}
		key := strings.ToLower(code)
		taken, err := tx.PromotionCode.Query().Where(promotioncode.WorkspaceID(ws), promotioncode.CodeKey(key)).Exist(q.Ctx)
		if err != nil {
			return err
		}
		if taken {
			return duplicate("code", "the code %q is already used in this workspace (codes ignore case)", code)
		}
		c := tx.PromotionCode.Create().SetWorkspaceID(ws).SetPromotionID(p.ID).SetCode(code).SetCodeKey(key)
		if hasMax {
			c.SetMaxUses(maxUses)
		}
		if hasPer {
			c.SetMaxUsesPerCustomer(perCustomer)
		}
		if s, ok := v.String("expires_at"); ok {
			t, _ := time.Parse(time.RFC3339, s)
			c.SetExpiresAt(t.UTC())
		}
		pc, err := c.Save(q.Ctx)
		if err != nil {
			return err
		}
		id = pc.ID
		return nil
	}, func() Answer { return record(http.StatusCreated, resource.PromotionCodes, id, q.ID) })
}
