package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
)

// BenchmarkSeed loads LEDGERBASE_DEMO_RECORDS invoices (default 1,000,000)
// and everything in proportion into a fresh SQLite file (or the PostgreSQL
// of LEDGERBASE_TEST_POSTGRES_URL):
//
//	go test ./ent/demo -run '^$' -bench Seed -benchtime 1x
func BenchmarkSeed(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("LEDGERBASE_DEMO_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var db *database.DB
		if os.Getenv(apitest.PostgresEnv) != "" {
			db, _ = apitest.DB(b)
		} else {
			var err error
			db, err = database.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"), database.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
				b.Fatal(err)
			}
		}
		ws, err := access.NewWorkspace(ctx, db.Ent, "Bench", "business", true, true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		counts, err := demo.Run(ctx, db, ws.ID, demo.Options{Invoices: n, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		d, cpu := time.Since(start), cpuTime()-cpu0
		total := 0
		for _, c := range counts {
			total += c
		}
		b.ReportMetric(d.Seconds(), "s/run")
		b.ReportMetric(float64(total)/d.Seconds(), "rows/s")
		b.Logf("%d invoices, %d rows in all, in %s (CPU %s)", n, total, d.Round(time.Millisecond), cpu.Round(time.Millisecond))
	}
}

// cpuTime is the process's user and system time: on a busy machine it
// says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
