package demo

import (
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
)

// With one row per statement every row reaches the database the moment it
// is made, so a child made before its parent fails its foreign key here
// rather than only at a scale where batches happen to split them.
func TestRowsAreMadeAfterTheRowsTheyReferTo(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(t.Context(), db.Writer, "Order", "business", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t.Context(), db, ws.ID, Options{Invoices: 60, Now: time.Now()}, 1); err != nil {
		t.Fatal(err)
	}
}
