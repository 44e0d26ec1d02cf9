package writes

import "testing"

// Every line of the operations table binds an operation its resource
// declares, and every document kind is the one its resource maps to: a
// typo in the table must not bind a write no route reaches.
func TestEveryOperationInTheTableIsDeclared(t *testing.T) {
	for k := range operations {
		switch {
		case k.k == "":
			t.Errorf("%s: no operation kind", k.r.Name)
		case k.name != "":
			if _, ok := k.r.Action(k.name); !ok {
				t.Errorf("%s has no %q action declared", k.r.Name, k.name)
			}
		default:
			if _, ok := k.r.Op(k.k); !ok {
				t.Errorf("%s has no %s operation declared", k.r.Name, k.k)
			}
		}
	}
	for r, kind := range docKinds {
		if kind.r != r {
			t.Errorf("docKinds maps %s to the kind of %s", r.Name, kind.r.Name)
		}
	}
}
