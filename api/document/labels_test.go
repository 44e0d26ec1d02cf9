package document

import (
	"strings"
	"testing"
)

func TestEveryLabelInEveryLanguage(t *testing.T) {
	en := catalogue["en"]
	for _, lang := range []Lang{"en", "fr", "ar"} {
		c := catalogue[lang]
		for k, s := range en {
			if strings.TrimSpace(c[k]) == "" {
				t.Errorf("%s: no text for %s", lang, k)
			} else if strings.Count(c[k], "%") != strings.Count(s, "%") {
				t.Errorf("%s: %s has verbs %q, English %q", lang, k, c[k], s)
			}
		}
		if len(c) != len(en) {
			t.Errorf("%s has %d labels, English %d", lang, len(c), len(en))
		}
	}
	for _, k := range []Kind{Invoice, Quote, CreditNote, SalesOrder, Shipment} {
		if k.Title() == "" {
			t.Errorf("%s has no title", k)
		}
	}
}
