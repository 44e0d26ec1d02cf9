package main

import (
	"bytes"
	"strings"
	"sync"
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
