package resource

import (
	text "strings"
	"testing"
)

// TestUnitsDeclaredOnce checks every integer field's unit follows its
// name: the admin forms show and take *_cents as money, *_milli as a
// quantity, *_bp as a percentage, and only those.
func TestUnitsDeclaredOnce(t *testing.T) {
	want := func(name string) Unit {
		switch {
		case text.HasSuffix(name, "_cents"):
			return MinorUnits
		case text.HasSuffix(name, "_milli"):
			return Thousandths
		case text.HasSuffix(name, "_bp"):
			return BasisPoints
		}
		return Count
	}
	var walk func(where string, fs []Field)
	seen := 0
	walk = func(where string, fs []Field) {
		for _, f := range fs {
			if f.Type == Integer {
				seen++
				if f.Unit != want(f.Name) {
					t.Errorf("%s.%s: unit %q, want %q", where, f.Name, f.Unit, want(f.Name))
				}
			} else if f.Unit != Count {
				t.Errorf("%s.%s: a %s field with unit %q", where, f.Name, f.Type, f.Unit)
			}
			walk(where+"."+f.Name, f.Items)
		}
	}
	for _, r := range All {
		for _, op := range r.Ops {
			walk(r.Name+" "+string(op.Kind)+" "+op.Name, op.Body)
		}
	}
	if seen == 0 {
		t.Fatal("no integer field found")
	}
	if Thousandths.Scale() != 3 || BasisPoints.Scale() != 2 || MinorUnits.Scale() != 0 {
		t.Fatal("scales")
	}
}
