package web

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// The defaults a New document form takes from the company profile, and the
// check that nothing is saved at 0 % VAT without the form saying so.

// companyDefaults is what the company profile fills on a New document.
type companyDefaults struct {
	cur   string
	vatBp *int
	terms *int
}

func (u *UI) companyDefaults(c *fiber.Ctx) companyDefaults {
	p, err := u.core.Company(c.UserContext(), workspaceOf(c).ID)
	if err != nil || p == nil {
		return companyDefaults{}
	}
	return companyDefaults{cur: p.DefaultCurrency, vatBp: p.DefaultVatRateBp, terms: p.DefaultPaymentTermsDays}
}

// linesOf is a body's priced lines with a VAT rate, and that rate's field.
func linesOf(fields []resource.Field) (resource.Field, resource.Field, bool) {
	for _, f := range fields {
		if rowsField(f) && formable(f) && priced(f) {
			for _, it := range f.Items {
				if it.Name == "vat_rate_bp" {
					return f, it, true
				}
			}
		}
	}
	return resource.Field{}, resource.Field{}, false
}

// curDefault is the hidden input that says which currency the form filled
// in from the company profile (so that a party chosen later has its own).
const curDefault = "_cur_default"

// documentDefaults fills a New document's currency when no party is
// chosen, and its due date from the date and the payment terms; cur is
// the currency it filled in.
func documentDefaults(fields []resource.Field, v formValues, d companyDefaults) (cur string) {
	if _, _, ok := linesOf(fields); !ok {
		return ""
	}
	party := strings.TrimSpace(v["client_id"]) != "" || strings.TrimSpace(v["vendor_id"]) != ""
	if declares(fields, "currency_code") && v["currency_code"] == "" && !party && resource.CurrencyCode.Match(d.cur) {
		v["currency_code"] = d.cur
		cur = d.cur
	}
	if declares(fields, "due_date") && v["due_date"] == "" && d.terms != nil {
		day, err := time.Parse(time.DateOnly, strings.TrimSpace(v["date"]))
		if err != nil {
			day = time.Now().UTC()
		}
		v["due_date"] = day.AddDate(0, 0, *d.terms).Format(time.DateOnly)
	}
	return cur
}

// partyCurrency leaves a New document's currency to the party chosen
// (client or vendor) when the form only holds the company's, which it
// filled in, and the party has a currency of its own.
func (u *UI) partyCurrency(c *fiber.Ctx, s formSpec, v formValues) {
	if !s.create() || s.CurDefault == "" || strings.TrimSpace(v["currency_code"]) != s.CurDefault {
		return
	}
	for _, p := range []struct {
		field string
		r     *resource.Resource
	}{{"client_id", resource.Clients}, {"vendor_id", resource.Vendors}} {
		if id := strings.TrimSpace(v[p.field]); id != "" && declares(s.RT.Op.Body, p.field) {
			if rec, err := u.current(c, p.r, id); err == nil && rec != nil && resource.CurrencyCode.Match(textOf(rec.get("currency_code"))) {
				v["currency_code"] = textOf(rec.get("currency_code"))
			}
		}
	}
}

// vatText is a rate in basis points as its input shows it (20 for 2000).
func vatText(f resource.Field, bp int) string { return unitText(f, int64(bp), "") }

// newRowsVAT shows the company's VAT rate in the rows a New form adds
// (those the values do not hold yet); a person can change it.
func newRowsVAT(items []formItem, v formValues, d companyDefaults) {
	if d.vatBp == nil {
		return
	}
	for _, it := range items {
		rs := it.Rows
		if rs == nil || !priced(rs.F) {
			continue
		}
		for i := rowCount(v, rs.F); i < len(rs.Rows); i++ {
			for j := range rs.Rows[i] {
				if ff := &rs.Rows[i][j]; ff.F.Name == "vat_rate_bp" && ff.Value == "" {
					ff.Value = vatText(ff.F, *d.vatBp)
				}
			}
		}
	}
}

// confirmZero is the checkbox that saves lines at 0 % VAT anyway.
const confirmZero = "_zero_vat"

// sendsLines reports whether a form's body writes its priced lines (an
// edit that leaves them alone sends none, and holds nothing).
func sendsLines(fields []resource.Field, body []byte) bool {
	f, _, ok := linesOf(fields)
	if !ok {
		return false
	}
	var sent map[string]json.RawMessage
	if json.Unmarshal(body, &sent) != nil {
		return false
	}
	_, ok = sent[f.Name]
	return ok
}

// zeroVAT names, by input, the lines of a body about to be saved at 0 %
// VAT while the company's default rate is not 0, in words.
func zeroVAT(fields []resource.Field, v formValues, d companyDefaults) map[string]string {
	f, vat, ok := linesOf(fields)
	if !ok || d.vatBp == nil || *d.vatBp == 0 {
		return nil
	}
	held := map[string]string{}
	for i := 0; i < rowCount(v, f); i++ {
		blank := true
		for _, it := range f.Items {
			if it.Name != "vat_rate_bp" && strings.TrimSpace(v[rowName(f, i, it)]) != "" {
				blank = false
			}
		}
		k := rowName(f, i, vat)
		n, problem := int64(0), ""
		if txt := strings.TrimSpace(v[k]); txt != "" { // none is 0, the API's default
			n, problem = parseUnit(vat, txt, "")
		}
		if blank || problem != "" || n != 0 {
			continue
		}
		held[k] = rowWord(f.Name) + " " + strconv.Itoa(i+1) + ": VAT is 0 % — confirm to save it so."
	}
	return held
}
