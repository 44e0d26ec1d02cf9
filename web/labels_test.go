package web

import "testing"

func TestLabelsWriteAcronymsInCapitals(t *testing.T) {
	for name, want := range map[string]string{
		"amount_incl_vat_cents": "Amount incl VAT",
		"amount_excl_vat_cents": "Amount excl VAT",
		"vat_amount_cents":      "VAT amount",
		"vat_rate_bp":           "VAT rate",
		"client_id":             "Client ID",
		"id":                    "ID",
		"sku":                   "SKU",
		"primary_url":           "Primary URL",
		"credit-notes":          "Credit notes",
		"qty_milli":             "Quantity",
		"shipped_qty_milli":     "Shipped quantity",
		"weight_g":              "Weight",
		"idempotent":            "Idempotent",
		"video":                 "Video",
	} {
		if got := label(name); got != want {
			t.Errorf("label(%q) = %q, want %q", name, got, want)
		}
	}
}
