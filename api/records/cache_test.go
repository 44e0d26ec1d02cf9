package records

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gofiber/fiber/v2/utils"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// fiber's route params point into a buffer the next request reuses: the
// cache must key records by strings of its own, or its keys change under it.
func TestCacheKeysDoNotAliasTheRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	ws, err := access.NewWorkspace(ctx, db.Writer, "T", "business", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: 10, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	e, err := New(db, resource.All)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := db.ReadPool.QueryRow("SELECT id FROM invoices LIMIT 1").Scan(&id); err != nil {
		t.Fatal(err)
	}
	buf := []byte(id)
	param := utils.UnsafeString(buf) // fiber's own conversion: how c.Params hands it over
	w := Workspace{ID: ws.ID}
	first, err := e.Get(ctx, resource.Invoices, w, param, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x' // the next request's bytes
	}
	if _, ok := e.cache.GetIfPresent(id); !ok {
		t.Fatalf("record %s is not cached under its own id", id)
	}
	again, err := e.Get(ctx, resource.Invoices, w, id, "")
	if err != nil || string(again) != string(first) {
		t.Fatalf("second read: %v %s", err, again)
	}
}
