//go:build !ledgerbase_noevents

package writes

// recordEvents is true in every build but the one ledgerbase-bench compares
// with (go build -tags ledgerbase_noevents): no setting turns events off.
const recordEvents = true
