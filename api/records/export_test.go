package records

import "github.com/ledgerbase/ledgerbase/api/resource"

// Strategies names every strategy of the list pipeline (strategies.go).
var Strategies = strategies

// Only leaves e's lists the named strategies alone: none, the plain path.
func Only(e *Engine, names ...string) {
	e.off = ^strategy(0)
	for _, n := range names {
		e.off &^= Strategies[n]
	}
}

// HotSQL are the statements a cached read of r runs on a miss, by name,
// each with the arguments after the workspace's id and, for "get", an id:
// what TestHotQueriesKeepTheirPlans explains.
func HotSQL(e *Engine, r *resource.Resource) map[string]string {
	p := e.plans[r]
	lq := &listQuery{where: p.where, order: newestFirst}
	return map[string]string{
		"version": p.versionSQL,
		"get":     p.getSQL,
		"page":    e.db.Rebind(pageSQL(p, p.keys, lq, 25)),
	}
}
