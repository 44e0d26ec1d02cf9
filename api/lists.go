package api

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

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

// pageParam reads limit or offset into its place; ok is false for any
// other parameter.
func pageParam(key, val string, limit, offset *int) (ok bool, err error) {
	switch key {
	case "limit":
		n, e := strconv.Atoi(val)
		if e != nil || n < 1 || n > MaxLimit {
			return true, apierr.Invalid("limit", "limit must be an integer from 1 to %d", MaxLimit)
		}
		*limit = n
	case "offset":
		n, e := strconv.Atoi(val)
		if e != nil || n < 0 {
			return true, apierr.Invalid("offset", "offset must be an integer of 0 or more")
		}
		*offset = n
	default:
		return false, nil
	}
	return true, nil
}

// parseLimitOffset reads the query of a list that takes nothing but limit
// and offset (a webhook endpoint's deliveries), refusing any other parameter.
func parseLimitOffset(c *fiber.Ctx) (limit, offset int, err error) {
	limit = DefaultLimit
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if err != nil {
			return
		}
		key := string(k)
		if ok, e := pageParam(key, string(v), &limit, &offset); ok {
			err = e
			return
		}
		err = apierr.Invalid(key, "unknown query parameter %q", key)
	})
	return limit, offset, err
}

// parsePage reads limit, offset, q and the resource's named filters; any
// other query parameter is refused so a typo never silently lists everything.
func parsePage(c *fiber.Ctx, r *resource.Resource) (records.Page, error) {
	pg := records.Page{Limit: DefaultLimit}
	var err error
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if err != nil {
			return
		}
		key, val := string(k), string(v)
		if ok, e := pageParam(key, val, &pg.Limit, &pg.Offset); ok {
			err = e
			return
		}
		switch key {
		case "q":
			if len(val) > MaxQLen {
				err = apierr.Invalid("q", "q is at most %d characters", MaxQLen)
			}
			pg.Q = val
		default:
			f, ok := filterOf(r, key)
			if !ok {
				err = apierr.Invalid(key, "unknown query parameter %q", key)
				return
			}
			var fv any = val
			switch f.Type {
			case resource.Boolean:
				b, e := strconv.ParseBool(val)
				if e != nil || (val != "true" && val != "false") {
					err = apierr.Invalid(key, "%s must be true or false", key)
				}
				fv = b
			case resource.Enum:
				// Several values, comma-separated, match any of them.
				vals := strings.Split(val, ",")
				for _, v := range vals {
					if !slices.Contains(f.Values, v) {
						err = apierr.Invalid(key, "%s must be one of %v, or several of them separated by commas", key, f.Values)
					}
				}
				if len(vals) > 1 {
					fv = vals
				}
			case resource.Date:
				if _, e := time.Parse(time.DateOnly, val); e != nil {
					err = apierr.Invalid(key, "%s must be a date, YYYY-MM-DD", key)
				}
			default:
				if val == "" {
					err = apierr.Invalid(key, "%s must not be empty", key)
				}
			}
			pg.Filters = append(pg.Filters, records.FilterValue{Column: f.Column, Value: fv, Bound: f.Bound})
		}
	})
	return pg, err
}

// ParsePage reads a list request's query exactly as /v1 does (the admin
// record browser uses it so its search, filters and pages equal the API's).
func ParsePage(c *fiber.Ctx, r *resource.Resource) (records.Page, error) { return parsePage(c, r) }

func filterOf(r *resource.Resource, param string) (resource.Filter, bool) {
	for _, f := range r.Filters {
		if f.Param == param {
			return f, true
		}
	}
	return resource.Filter{}, false
}
