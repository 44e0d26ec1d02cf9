package web

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// uiLang is the language the admin UI shows numbers in.
const uiLang = "en"

// amountText is minor units of a currency as a person reads them there:
// €1,234.50, ¥1,235, KWD 1.234 (the currency's own exponent). Without a
// currency the amount still keeps its decimals.
func amountText(minor int64, currency string) string {
	if currency == "" {
		return fixed(minor, pricing.Digits(currency))
	}
	return pricing.Format(minor, currency, uiLang)
}

// shown is a value ready for a page.
type shown struct {
	Text  string
	Href  string // links an id to its record's page
	Title string // the id, when the text is the record's name
	Class string // mono, muted, num, badge ok|bad|warn
	Pre   bool   // structured data, shown as indented JSON
}

var goodStates = map[string]bool{"paid": true, "delivered": true, "active": true, "completed": true, "accepted": true,
	"issued": true, "applied": true, "confirmed": true, "shipped": true, "received": true, "capture": true}
var badStates = map[string]bool{"void": true, "cancelled": true, "failed": true, "rejected": true, "declined": true,
	"overdue": true, "expired": true, "archived": true}

// show formats one field of rec: money in its currency, quantities in
// units, ids as links to their records, statuses as badges.
func show(ws *ent.Workspace, name string, v any, rec record) shown {
	switch x := v.(type) {
	case nil:
		return shown{Text: "—", Class: "muted"}
	case bool:
		if x {
			return shown{Text: "yes"}
		}
		return shown{Text: "no"}
	case json.Number:
		return showNumber(name, x, rec)
	case string:
		return showString(ws, name, x)
	case record, []any:
		b, err := json.MarshalIndent(plain(x), "", "  ")
		if err != nil {
			return shown{Text: "?"}
		}
		return shown{Text: string(b), Pre: true}
	}
	return shown{Text: "?"}
}

// plain turns decoded records back into JSON-encodable values, keeping order.
func plain(v any) any {
	switch x := v.(type) {
	case record:
		var b strings.Builder
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Name)
			val, _ := json.Marshal(plain(f.Value))
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteByte('}')
		return json.RawMessage(b.String())
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func showNumber(name string, n json.Number, rec record) shown {
	i, err := n.Int64()
	if err != nil {
		return shown{Text: n.String(), Class: "num"}
	}
	switch {
	case strings.HasSuffix(name, "_cents"):
		cur, _ := rec.get("currency_code").(string)
		return shown{Text: amountText(i, cur), Class: "num"}
	case strings.HasSuffix(name, "_milli"):
		return shown{Text: pricing.Decimal(i, 3, uiLang), Class: "num"}
	case strings.HasSuffix(name, "_bp"):
		return shown{Text: pricing.Decimal(i, 2, uiLang) + " %", Class: "num"}
	case strings.HasSuffix(name, "_g"):
		return shown{Text: group(strconv.FormatInt(i, 10)) + " g", Class: "num"}
	}
	return shown{Text: strconv.FormatInt(i, 10), Class: "num"}
}

// fixed writes minor units with decimals: fixed(-123456, 2) = "-1,234.56";
// decimals <= 0 is whole units.
func fixed(v int64, decimals int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for len(s) <= decimals {
		s = "0" + s
	}
	out := group(s)
	if decimals > 0 {
		out = group(s[:len(s)-decimals]) + "." + s[len(s)-decimals:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

func group(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func showString(ws *ent.Workspace, name, s string) shown {
	if s == "" {
		return shown{Text: "—", Class: "muted"}
	}
	if name != "id" && ws != nil {
		if r := byIDPrefix(s); r != nil {
			return shown{Text: s, Href: wsURL(ws, "records", r.Name, s), Class: "mono"}
		}
	}
	if name == "status" || strings.HasSuffix(name, "_status") || name == "kind" {
		cls := "badge"
		if goodStates[s] {
			cls += " ok"
		} else if badStates[s] {
			cls += " bad"
		}
		return shown{Text: s, Class: cls}
	}
	if strings.HasSuffix(name, "_at") {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return shown{Text: fmtTime(t)}
		}
	}
	if name == "id" || strings.HasSuffix(name, "_id") {
		return shown{Text: s, Class: "mono"}
	}
	return shown{Text: s}
}

// byIDPrefix finds the browsable resource an id belongs to ("inv_01..." is an invoice).
func byIDPrefix(id string) *resource.Resource {
	p, rest, ok := strings.Cut(id, "_")
	if !ok || len(rest) < 10 || strings.ContainsAny(rest, " /") {
		return nil
	}
	for _, r := range browsable() {
		if _, get := r.Op(resource.Get); get && r.Prefix == p {
			return r
		}
	}
	return nil
}
