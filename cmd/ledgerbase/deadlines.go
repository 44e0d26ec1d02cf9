package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// fasthttp sets three socket deadlines on every request of a keep-alive
// connection: the idle one before waiting for the next request, the read
// one once it starts, the write one before the response. Each call re-arms
// a runtime timer, and together they were ~0.4 µs of the ~14 µs a 429
// costs the server. Yet nearly every request arrives in the read that ends
// the idle wait, so only the idle and write deadlines are ever in force
// when the connection blocks, and each is the previous request's plus the
// time since.
//
// lazyDeadlines applies a deadline when a Read or Write is about to use
// it, and leaves the one in force alone when it is later than asked by no
// more than slack: a read or write fails no earlier than its deadline and
// at most slack after it. A deadline set while another goroutine is
// blocked in Read or Write applies at once and exactly, so deadlines still
// abort a pending call.
type lazyDeadlines struct {
	net.Listener
	slack time.Duration
}

// deadlineSlack is how late a deadline may fire: a thirty-second read
// timeout of the defaults becomes 30–31 s, and a connection's deadlines
// are re-armed at most about once a second. Short timeouts (tests) get a
// proportionally short slack. Without timeouts there is nothing to defer (0).
func deadlineSlack(timeouts ...time.Duration) time.Duration {
	slack := time.Duration(0)
	for _, t := range timeouts {
		if t > 0 && (slack == 0 || t/32 < slack) {
			slack = min(t/32, time.Second)
		}
	}
	return slack
}

func (l *lazyDeadlines) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil || l.slack <= 0 {
		return c, err
	}
	return &lazyConn{Conn: c, slack: int64(l.slack)}, nil
}

// lazyConn is a connection whose deadlines reach the socket lazily.
type lazyConn struct {
	net.Conn
	slack int64 // ns
	read  lazyDeadline
	write lazyDeadline
}

// lazyDeadline is one direction's deadline: the one asked for and the
// one in force on the socket, as Unix nanoseconds (0: none). These drop
// the monotonic reading: a step of the wall clock between asking and
// applying shifts that deadline by the step, and puts the next one asked
// out of slack, so it is re-armed at once.
type lazyDeadline struct {
	want   atomic.Int64
	set    atomic.Int64
	active atomic.Int32 // calls in progress
	mu     sync.Mutex   // serializes changes to the socket's deadline
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if n := t.UnixNano(); n > 0 {
		return n
	}
	return 1 // before 1970: long past, still a deadline
}

// ask records t and, when a call is blocked waiting, applies it now.
func (d *lazyDeadline) ask(t time.Time, apply func(time.Time) error) error {
	d.want.Store(unixNano(t))
	if d.active.Load() > 0 {
		d.mu.Lock()
		defer d.mu.Unlock()
		w := d.want.Load()
		d.set.Store(w)
		return apply(deadlineTime(w))
	}
	return nil
}

// begin marks a call in progress and brings the socket's deadline within
// slack of the one asked for.
func (d *lazyDeadline) begin(slack int64, apply func(time.Time) error) error {
	d.active.Add(1)
	w := d.want.Load()
	if fits(w, d.set.Load(), slack) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	w = d.want.Load()
	s := d.set.Load()
	if fits(w, s, slack) {
		return nil
	}
	s = w
	if w != 0 && time.Until(deadlineTime(w)) > 0 { // a deadline already past fails at once
		s = w + slack
	}
	d.set.Store(s)
	if err := apply(deadlineTime(s)); err != nil {
		d.active.Add(-1)
		return err
	}
	return nil
}

// fits: the deadline in force (set) is the one asked for (want) or later
// by at most slack.
func fits(want, set, slack int64) bool {
	if want == 0 || set == 0 {
		return want == set
	}
	return set >= want && set-want <= slack
}

func deadlineTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (c *lazyConn) Read(p []byte) (int, error) {
	if err := c.read.begin(c.slack, c.Conn.SetReadDeadline); err != nil {
		return 0, err
	}
	defer c.read.active.Add(-1)
	return c.Conn.Read(p)
}

func (c *lazyConn) Write(p []byte) (int, error) {
	if err := c.write.begin(c.slack, c.Conn.SetWriteDeadline); err != nil {
		return 0, err
	}
	defer c.write.active.Add(-1)
	return c.Conn.Write(p)
}

func (c *lazyConn) SetReadDeadline(t time.Time) error {
	return c.read.ask(t, c.Conn.SetReadDeadline)
}

func (c *lazyConn) SetWriteDeadline(t time.Time) error {
	return c.write.ask(t, c.Conn.SetWriteDeadline)
}

func (c *lazyConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}
