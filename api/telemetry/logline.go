package telemetry

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LogHandler is slog's JSON or text handler, plus a fast path writing the
// access line's bytes as slog would without building a Record. A line
// holding a value slog would escape or quote goes through slog.
type LogHandler struct {
	slog.Handler
	json bool
	out  io.Writer // serial: slog's writes and the fast path's take turns
}

// SerialWriter is an io.Writer whose Writes never interleave, so a handler
// writing to one adds no second lock per line.
type SerialWriter interface {
	io.Writer
	SerialWrites()
}

// NewLogHandler returns a JSON (json true) or text handler writing to out.
func NewLogHandler(out io.Writer, json bool, level slog.Leveler) *LogHandler {
	w, ok := out.(SerialWriter)
	if !ok {
		w = &lockedWriter{w: out}
	}
	opts := &slog.HandlerOptions{Level: level}
	h := &LogHandler{json: json, out: w}
	if json {
		h.Handler = slog.NewJSONHandler(w, opts)
	} else {
		h.Handler = slog.NewTextHandler(w, opts)
	}
	return h
}

// lockedWriter makes slog's writes and the fast path's take turns.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (*lockedWriter) SerialWrites() {}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// accessLine is the access log's record "request".
type accessLine struct {
	requestID, method, route, path string
	status                         int
	durationUS                     int64 // microseconds; the line says milliseconds
	keyID, ip                      string
}

func (a *accessLine) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("request_id", a.requestID),
		slog.String("method", a.method),
		slog.String("route", a.route),
		slog.String("path", a.path),
		slog.Int("status", a.status),
		slog.Float64("duration_ms", float64(a.durationUS)/1000),
		slog.String("key_id", a.keyID),
		slog.String("ip", a.ip),
	}
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// logAccess writes the line as log.LogAttrs(ctx, slog.LevelInfo, "request", a.attrs()...) would.
// now is the clock reading that ended the request (the line's time).
func logAccess(ctx context.Context, log *slog.Logger, fast *LogHandler, now time.Time, a *accessLine) {
	if fast == nil {
		log.LogAttrs(ctx, slog.LevelInfo, "request", a.attrs()...)
		return
	}
	if !fast.Enabled(ctx, slog.LevelInfo) {
		return
	}
	bp := linePool.Get().(*[]byte)
	b, ok := fast.appendAccess((*bp)[:0], now, a)
	if ok {
		_, _ = fast.out.Write(b)
	} else {
		r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
		r.AddAttrs(a.attrs()...)
		_ = fast.Handle(ctx, r)
	}
	if cap(b) <= 4096 {
		*bp = b
		linePool.Put(bp)
	}
}

// appendAccess formats the line as slog's handler would; ok is false when
// a value needs what only slog does (escaping, quoting, exponents).
func (h *LogHandler) appendAccess(b []byte, now time.Time, a *accessLine) ([]byte, bool) {
	us := a.durationUS
	if us < 0 || us >= 1e9 { // 'g' would write 1e+06 ms and more with an exponent
		return b, false
	}
	if y := now.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	now = now.Round(0)
	if h.json {
		b = append(b, `{"time":"`...)
		b = appendRFC3339Nano(b, now)
		b = append(b, `","level":"INFO","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, now)
		b = append(b, " level=INFO msg=request"...)
	}
	var ok bool
	for _, s := range [...]struct{ k, v string }{{"request_id", a.requestID}, {"method", a.method}, {"route", a.route}, {"path", a.path}} {
		if b, ok = h.appendString(b, s.k, s.v); !ok {
			return b, false
		}
	}
	b = h.appendKey(b, "status")
	b = strconv.AppendInt(b, int64(a.status), 10)
	b = h.appendKey(b, "duration_ms")
	b = appendMillis(b, us)
	if b, ok = h.appendString(b, "key_id", a.keyID); !ok {
		return b, false
	}
	if b, ok = h.appendString(b, "ip", a.ip); !ok {
		return b, false
	}
	if h.json {
		b = append(b, '}')
	}
	return append(b, '\n'), true
}

// appendMillis writes us/1000 as both slog handlers write that float below
// 1e6 (shortest form, no exponent), with integers only.
func appendMillis(b []byte, us int64) []byte {
	b = strconv.AppendInt(b, us/1000, 10)
	if f := us % 1000; f != 0 {
		d := [4]byte{'.', byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)}
		n := len(d)
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	return b
}

func (h *LogHandler) appendKey(b []byte, k string) []byte {
	if h.json {
		b = append(b, ',', '"')
		b = append(b, k...)
		return append(b, '"', ':')
	}
	b = append(b, ' ')
	b = append(b, k...)
	return append(b, '=')
}

// appendString appends a key and a value that neither handler escapes or
// quotes (printable ASCII but space, '"', '\\' and '='); an empty value
// is "" in both formats.
func (h *LogHandler) appendString(b []byte, k, v string) ([]byte, bool) {
	for i := 0; i < len(v); i++ {
		if !plainByte[v[i]] {
			return b, false
		}
	}
	b = h.appendKey(b, k)
	if h.json || v == "" {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), true
	}
	return append(b, v...), true
}

// plainByte: printable ASCII but space, '"', '\\' and '='.
var plainByte = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '='
	}
	return t
}()

// secondCache keeps the formatting of the last second seen (date, time of
// day and zone), shared by the lines logged within it.
type secondCache struct {
	unix int64
	loc  *time.Location
	head []byte // 2006-01-02T15:04:05
	zone []byte // Z07:00
}

var lastSecond atomic.Pointer[secondCache]

func second(t time.Time) *secondCache {
	if c := lastSecond.Load(); c != nil && c.unix == t.Unix() && c.loc == t.Location() {
		return c
	}
	s := t.Truncate(time.Second).AppendFormat(nil, time.RFC3339)
	c := &secondCache{unix: t.Unix(), loc: t.Location(), head: s[:19], zone: s[19:]}
	lastSecond.Store(c)
	return c
}

// appendRFC3339Nano is t.AppendFormat(b, time.RFC3339Nano) for years 0 to 9999.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	c := second(t)
	b = append(b, c.head...)
	if ns := t.Nanosecond(); ns != 0 {
		var d [10]byte
		d[0] = '.'
		for i := 9; i >= 1; i-- {
			d[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	return append(b, c.zone...)
}

// appendRFC3339Millis is slog's text time format: milliseconds, always three digits.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	c := second(t)
	b = append(b, c.head...)
	ms := t.Nanosecond() / 1e6
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, c.zone...)
}
