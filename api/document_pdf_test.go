package api

import "testing"

// A document's number is free text; its file name keeps what any file
// system takes and never makes a path.
func TestFileNameOfADocument(t *testing.T) {
	for number, want := range map[string]string{
		"INV-000042": "INV-000042", "2026/17": "2026-17", "../../etc": "etc", "Facture n° 12": "Facture-n-12",
		"": "inv_x", "..": "inv_x", "فاتورة": "inv_x", "A\"B": "A-B",
	} {
		if got := fileName(number, "inv_x"); got != want {
			t.Errorf("fileName(%q) = %q, want %q", number, got, want)
		}
	}
}
