package api

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// List bounds (DESIGN.md "Lists").
const (
	DefaultLimit = resource.DefaultLimit
	MaxLimit     = resource.MaxLimit
	MaxQLen      = resource.MaxQLen
)

// Query is a list request's parameters as sent: it calls visit with each
// key and value, in order (fasthttp's Args.VisitAll is one).
type Query func(visit func(key, value []byte))

// List is a list request's parameters, read by ParseList.
type List struct {
	// Page is limit and offset, and for a resource's records q and the
	// named filters (ParentID is the caller's).
	records.Page
	// Events are GET /v1/events's own parameters.
	Events EventQuery
}

// EventQuery is what GET /v1/events's own parameters (resource.EventParams)
// ask for.
type EventQuery struct {
	// Types are the ?type= lists, each a list of patterns any of which
	// matches (every list must match).
	Types [][]string
	// Created are the created[gte] and created[lt] bounds.
	Created []TimeBound
	// After and Before are the cursors starting_after and ending_before.
	After, Before string
}

// TimeBound is one bound of a time range: Op is ">=" or "<".
type TimeBound struct {
	Op string
	At time.Time
}

// ParseList is the one reader of every list's query: limit and offset, and
// r's q, sort and filters or resource.EventParams (nothing more when r is nil).
// Any other parameter is refused, so a typo never lists everything.
func ParseList(q Query, r *resource.Resource) (List, error) {
	l := List{Page: records.Page{Limit: DefaultLimit}}
	var err error
	q(func(k, v []byte) {
		if err == nil {
			err = l.param(r, string(k), string(v))
		}
	})
	return l, err
}

// param reads one parameter of r's list.
func (l *List) param(r *resource.Resource, key, val string) error {
	switch key {
	case "limit":
		n, e := strconv.Atoi(val)
		if e != nil || n < 1 || n > MaxLimit {
			return apierr.Invalid("limit", "limit must be an integer from 1 to %d", MaxLimit)
		}
		l.Limit = n
		return nil
	case "offset":
		n, e := strconv.Atoi(val)
		if e != nil || n < 0 {
			return apierr.Invalid("offset", "offset must be an integer of 0 or more")
		}
		l.Offset = n
		return nil
	}
	switch {
	case r == nil:
	case r == resource.Events:
		if ok, err := l.Events.param(key, val); ok {
			return err
		}
	case key == "sort":
		return l.sort(r, val)
	case key == "q":
		if len(val) > MaxQLen {
			return apierr.Invalid("q", "q is at most %d characters", MaxQLen)
		}
		l.Q = val
		return nil
	default:
		if i := slices.IndexFunc(r.Filters, func(f resource.Filter) bool { return f.Param == key }); i >= 0 {
			f := r.Filters[i]
			fv, err := filterValue(f, key, val)
			l.Filters = append(l.Filters, records.FilterValue{Column: f.Column, Value: fv, Bound: f.Bound})
			return err
		}
	}
	return apierr.Invalid(key, "unknown query parameter %q", key)
}

// sort reads sort: a column of records.Sortable(r), ascending, or
// descending after a "-" (sort=-total_cents).
func (l *List) sort(r *resource.Resource, val string) error {
	col, desc := strings.CutPrefix(val, "-")
	if !slices.Contains(records.Sortable(r), col) {
		return apierr.Invalid("sort", "sort must be one of the columns %s, with a leading - for descending (sort=-created_at)",
			strings.Join(records.Sortable(r), ", "))
	}
	l.Sort = records.Sort{Column: col, Desc: desc}
	return nil
}

// filterValue reads the value of a named filter.
func filterValue(f resource.Filter, key, val string) (any, error) {
	switch f.Type {
	case resource.Boolean:
		b, e := strconv.ParseBool(val)
		if e != nil || (val != "true" && val != "false") {
			return b, apierr.Invalid(key, "%s must be true or false", key)
		}
		return b, nil
	case resource.Enum:
		// Several values, comma-separated, match any of them.
		vals := strings.Split(val, ",")
		for _, v := range vals {
			if !slices.Contains(f.Values, v) {
				return nil, apierr.Invalid(key, "%s must be one of %v, or several of them separated by commas", key, f.Values)
			}
		}
		if len(vals) > 1 {
			return vals, nil
		}
	case resource.Date:
		if _, e := time.Parse(time.DateOnly, val); e != nil {
			return nil, apierr.Invalid(key, "%s must be a date, YYYY-MM-DD", key)
		}
	default:
		if val == "" {
			return nil, apierr.Invalid(key, "%s must not be empty", key)
		}
	}
	return val, nil
}

// param reads one of resource.EventParams; ok is false for any other.
func (q *EventQuery) param(key, val string) (ok bool, err error) {
	if !slices.ContainsFunc(resource.EventParams, func(p resource.EventParam) bool { return p.Name == key }) {
		return false, nil
	}
	switch key {
	case "type":
		var types []string
		for _, t := range strings.Split(val, ",") {
			t = strings.TrimSpace(t)
			if len(t) > 100 || !typePattern.MatchString(t) {
				return true, apierr.Invalid("type", "type is one event type or a comma list of them; a type may end in .* "+
					"to match every type that starts so (invoice.paid,quote.*); no other wildcard or escape")
			}
			types = append(types, t)
		}
		q.Types = append(q.Types, types)
	case "created[gte]", "created[lt]":
		t, e := time.Parse(time.RFC3339Nano, val)
		if e != nil {
			return true, apierr.Invalid(key, "%s must be an RFC 3339 time, e.g. 2026-11-25T10:00:00Z", key)
		}
		op := ">="
		if key == "created[lt]" {
			op = "<"
		}
		q.Created = append(q.Created, TimeBound{Op: op, At: t.UTC()})
	case "starting_after":
		q.After = val
	case "ending_before":
		q.Before = val
	default:
		return true, fmt.Errorf("api: the events' parameter %s is declared but not read", key)
	}
	return true, nil
}
