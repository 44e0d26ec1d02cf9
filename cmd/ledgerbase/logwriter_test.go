package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLogLinesReachTheOutputSoonAndAllAtClose(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	w := newLogWriter(&out, 20*time.Millisecond)
	_, _ = w.Write([]byte("first\n"))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "first") {
		if time.Now().After(deadline) {
			t.Fatal("a buffered line never reached the output")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w2 := newLogWriter(&out, time.Hour)
	_, _ = w2.Write([]byte("last\n"))
	if err := w2.Close(); err != nil || !strings.Contains(out.String(), "last") {
		t.Fatalf("Close did not flush: %q %v", out.String(), err)
	}
}

// serialOutput fails the test if two Writes ever overlap.
type serialOutput struct {
	lockedBuffer
	busy   atomic.Bool
	writes atomic.Int64
	t      *testing.T
}

func (s *serialOutput) Write(p []byte) (int, error) {
	if !s.busy.CompareAndSwap(false, true) {
		s.t.Error("two writes reached the output at once")
	}
	defer s.busy.Store(false)
	s.writes.Add(1)
	return s.lockedBuffer.Write(p)
}

// Lines written from many goroutines at once all arrive whole, each
// goroutine's in its order, in far fewer writes than lines; the output
// is never written by two at once.
func TestLogLinesFromManyWritersArriveWholeAndInOrder(t *testing.T) {
	t.Parallel()
	out := &serialOutput{t: t}
	w := newLogWriter(out, 5*time.Millisecond)
	const writers, lines = 8, 5000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range lines {
				// ~100 bytes a line: 4 MB in all, past flushAt many times.
				fmt.Fprintf(w, "writer=%d line=%06d %s\n", g, n, strings.Repeat("x", 80))
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines arrived, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, n int
		var pad string
		if _, err := fmt.Sscanf(l, "writer=%d line=%d %s", &g, &n, &pad); err != nil || len(pad) != 80 || g < 0 || g >= writers {
			t.Fatalf("a line arrived broken: %q (%v)", l, err)
		}
		if n != next[g] {
			t.Fatalf("writer %d: line %d arrived where %d was due", g, n, next[g])
		}
		next[g]++
	}
	if ws := out.writes.Load(); ws > writers*lines/10 {
		t.Fatalf("%d writes for %d lines: not batched", ws, writers*lines)
	}
}

// gatedOutput blocks every Write until the gate opens.
type gatedOutput struct {
	lockedBuffer
	gate    chan struct{}
	writing chan struct{} // a Write has started
}

func (g *gatedOutput) Write(p []byte) (int, error) {
	select {
	case g.writing <- struct{}{}:
	default:
	}
	<-g.gate
	return g.lockedBuffer.Write(p)
}

// A request never waits for the log's output while a buffer is free: with
// the output stuck on a full buffer, another buffer's worth of lines is
// still taken at once. Nothing is lost or reordered once it moves again.
func TestLogLinesDoNotWaitForASlowOutput(t *testing.T) {
	t.Parallel()
	out := &gatedOutput{gate: make(chan struct{}), writing: make(chan struct{}, 1)}
	w := newLogWriter(out, time.Hour)
	line := strings.Repeat("x", 99) + "\n"
	n := 0
	writeLines := func(count int) {
		for range count {
			fmt.Fprintf(w, "%06d%s", n, line[6:])
			n++
		}
	}
	// The first buffer's worth and one line: the buffer is handed over.
	// Then nearly another buffer's worth, while the output is stuck.
	done := make(chan struct{})
	go func() {
		writeLines(logBufferSize/len(line) + 1)
		select { // the full buffer reaches the (stuck) output
		case <-out.writing:
		case <-time.After(5 * time.Second):
		}
		writeLines(logBufferSize/len(line) - 1)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		close(out.gate) // let the writer finish; the test has failed
		<-done
		t.Fatal("lines waited for the output while a buffer was free")
	}
	close(out.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != n {
		t.Fatalf("%d lines arrived, want %d", len(got), n)
	}
	for i, l := range got {
		if want := fmt.Sprintf("%06d", i); !strings.HasPrefix(l, want) {
			t.Fatalf("line %d is %q", i, l[:6])
		}
	}
}
