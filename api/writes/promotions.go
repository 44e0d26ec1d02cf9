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

// addPromotionCode adds a code to a promotion of kind code; an archived
// one is 404, as on reads. Codes are unique in the workspace ignoring case
// (code_key), which the unique index decides when two requests race.
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
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(http.StatusCreated, resource.PromotionCodes, id, q.ID) })
}

// A promotion's status follows its dates until it is archived. Writes
// store the status the dates give; the clock (api/clock) moves the ones it
// has overtaken before every read, so no read shows a stale state.

// promotionStatus is the status the dates give at now.
func promotionStatus(starts, ends *time.Time, now time.Time) promotion.Status {
	switch {
	case starts != nil && starts.After(now):
		return promotion.StatusScheduled
	case ends != nil && !ends.After(now):
		return promotion.StatusExpired
	}
	return promotion.StatusActive
}

// promotionTerms are a promotion's discount and dates: the stored ones
// (on PATCH) overlaid with the body's.
type promotionTerms struct {
	kind         promotion.Kind
	discountType promotion.DiscountType
	value        int64
	hasValue     bool // the body sent discount_value
	starts, ends *time.Time
}

// overlay applies the body's terms and checks them together.
func (t *promotionTerms) overlay(v Values) error {
	if s, ok := v.String("kind"); ok {
		t.kind = promotion.Kind(s)
	}
	if s, ok := v.String("discount_type"); ok {
		t.discountType = promotion.DiscountType(s)
	}
	t.value, t.hasValue = v.Int("discount_value")
	if !t.hasValue {
		t.value = -1 // unknown yet: the stored value, or none on create
	}
	for _, d := range []struct {
		name string
		to   **time.Time
	}{{"starts_at", &t.starts}, {"ends_at", &t.ends}} {
		if v.IsNull(d.name) {
			*d.to = nil
		} else if s, ok := v.String(d.name); ok {
			tm, _ := time.Parse(time.RFC3339, s) // the body checked the format
			tm = tm.UTC()
			*d.to = &tm
		}
	}
	if t.starts != nil && t.ends != nil && !t.ends.After(*t.starts) {
		return apierr.Invalid("ends_at", "ends_at must be after starts_at")
	}
	return nil
}

// checkValue checks the discount value against the type; value is the
// one that will be stored.
func (t *promotionTerms) checkValue() error {
	switch t.discountType {
	case promotion.DiscountTypePercentage:
		if t.value < 1 || t.value > 10_000 {
			return apierr.Invalid("discount_value", "a percentage discount_value is in basis points, from 1 to 10000 (1500 = 15 %%)")
		}
	case promotion.DiscountTypeFreeShipping:
		if t.value != 0 {
			return apierr.Invalid("discount_value", "a free_shipping promotion has no discount_value (0)")
		}
	}
	return nil
}

// setPromotion sets the terms and the status they give now on a mutation;
// the other body fields are columns of the same name.
func (q *Request) setPromotion(m *ent.PromotionMutation, t promotionTerms) error {
	m.SetKind(t.kind)
	m.SetDiscountType(t.discountType)
	m.SetDiscountValue(t.value)
	for _, d := range []struct {
		at    *time.Time
		set   func(time.Time)
		clear func()
	}{{t.starts, m.SetStartsAt, m.ClearStartsAt}, {t.ends, m.SetEndsAt, m.ClearEndsAt}} {
		if d.at != nil {
			d.set(*d.at)
		} else {
			d.clear()
		}
	}
	m.SetStatus(promotionStatus(t.starts, t.ends, time.Now().UTC()))
	return applyBody(m, q.Op.Body, q.Body, nil, "kind", "discount_type", "discount_value", "starts_at", "ends_at")
}

func createPromotion(q *Request) (Result, error) {
	t := promotionTerms{kind: promotion.KindCode, discountType: promotion.DiscountTypePercentage}
	if err := t.overlay(q.Body); err != nil {
		return Result{}, err
	}
	if !t.hasValue {
		if t.discountType != promotion.DiscountTypeFreeShipping {
			return Result{}, apierr.Invalid("discount_value", "discount_value is required for a %s promotion", t.discountType)
		}
		t.value = 0
	}
	if err := t.checkValue(); err != nil {
		return Result{}, err
	}
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		c := tx.Promotion.Create().SetWorkspaceID(q.Workspace().ID)
		if err := q.setPromotion(c.Mutation(), t); err != nil {
			return err
		}
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(http.StatusCreated, resource.Promotions, id, "") })
}

// updatePromotion edits a promotion that is not archived; its status
// follows the dates after the edit. One with codes cannot become automatic.
func updatePromotion(q *Request) (Result, error) {
	return q.inTx(func(tx *ent.Tx) error {
		if _, err := q.allowed(tx); err != nil { // locks the row: two edits apply one after the other
			return err
		}
		p, err := tx.Promotion.Get(q.Ctx, q.ID)
		if err != nil {
			return err
		}
		t := promotionTerms{kind: p.Kind, discountType: p.DiscountType, starts: p.StartsAt, ends: p.EndsAt}
		if err := t.overlay(q.Body); err != nil {
			return err
		}
		if !t.hasValue {
			t.value = p.DiscountValue
			if t.discountType == promotion.DiscountTypeFreeShipping {
				t.value = 0 // a type without a value drops the old one
			}
		}
		if err := t.checkValue(); err != nil {
			return err
		}
		if t.kind == promotion.KindAutomatic && p.Kind == promotion.KindCode {
			has, err := tx.PromotionCode.Query().Where(promotioncode.PromotionID(p.ID)).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if has {
				return apierr.Conflict("has_codes", "a promotion with codes cannot become automatic")
			}
		}
		u := tx.Promotion.UpdateOneID(q.ID)
		if err := q.setPromotion(u.Mutation(), t); err != nil {
			return err
		}
		return u.Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, resource.Promotions, q.ID, "") })
}

// archivePromotion moves a promotion out of lists and reads; it answers
// the archived promotion, read past the resource's Scope.
func archivePromotion(q *Request) (Result, error) {
	var b []byte
	return q.inTx(func(tx *ent.Tx) error {
		if _, err := q.allowed(tx); err != nil {
			return err
		}
		if err := q.setState(tx, q.Op.To); err != nil {
			return err
		}
		var err error
		b, err = q.Records.RenderUnscoped(q.Ctx, tx, q.Resource, q.Workspace(), q.ID)
		return err
	}, func() Answer { return Answer{Status: http.StatusOK, Body: b} })
}
