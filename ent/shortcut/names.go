package shortcut

import (
	"fmt"
	"slices"
)

// Names are every shortcut and cache of the appliance, each switchable at
// serve time (`shortcuts_off`, database.Options.ShortcutsOff). Off, the
// plain path answers in its place: the same answer, by a longer way.
// docs/performance.md measures each against its bench row.
var Names = []string{
	// api/records, the lists:
	"unchangedPages", // records served from the render cache while nothing was committed
	"searchKeys",     // q on a whole list counted by the search, which picks the page's keys
	"deepSkip",       // a deep offset skips whole days by their counts
	"countedTotals",  // totals from the counters triggers keep
	"unchangedLists", // whole list answers kept while their table is unchanged
	// the search:
	"probeCache", // small word lookups kept while the table is unchanged
	"valuesLog",  // new values of a Few column read from their log, not all again
	// the dashboard:
	"keptSums",       // money figures from the sums triggers keep
	"dashboardCache", // the dashboard's counts and sums kept while nothing was committed
	// writes and keys:
	"accessWatch", // key lookups cached while no key, role or workspace changed
	// writes:
	"backgroundCheckpoints", // the WAL copied back beside the writer, not in its commits
	// loads:
	"bulkLoad", // a load's insert triggers and indexes deferred to one pass (Bulk)
}

// Check refuses a name that is not one of Names.
func Check(names []string) error {
	for _, n := range names {
		if !slices.Contains(Names, n) {
			return fmt.Errorf("shortcut: no shortcut named %q (known: %v)", n, Names)
		}
	}
	return nil
}
