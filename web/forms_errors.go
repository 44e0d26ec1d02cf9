package web

import (
	"regexp"
	"strconv"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// Every refusal at once. The write path stops at its first refusal; the
// form first checks the body by the operation's declaration (api/body,
// the same checks /v1 runs) one field and one line's field at a time, so
// that each refusal shows by its input together, in words.

// declErrors are the declaration's refusals of body, by input name (paths
// maps a body param to the input where they differ), in words.
func declErrors(fields []resource.Field, raw []byte, paths map[string]string) map[string]string {
	m, err := body.Decode(raw)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	add := func(err error) {
		e, ok := apierr.As(err)
		if !ok || e.Param == "" {
			return
		}
		input := e.Param
		if in, ok := paths[input]; ok {
			input = in
		}
		if _, seen := out[input]; !seen {
			out[input] = inWords(input, e.Param, e.Message)
		}
	}
	for _, f := range fields {
		if !formable(f) {
			continue
		}
		x, present := m[f.Name]
		rows, isRows := x.([]any)
		if !rowsField(f) || !present || !isRows {
			one := map[string]any{}
			if present {
				one[f.Name] = x
			}
			_, err := body.Check(one, []resource.Field{f}, "")
			add(err)
			continue
		}
		for i, row := range rows {
			cells, ok := row.(map[string]any)
			if !ok {
				continue
			}
			for _, it := range f.Items {
				one := map[string]any{}
				if y, ok := cells[it.Name]; ok {
					one[it.Name] = y
				}
				_, err := body.Check(one, []resource.Field{it}, f.Name+"["+strconv.Itoa(i)+"].")
				add(err)
			}
		}
	}
	return out
}

// namedParam is a message that starts with a field's name ("currency_code
// must be …", "lines[1].qty_milli is required").
var namedParam = regexp.MustCompile(`^([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z][a-z0-9_]*\[\d+\]\.[a-z][a-z0-9_]*)\b`)
