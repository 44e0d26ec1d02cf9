package writes

import (
	"context"
	"fmt"
	"slices"

	"entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/apierr"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

func internalf(format string, a ...any) error { return apierr.Internal(fmt.Errorf(format, a...)) }

// setFields sets columns of an ent mutation by name.
func setFields(m ent.Mutation, set map[string]any) error {
	for name, v := range set {
		if err := m.SetField(name, v); err != nil {
			return internalf("set %s: %w", name, err)
		}
	}
	return nil
}

// enumOf converts a validated enum string to the ent type of a column
// (ent types each enum column); nil means the column is not an enum.
type enumOf func(column, value string) ent.Value

// enumColumn is the enumOf of a resource whose one enum column is name, of
// ent type S.
func enumColumn[S ~string](name string) enumOf {
	return func(column, value string) ent.Value {
		if column == name {
			return S(value)
		}
		return value
	}
}

// applyBody copies the body fields that are columns of the same name onto
// an ent mutation: a sent value is set, a sent null clears the column, and an
// omitted field is left alone (DESIGN.md "Requests": PATCH semantics; a
// create keeps the schema's defaults). skip names fields the caller handles.
func applyBody(m ent.Mutation, fields []resource.Field, v Values, enum enumOf, skip ...string) error {
	for _, f := range fields {
		if !v.Has(f.Name) || slices.Contains(skip, f.Name) {
			continue
		}
		if v.IsNull(f.Name) {
			if err := m.ClearField(f.Name); err != nil {
				return internalf("clear %s: %w", f.Name, err)
			}
			continue
		}
		val := v.Raw(f.Name)
		if f.Type == resource.Enum && enum != nil {
			val = enum(f.Name, val.(string))
		}
		if err := m.SetField(f.Name, val); err != nil {
			return internalf("set %s: %w", f.Name, err)
		}
	}
	return nil
}

// updated runs save, an update by id and workspace, and answers 404 (of
// what) when it matched no record.
func updated(ctx context.Context, save func(context.Context) (int, error), what string) error {
	n, err := save(ctx)
	if err == nil && n == 0 {
		return apierr.NotFound(what)
	}
	return err
}
