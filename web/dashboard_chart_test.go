package web

import (
	"strings"
	"testing"
)

func TestShortMoneyWritesTheCurrencyAsMoneyFormatDoes(t *testing.T) {
	for _, c := range []struct {
		minor    int64
		currency string
		want     string
	}{{0, "EUR", "€0"}, {120000, "EUR", "€1.2k"}, {350000000, "USD", "$3.5M"}, {500, "JPY", "¥500"}, {500000, "KWD", "KWD 500"}, {2500, "", "25"}} {
		if got := strings.Join(strings.Fields(shortMoney(c.minor, c.currency)), " "); got != c.want {
			t.Errorf("shortMoney(%d, %q) = %q, want %q", c.minor, c.currency, got, c.want)
		}
	}
}

// On a phone the narrow chart labels every other month, the latest
// always, and its labels never overlap their neighbours.
func TestNarrowChartLabelsFitTheirRoom(t *testing.T) {
	var v moneyView
	v.ChartCurrency = "EUR"
	for i := 1; i <= 12; i++ {
		b := monthBar{Month: "2026-" + string(rune('0'+i/10)) + string(rune('0'+i%10))}
		b.add("EUR", 1, int64(i)*1234567)
		v.Months = append(v.Months, b)
	}
	for _, s := range []chartShape{wideChart, narrowChart} {
		c := v.chart(s)
		var labelled []chartBar
		for _, b := range c.Bars {
			if b.Label != "" {
				labelled = append(labelled, b)
			}
		}
		if labelled[len(labelled)-1] != c.Bars[len(c.Bars)-1] {
			t.Errorf("%v: the latest month has no label", s)
		}
		room := labelled[1].X - labelled[0].X
		if need := float64(len("12/26")) * s.Font * 0.62; need > room {
			t.Errorf("%v: a month label needs %.0f units, has %.0f", s, need, room)
		}
		last := c.Bars[len(c.Bars)-1]
		if need := float64(len("12/26")) * s.Font * 0.62 / 2; last.X+last.W/2+need > c.W {
			t.Errorf("%v: the latest month's label is cut at the right edge", s)
		}
		if need := float64(len([]rune(c.Grid[4].Label))) * s.Font * 0.62; need > c.Left-6 {
			t.Errorf("%v: the gridline label %q needs %.0f units, has %.0f", s, c.Grid[4].Label, need, c.Left-6)
		}
	}
}
