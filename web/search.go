package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// searchHits is how many records each resource shows on the search page.
const searchHits = 5

// searchHit is one record found.
type searchHit struct {
	Name, Href, ID string
	Detail         string // what else matched: a client's email, an invoice's client
}

// searchGroup is what one resource's search found.
type searchGroup struct {
	R      *resource.Resource
	Total  int
	Hits   []searchHit
	AllURL string // the resource's list, searched the same
}

type searchData struct {
	page
	Q       string
	Groups  []searchGroup
	Problem string
	// Searched counts the record types looked in.
	Searched int
}

// searchPage finds records of every resource the workspace can read by
// number, name or email: each resource's own q (its declared Search
// columns), through the same read and gate as its list.
func (u *UI) searchPage(c *fiber.Ctx) error {
	ws := workspaceOf(c)
	d := searchData{page: u.pageOf(c, "Search", "search"), Q: strings.TrimSpace(c.Query("q"))}
	if len(d.Q) > api.MaxQLen {
		d.Problem = "Search for at most " + itoa(api.MaxQLen) + " characters."
		return render(c, http.StatusBadRequest, searchView(d))
	}
	if d.Q == "" {
		return render(c, http.StatusOK, searchView(d))
	}
	d.Title = "Search: " + d.Q
	ctx := c.UserContext()
	for _, r := range browsable() {
		if len(r.Search) == 0 || access.GatePlan(access.WorkspaceOf(ws), r) != nil {
			continue
		}
		d.Searched++
		env, recs, err := u.list(ctx, ws, r, records.Page{Q: d.Q, Limit: searchHits})
		if err != nil {
			return u.internal(c, err)
		}
		if env.Meta.Total == 0 {
			continue
		}
		g := searchGroup{R: r, Total: env.Meta.Total, AllURL: wsURL(ws, "records", r.Name) + "?q=" + url.QueryEscape(d.Q)}
		for _, rec := range recs {
			id := textOf(rec.get("id"))
			h := searchHit{ID: id, Name: nameOf(r, rec), Href: wsURL(ws, "records", r.Name, url.PathEscape(id))}
			if h.Name == "" {
				h.Name = id
			}
			var more []string
			for _, col := range r.Search {
				if v := textOf(rec.get(col)); v != "" && col != labelColumn(r) && len(more) < 2 {
					more = append(more, v)
				}
			}
			h.Detail = strings.Join(more, " · ")
			g.Hits = append(g.Hits, h)
		}
		d.Groups = append(d.Groups, g)
	}
	return render(c, http.StatusOK, searchView(d))
}
