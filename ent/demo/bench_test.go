package demo_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
			// LEDGERBASE_DEMO_DB keeps the file for a look afterwards.
			path := cmp.Or(os.Getenv("LEDGERBASE_DEMO_DB"), filepath.Join(b.TempDir(), "bench.db"))
			db, err = database.Open(ctx, "sqlite:"+path, database.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
				b.Fatal(err)
			}
		}
		ws, err := access.NewWorkspace(ctx, db.Writer, "Bench", "business", true, true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		o := demo.Options{Invoices: n, Seed: 1, Alone: true, RowTriggers: os.Getenv("LEDGERBASE_DEMO_ROW_TRIGGERS") != ""}
		for _, c := range []struct {
			env string
			n   *int
		}{{"LEDGERBASE_DEMO_CLIENTS", &o.Clients}, {"LEDGERBASE_DEMO_SALES_ORDERS", &o.SalesOrders}, {"LEDGERBASE_DEMO_PRODUCTS", &o.Products}} {
			if v := os.Getenv(c.env); v != "" {
				var err error
				if *c.n, err = strconv.Atoi(v); err != nil {
					b.Fatal(err)
				}
			}
		}
		// Each step's start, in wall and CPU time since the start: the
		// invoices take from "invoices" to "quotes"; "indexes" is the bulk
		// load's rebuild of the search indexes and totals.
		var steps []string
		o.Progress = func(step string) {
			steps = append(steps, fmt.Sprintf("%s %.1fs (CPU %.1fs)", step, time.Since(start).Seconds(), (cpuTime()-cpu0).Seconds()))
		}
		counts, err := demo.Run(ctx, db, ws.ID, o)
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
		b.Logf("steps: %s", strings.Join(steps, ", "))
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
