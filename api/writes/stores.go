package writes

import (
	"strings"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/store"
)

// storeOwnFields are set by the operation after normalizing them.
var storeOwnFields = []string{"free_address", "custom_domain", "custom_domain_verified", "custom_domain_active"}

// hostname normalizes a host name field: trimmed, lower-cased (DNS ignores
// case), one trailing dot dropped; a scheme, path, port, space or a label
// that DNS would refuse is a 400 naming the field.
func hostname(param, s string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	bad := func(why string) (string, error) {
		return "", apierr.Invalid(param, "%s must be a host name such as shop.example.com (%s)", param, why)
	}
	switch {
	case strings.Contains(h, "://"):
		return bad("no scheme")
	case strings.ContainsAny(h, "/?#"):
		return bad("no path")
	case strings.Contains(h, ":"):
		return bad("no port")
	case len(h) > 253:
		return bad("at most 253 characters")
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return bad("at least two labels")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return bad("labels of 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen")
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return bad("letters, digits, hyphens and dots only; IDNs in their xn-- form")
			}
		}
	}
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return bad("not an IP address")
	}
	return h, nil
}

// storeDomain is what a body sets of a store's addresses and custom
// domain, applied on top of the stored row (nil on create).
func (q *Request) storeDomain(m *ent.StoreMutation, old *ent.Store) error {
	v := q.Body
	if s, ok := v.String("free_address"); ok {
		h, err := hostname("free_address", s)
		if err != nil {
			return err
		}
		m.SetFreeAddress(h)
	}
	var domain *string
	if old != nil {
		domain = old.CustomDomain
	}
	switch s, ok := v.String("custom_domain"); {
	case v.IsNull("custom_domain"):
		m.ClearCustomDomain()
		domain = nil
	case ok:
		h, err := hostname("custom_domain", s)
		if err != nil {
			return err
		}
		if domain == nil || *domain != h {
			// Another domain is another DNS record: it must be verified
			// and switched on again before it serves the store.
			m.SetCustomDomainVerified(false)
			m.SetCustomDomainActive(false)
		}
		m.SetCustomDomain(h)
		domain = &h
	}
	if domain == nil {
		// No domain has nothing verified or active.
		m.SetCustomDomainVerified(false)
		m.SetCustomDomainActive(false)
	}
	for _, f := range []string{"custom_domain_verified", "custom_domain_active"} {
		b, ok := v.Bool(f)
		if !ok {
			continue
		}
		if b && domain == nil {
			return apierr.Invalid(f, "%s needs a custom_domain", f)
		}
		if f == "custom_domain_verified" {
			m.SetCustomDomainVerified(b)
		} else {
			m.SetCustomDomainActive(b)
		}
	}
	return nil
}

func createStore(q *Request) (Result, error) {
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		c := tx.Store.Create().SetWorkspaceID(q.Workspace().ID)
		if err := q.storeDomain(c.Mutation(), nil); err != nil {
			return err
		}
		if err := applyBody(c.Mutation(), q.Op.Body, q.Body, nil, storeOwnFields...); err != nil {
			return err
		}
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(created(true), resource.Stores, id, "") })
}

func updateStore(q *Request) (Result, error) {
	return q.inTx(func(tx *ent.Tx) error {
		old, err := forUpdate(q, tx.Store.Query().Where(store.ID(q.ID), store.WorkspaceID(q.Workspace().ID))).Only(q.Ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("store")
		}
		if err != nil {
			return err
		}
		u := tx.Store.UpdateOne(old)
		if err := q.storeDomain(u.Mutation(), old); err != nil {
			return err
		}
		if err := applyBody(u.Mutation(), q.Op.Body, q.Body, nil, storeOwnFields...); err != nil {
			return err
		}
		return u.Exec(q.Ctx)
	}, func() Answer { return record(created(false), resource.Stores, q.ID, "") })
}
