package main

import (
	"bufio"
	"io"
	"sync"
	"time"

	"github.com/ledgerbase/ledgerbase/api/telemetry"
)

// logWriter batches log output: the access log writes a line per request,
// and one write system call per line costs a measurable share of a cheap
// request (perf measured the 429 path at 0.58x of baseline with it, 0.71-0.83x
// without). Lines wait at most `every` before they reach the output; Close
// writes what is left, so a clean shutdown loses nothing.
type logWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogWriter(out io.Writer, every time.Duration) *logWriter {
	l := &logWriter{w: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushEvery(every)
	return l
}

// SerialWrites: the mutex keeps whole lines whole, so the log handler
// needs no lock of its own.
func (*logWriter) SerialWrites() {}

var _ telemetry.SerialWriter = (*logWriter)(nil)

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *logWriter) flush() {
	l.mu.Lock()
	_ = l.w.Flush()
	l.mu.Unlock()
}

func (l *logWriter) flushEvery(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.flush()
		case <-l.stop:
			l.flush()
			return
		}
	}
}

// Close stops the flusher after a last flush; later writes still buffer
// and are flushed when the buffer fills.
func (l *logWriter) Close() error {
	close(l.stop)
	<-l.done
	return nil
}
