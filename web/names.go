package web

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// labelColumn is the column people call a record of r by: an invoice's
// number, a client's name; "" when it has none.
func labelColumn(r *resource.Resource) string {
	cols := records.Columns(r)
	for _, want := range []string{"number", "name", "code_last4", "provider_ref"} {
		if slices.ContainsFunc(cols, func(c records.ColumnInfo) bool { return c.Name == want }) {
			return want
		}
	}
	return ""
}

// namesOf finds the names of the records ids point to, with one query per
// resource, within the workspace: an id of another workspace gets none.
func (u *UI) namesOf(ctx context.Context, ws *ent.Workspace, ids []string) (map[string]string, error) {
	byRes := map[*resource.Resource][]any{}
	var order []*resource.Resource
	for _, id := range ids {
		r := byIDPrefix(id)
		if r == nil || labelColumn(r) == "" || missing(ws, r) != "" {
			continue
		}
		if _, ok := byRes[r]; !ok {
			order = append(order, r)
		}
		if !slices.Contains(byRes[r], any(id)) {
			byRes[r] = append(byRes[r], id)
		}
	}
	out := map[string]string{}
	for _, r := range order {
		ids := byRes[r]
		q := "SELECT id, " + labelColumn(r) + " FROM " + r.Table + " WHERE workspace_id = ? AND id IN (" +
			strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
		rows, err := u.db.ReadPool.QueryContext(ctx, u.db.Rebind(q), append([]any{ws.ID}, ids...)...)
		if err != nil {
			return nil, err
		}
		for err == nil && rows.Next() {
			var id, name string
			if err = rows.Scan(&id, &name); err == nil && name != "" {
				out[id] = name
			}
		}
		if err = cmp.Or(err, rows.Close(), rows.Err()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// idsIn collects the ids of other records a value mentions (nested values
// included), for namesOf.
func idsIn(v any, into []string) []string {
	switch x := v.(type) {
	case record:
		for _, f := range x {
			if f.Name == "id" {
				continue
			}
			into = idsIn(f.Value, into)
		}
	case []any:
		for _, e := range x {
			into = idsIn(e, into)
		}
	case string:
		if byIDPrefix(x) != nil {
			into = append(into, x)
		}
	}
	return into
}

// named shows a linked id by its record's name; the id stays in the title.
func named(s shown, names map[string]string) shown {
	if s.Href == "" {
		return s
	}
	if n, ok := names[s.Text]; ok {
		s.Title, s.Text, s.Class = s.Text, n, ""
	}
	return s
}

// nameOf is what people call rec, a record of r: its number or name as
// labelColumn says; "" when it has none.
func nameOf(r *resource.Resource, rec record) string {
	if col := labelColumn(r); col != "" {
		return textOf(rec.get(col))
	}
	return ""
}

// recordTitle names a record of r as a heading or a question does:
// "Invoice INV-000042", "Client Acme Ltd"; the id when it has no name.
func recordTitle(r *resource.Resource, rec record, id string) string {
	n := nameOf(r, rec)
	if n == "" {
		n = id
	}
	return humanize(r.Singular) + " " + n
}
