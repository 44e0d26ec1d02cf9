package main

import (
	"io"
	"sync"
	"time"

	"github.com/ledgerbase/ledgerbase/api/telemetry"
)

// logWriter keeps the access log's write calls off the request path: lines
// collect in one buffer while a goroutine writes the other; a writer waits
// only when both are full. Lines wait at most `every`; Close writes what
// is left, so a clean shutdown loses nothing.
type logWriter struct {
	out  io.Writer
	mu   sync.Mutex
	cond *sync.Cond // signalled when spare comes back
	buf  []byte     // lines collecting
	// spare is the other buffer; nil while the goroutine writes it.
	spare  []byte
	full   chan []byte // to the goroutine; holds at most the one other buffer
	closed bool        // after Close, lines go straight to out
	stop   chan struct{}
	done   chan struct{}
}

const logBufferSize = 64 << 10

func newLogWriter(out io.Writer, every time.Duration) *logWriter {
	l := &logWriter{
		out:   out,
		buf:   make([]byte, 0, logBufferSize),
		spare: make([]byte, 0, logBufferSize),
		full:  make(chan []byte, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	l.cond = sync.NewCond(&l.mu)
	go l.run(every)
	return l
}

// SerialWrites: the mutex keeps whole lines whole and in order, so the log
// handler needs no lock of its own.
func (*logWriter) SerialWrites() {}

var _ telemetry.SerialWriter = (*logWriter)(nil)

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.closed && len(l.buf) > 0 && len(l.buf)+len(p) > cap(l.buf) {
		if l.spare == nil {
			l.cond.Wait() // both buffers are full: the output sets the pace
			continue
		}
		l.full <- l.buf // never blocks: the channel is empty while spare is here
		l.buf, l.spare = l.spare, nil
	}
	if l.closed {
		return l.out.Write(p)
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// run writes the buffers handed over, and every `every` the lines
// collecting, until Close.
func (l *logWriter) run(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case b := <-l.full:
			l.write(b)
		case <-t.C:
			l.mu.Lock()
			var b []byte
			if l.spare != nil && len(l.buf) > 0 {
				b, l.buf, l.spare = l.buf, l.spare, nil
			}
			l.mu.Unlock()
			if b != nil {
				l.write(b)
			}
		case <-l.stop:
			l.mu.Lock()
			defer l.mu.Unlock()
			select {
			case b := <-l.full: // handed over before the lines collecting
				_, _ = l.out.Write(b)
			default:
			}
			_, _ = l.out.Write(l.buf)
			l.closed = true
			l.cond.Broadcast()
			return
		}
	}
}

// write sends b to the output and makes it the spare buffer again.
func (l *logWriter) write(b []byte) {
	_, _ = l.out.Write(b) // nowhere to report a failing log output
	l.mu.Lock()
	l.spare = b[:0]
	l.cond.Broadcast()
	l.mu.Unlock()
}

// Close writes what is left and stops the goroutine; later lines are
// written straight through.
func (l *logWriter) Close() error {
	close(l.stop)
	<-l.done
	return nil
}
