package database_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Databases migrated at the same time in one process each end up with the
// whole schema. ent keeps its table descriptions in package variables and
// writes into them while migrating; unserialised, this crashed the process
// (fatal concurrent map writes) when parallel tests opened databases.
func TestDatabasesMigrateConcurrentlyInOneProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 8
	dbs := make([]*database.DB, n)
	for i := range dbs {
		db, err := database.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "m"+strconv.Itoa(i)+".db"), database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Migrate(ctx, nil)
		}()
	}
	wg.Wait()
	for i, db := range dbs {
		if errs[i] != nil {
			t.Fatalf("database %d: %v", i, errs[i])
		}
		// Every table is there: the schema answers a query on the last one.
		if _, err := db.Writer.Workspace.Query().Count(ctx); err != nil {
			t.Fatalf("database %d: %v", i, err)
		}
	}
}
