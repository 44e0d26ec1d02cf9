package main

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// request is one HTTP call a scenario makes.
type request struct {
	method string
	path   string
	auth   string // Authorization header value; empty sends none
	cookie string // Cookie header value; empty sends none
	body   []byte
}

// round is what one timed run of a scenario measured.
type round struct {
	requests int
	errors   int
	elapsed  time.Duration
	lat      []uint32 // microseconds, sorted
	peakRSS  int64    // bytes; the server's highest VmRSS seen during the round
}

func (r round) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// pct is the q-quantile latency in milliseconds.
func (r round) pct(q float64) float64 {
	if len(r.lat) == 0 {
		return 0
	}
	return float64(r.lat[int(q*float64(len(r.lat)-1))]) / 1000
}

// load drives servers over keep-alive connections from this process:
// conns workers, each with its own connection (to the servers in turn, as
// a round-robin balancer spreads them) and its own seeded random source,
// so a round's request sequence depends only on the seed.
type load struct {
	addrs []string
	seed  uint64
}

// run sends requests made by gen until d has passed. ok tells an expected
// status from an error. pid, when set, is the server whose RSS is sampled.
func (l load) run(ctx context.Context, conns int, d time.Duration, gen func(*rand.Rand) request, ok func(int) bool, pid int) round {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	// A request still in flight when the round ends may take this long.
	deadline := time.Now().Add(d + 30*time.Second)
	var peak int64
	sampled := make(chan struct{})
	go func() { // the server's memory, sampled while it is under load
		defer close(sampled)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _ := procStatus(pid, "VmRSS"); rss > peak {
				peak = rss
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	type tally struct {
		n, errs int
		lat     []uint32
	}
	tallies := make([]tally, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(l.seed, uint64(w)+1))
			t := &tallies[w]
			t.lat = make([]uint32, 0, 4096)
			c := newBenchConn(l.addrs[w%len(l.addrs)], deadline)
			defer c.close()
			for ctx.Err() == nil {
				r := gen(rng)
				t0 := time.Now()
				code, err := c.do(r)
				us := time.Since(t0).Microseconds()
				if ctx.Err() != nil && err != nil {
					break // cut off by the end of the round
				}
				t.n++
				t.lat = append(t.lat, uint32(min(us, 1<<32-1)))
				if err != nil || !ok(code) {
					t.errs++
				}
			}
		})
	}
	wg.Wait()
	res := round{elapsed: time.Since(start)}
	for _, t := range tallies {
		res.requests += t.n
		res.errors += t.errs
		res.lat = append(res.lat, t.lat...)
	}
	slices.Sort(res.lat)
	cancel()
	<-sampled
	res.peakRSS = peak
	return res
}

// procStatus reads a memory line of /proc/PID/status (VmRSS, VmHWM) in bytes;
// 0 where there is no /proc.
func procStatus(pid int, field string) (int64, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, nil
}

// median of xs (not modified).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
