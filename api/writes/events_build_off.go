//go:build ledgerbase_noevents

package writes

// recordEvents false is the lab build that ledgerbase-bench's --against
// measures the cost of events with: writes skip what only their events need
// (the before-state, the other records' renders, the event rows and their
// deliveries). Never shipped: the tag exists only for that comparison.
const recordEvents = false
