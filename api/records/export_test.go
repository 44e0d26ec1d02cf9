package records

// Strategies names every strategy of the list pipeline (strategies.go).
var Strategies = strategies

// Only leaves e's lists the named strategies alone: none, the plain path.
func Only(e *Engine, names ...string) {
	e.off = ^strategy(0)
	for _, n := range names {
		e.off &^= Strategies[n]
	}
}
