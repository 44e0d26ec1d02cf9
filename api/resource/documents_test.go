package resource

import (
	"slices"
	"testing"
)

// TestFollowUpsNameWhatTheyStart checks each follow-up: the record it
// starts names the document by a field of its create, and it is offered
// only in states the document has.
func TestFollowUpsNameWhatTheyStart(t *testing.T) {
	for _, f := range FollowUps {
		create, ok := f.Makes.Op(Create)
		if !ok || !slices.ContainsFunc(create.Body, func(b Field) bool { return b.Name == f.Field }) {
			t.Errorf("%s from %s: %s's create has no %s", f.Label, f.Of.Name, f.Makes.Name, f.Field)
		}
		for _, st := range f.From {
			if !slices.Contains(f.Of.states(), st) {
				t.Errorf("%s from %s: %s is not one of its states", f.Label, f.Of.Name, st)
			}
		}
		if got, ok := FollowUpOf(f.Of, f.Makes); !ok || got.Label != f.Label || !got.Allowed(f.From[0]) {
			t.Errorf("FollowUpOf(%s, %s) = %+v, %v", f.Of.Name, f.Makes.Name, got, ok)
		}
	}
	if FollowUps[0].Allowed("draft") || FollowUps[0].Allowed("void") {
		t.Error("a draft or void invoice is credited")
	}
	if _, ok := FollowUpOf(Invoices, Returns); ok {
		t.Error("an undeclared follow-up is found")
	}
}

// TestOrdersAreInvoicedOnceConfirmed checks the invoice action's states:
// an order is invoiced once confirmed, shipped or not, never as a draft or
// cancelled.
func TestOrdersAreInvoicedOnceConfirmed(t *testing.T) {
	op, ok := SalesOrders.Action("invoice")
	if !ok || op.To != "" || !slices.Equal(op.Makes, []*Resource{Invoices}) {
		t.Fatalf("invoice action %+v", op)
	}
	for _, st := range SalesOrders.states() {
		if want := st != "draft" && st != "cancelled"; op.Allowed(st) != want {
			t.Errorf("invoice from %s: allowed %v, want %v", st, op.Allowed(st), want)
		}
	}
}

// TestLateFieldsAreFieldsOfTheEdit checks each resource's late fields
// are fields its edit takes (external_ref only where the body has one).
func TestLateFieldsAreFieldsOfTheEdit(t *testing.T) {
	for r, late := range lateFields {
		edit, _ := r.Op(Update)
		n := 0
		for _, f := range late {
			if slices.ContainsFunc(edit.Body, func(b Field) bool { return b.Name == f }) {
				n++
			} else if f != "external_ref" {
				t.Errorf("%s: late field %s is not in its edit's body", r.Name, f)
			}
		}
		if n < 2 || len(edit.From) > 0 && !edit.Allowed("draft") {
			t.Errorf("%s: late fields %v, edit from %v", r.Name, late, edit.From)
		}
	}
}
