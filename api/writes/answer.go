package writes

import (
	"net/http"

	"github.com/ledgerbase/ledgerbase/api/resource"
)

// answer renders the written record as reads do: 201 when the write
// created it, 200 when it changed one that existed.
func answer(q *Request, r *resource.Resource, id, parentID string, created bool) (Result, error) {
	rec, err := q.Record(r, id, parentID)
	if err != nil {
		return Result{}, err
	}
	if created {
		return Result{Status: http.StatusCreated, Body: rec}, nil
	}
	return Result{Status: http.StatusOK, Body: rec}, nil
}

// setStrings copies the string fields sent to their setters; omitted
// fields are left alone.
func setStrings(v Values, setters map[string]func(string)) {
	for name, set := range setters {
		if s, ok := v.String(name); ok {
			set(s)
		}
	}
}
