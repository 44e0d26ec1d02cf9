package web

import (
	"cmp"
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

// refill fills a New form from the records its pickers name, where the
// id changed since the form was drawn (a picker's pick, a name typed that
// names one record, an id typed or sent in the address): see refillFrom.
// It returns the inputs filled.
func (u *UI) refill(c *fiber.Ctx, s *formSpec, v formValues) map[string]bool {
	filled := map[string]bool{}
	if !s.create() {
		return filled
	}
	ws := workspaceOf(c)
	for _, f := range s.RT.Op.Body {
		r := refField(ws, f)
		id := strings.TrimSpace(v[f.Name])
		if r == nil || id == "" || id == strings.TrimSpace(v[wasPrefix+f.Name]) || byIDPrefix(id) != r {
			continue
		}
		rec, err := u.current(c, r, id)
		if err != nil || rec == nil {
			continue
		}
		for k := range u.refillFrom(c, s, v, f.Name, rec) {
			filled[k] = true
		}
	}
	return filled
}

// refillFrom fills a New form from rec, the record its field names: the
// record's currency where the form's is empty or the one it filled in
// itself (the person's own stays), the other records it names where the
// form names none (an invoice's client on a credit note), and its lines
// where the form's are all blank (a credit note of an invoice). It
// returns the inputs filled.
func (u *UI) refillFrom(c *fiber.Ctx, s *formSpec, v formValues, field string, rec record) map[string]bool {
	if !s.create() {
		return nil
	}
	filled := map[string]bool{}
	op := s.RT.Op
	ws := workspaceOf(c)
	for _, f := range op.Body {
		switch {
		case f.Name == field || !formable(f):
		case f.Name == "currency_code" && !rowsField(f):
			cur := textOf(rec.get("currency_code"))
			if now := strings.TrimSpace(v[f.Name]); resource.CurrencyCode.Match(cur) && (now == "" || now == s.CurDefault) {
				v[f.Name], s.CurDefault = cur, cur
				filled[f.Name] = true
			}
		case refField(ws, f) != nil:
			id := textOf(rec.get(f.Name))
			if strings.TrimSpace(v[f.Name]) == "" && byIDPrefix(id) == refTarget(f) {
				v[f.Name], v[wasPrefix+f.Name] = id, id
				delete(v, queryPrefix+f.Name) // drawn from the record's name
				filled[f.Name] = true
			}
		case rowsField(f):
			// A create whose rows come from the record it is of (a
			// shipment's, a return's) takes them there (prefill).
			if op.FromOf != "" || ownRows[s.R] != nil || !blankRows(v, f) {
				continue
			}
			// The record's amounts are in its own currency.
			if copyRows(f, v, rec, cmp.Or(textOf(rec.get("currency_code")), defaultCurrency)) {
				filled[f.Name] = true
			}
		}
	}
	return filled
}

// blankRows reports whether no row of f holds anything but a VAT rate
// (which a New form fills in).
func blankRows(v formValues, f resource.Field) bool {
	for i := 0; i < rowCount(v, f); i++ {
		if !rowBlank(v, f, i) {
			return false
		}
	}
	return true
}

// copyRows copies rec's rows of f's name into the form as editable rows
// (an invoice's lines into its credit note), its amounts in cur, when
// each row has every column f requires; false when it copies none.
func copyRows(f resource.Field, v formValues, rec record, cur string) bool {
	rows, _ := objectRows(rec.get(f.Name))
	if len(rows) == 0 {
		return false
	}
	for _, row := range rows {
		for _, it := range f.Items {
			if it.Required && row.get(it.Name) == nil {
				return false
			}
		}
	}
	for i := 0; i < rowCount(v, f); i++ {
		for _, it := range f.Items {
			delete(v, rowName(f, i, it))
		}
	}
	for i, row := range rows {
		for _, it := range f.Items {
			if x := row.get(it.Name); x != nil {
				v[rowName(f, i, it)] = fieldText(it, x, cur)
			} else {
				v[rowName(f, i, it)] = ""
			}
		}
	}
	return true
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
