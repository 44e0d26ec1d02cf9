package webhooks

import "testing"

// An endpoint's enabled_events match as GET /v1/events' type filter does.
func TestWantsMatchesTypesAndWildcards(t *testing.T) {
	cases := []struct {
		types []string
		typ   string
		want  bool
	}{
		{[]string{"*"}, "invoice.paid", true},
		{[]string{"invoice.paid"}, "invoice.paid", true},
		{[]string{"invoice.paid"}, "invoice.sent", false},
		{[]string{"invoice.*"}, "invoice.sent", true},
		{[]string{"invoice.*"}, "invoice_payment.created", false},
		{[]string{"sales_order.*", "client.created"}, "client.created", true},
		{[]string{"invoice"}, "invoice.sent", false},
	}
	for _, c := range cases {
		if got := Wants(c.types, c.typ); got != c.want {
			t.Errorf("Wants(%v, %q) = %v, want %v", c.types, c.typ, got, c.want)
		}
	}
}
