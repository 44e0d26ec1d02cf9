package writes

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/category"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// maxDepth bounds the walk up the tree when checking for a cycle.
const maxDepth = 1000

// saveCategory creates a category (POST) or updates q.ID (PATCH). A derived
// slug is the first free one of name-slug, name-slug-2, ...; a sent one is
// used as is.
func saveCategory(q *Request) (Result, error) {
	v, ws, id := q.Body, q.Principal.Workspace.ID, q.ID
	name, _ := v.String("name")
	if strings.TrimSpace(name) == "" {
		return Result{}, apierr.Invalid("name", "name must not be blank")
	}
	slug, hasSlug := v.String("slug")
	if hasSlug && (slug == "" || slugify(slug) != slug) {
		return Result{}, apierr.Invalid("slug", "slug must be lowercase letters and digits separated by single hyphens, e.g. %q", slugify(name))
	}
	var catID string
	pid, moves := v.String("parent_id")
	return q.inTx(func(tx *ent.Tx) error {
		catID = id
		if moves {
			if err := numbering.Serialize(q.Ctx, tx, ws, "category-tree"); err != nil {
				return err
			}
		}
		// Writers of a slug take turns (after the tree's lock), else on
		// PostgreSQL concurrent creates of one name pick the same free slug
		// and the losers' retries run out.
		if hasSlug || id == "" {
			if err := numbering.Serialize(q.Ctx, tx, ws, "category-slugs"); err != nil {
				return err
			}
		}
		if id != "" {
			ok, err := forUpdate(q, tx.Category.Query().Where(category.WorkspaceID(ws), category.ID(id))).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if !ok {
				return apierr.NotFound("category")
			}
		}
		if moves {
			if err := checkParent(q, tx, ws, id, pid); err != nil {
				return err
			}
		}
		if hasSlug {
			taken, err := tx.Category.Query().Where(category.WorkspaceID(ws), category.Slug(slug), category.IDNEQ(id)).Exist(q.Ctx)
			if err != nil {
				return err
			}
			if taken {
				return duplicate("slug", "another category already has slug %q", slug)
			}
		} else if id == "" {
			var err error
			if slug, err = freeSlug(q, tx, ws, name); err != nil {
				return err
			}
		}
		var m *ent.CategoryMutation
		var exec func(context.Context) error
		if id == "" {
			catID = ids.New(resource.Categories.Prefix)
			c := tx.Category.Create().SetID(catID).SetWorkspaceID(ws)
			m, exec = c.Mutation(), c.Exec
		} else {
			u := tx.Category.UpdateOneID(id)
			m, exec = u.Mutation(), u.Exec
		}
		// name, parent_id (null clears it), active and translations as sent.
		if err := applyBody(m, q.Op.Body, v, nil, "slug", "sort_order"); err != nil {
			return err
		}
		if slug != "" {
			m.SetSlug(slug)
		}
		if n, ok := v.Int("sort_order"); ok {
			m.SetSortOrder(int(n)) // an int column; the body's integers are int64
		}
		return exec(q.Ctx)
	}, func() Answer { return record(created(id == ""), resource.Categories, catID, "") })
}

// checkParent refuses a parent outside the workspace and one that has the
// category among its ancestors; the caller holds the tree's lock.
func checkParent(q *Request, tx *ent.Tx, ws, id, pid string) error {
	cycle := func() error {
		e := apierr.Conflict("invalid_state_transition", "parent_id %q would make a cycle: a category cannot sit under itself or its own descendants", pid)
		e.Param = "parent_id"
		return e
	}
	if pid == id {
		return cycle()
	}
	at := pid
	for depth := 0; depth < maxDepth; depth++ {
		c, err := tx.Category.Query().Where(category.WorkspaceID(ws), category.ID(at)).Only(q.Ctx)
		if ent.IsNotFound(err) && depth == 0 {
			return apierr.Invalid("parent_id", "no such category %q in this workspace", pid)
		}
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.ParentID == nil {
			return nil
		}
		if *c.ParentID == id && id != "" {
			return cycle()
		}
		at = *c.ParentID
	}
	return cycle()
}

// freeSlug derives a slug from the name that no category of the workspace has.
func freeSlug(q *Request, tx *ent.Tx, ws, name string) (string, error) {
	base := slugify(name)
	if base == "" {
		base = "category"
	}
	used, err := tx.Category.Query().
		Where(category.WorkspaceID(ws), category.Or(category.Slug(base), category.SlugHasPrefix(base+"-"))).
		Select(category.FieldSlug).Strings(q.Ctx)
	if err != nil {
		return "", err
	}
	taken := setOf(used)
	slug := base
	for n := 2; taken[slug]; n++ {
		slug = base + "-" + strconv.Itoa(n)
	}
	return slug, nil
}

// slugify lowercases s, folds accents to ASCII (é → e) and joins the
// remaining runs of letters and digits with single hyphens.
func slugify(s string) string {
	fold := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	folded, _, err := transform.String(fold, s)
	if err != nil {
		folded = s
	}
	var b strings.Builder
	gap := false
	for _, c := range strings.ToLower(folded) {
		if c < 128 && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
			if gap && b.Len() > 0 {
				b.WriteByte('-')
			}
			gap = false
			b.WriteRune(c)
			continue
		}
		gap = true
	}
	return b.String()
}
