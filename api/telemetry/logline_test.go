package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"testing"
	"time"
)

// The fast access line must be byte for byte what slog's handler writes,
// and values slog escapes or quotes must still come out as slog writes them.
func TestAccessLineIsSlogs(t *testing.T) {
	t.Parallel()
	times := []time.Time{
		time.Date(2026, 11, 21, 10, 31, 28, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -5*3600-30*60)),
		time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.Local),
		time.Now(),
	}
	strs := []string{"", "req_01JX", "GET", "/v1/invoices/:id", "/v1/invoices/inv_1", "a b", `q"uote`, `back\slash`,
		"a=b", "tab\tnew\nline", "é", "<&>", "\x7f", "127.0.0.1", "::1", "key_01"}
	durations := []int64{0, 1, 12, 100, 120, 1500, 1234567, 999_999_999, 1e9, 1e9 + 1, 123456789123, -7, math.MaxInt64}
	for _, json := range []bool{true, false} {
		for i, now := range times {
			for j, s := range strs {
				for k, d := range durations {
					a := &accessLine{
						requestID: s, method: strs[(j+1)%len(strs)], route: strs[(j+2)%len(strs)],
						path: strs[(j+3)%len(strs)], status: 200 + 100*(k%4), durationUS: d,
						keyID: strs[(j+i)%len(strs)], ip: strs[(j+k)%len(strs)],
					}
					var fast, want bytes.Buffer
					h := NewLogHandler(&fast, json, slog.LevelInfo)
					if b, ok := h.appendAccess(nil, now, a); ok {
						fast.Write(b)
					} else {
						r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
						r.AddAttrs(a.attrs()...)
						_ = h.Handle(context.Background(), r)
					}
					r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
					r.AddAttrs(a.attrs()...)
					var ref slog.Handler = slog.NewTextHandler(&want, nil)
					if json {
						ref = slog.NewJSONHandler(&want, nil)
					}
					_ = ref.Handle(context.Background(), r)
					if fast.String() != want.String() {
						t.Fatalf("json=%v\nfast %q\nslog %q", json, fast.String(), want.String())
					}
				}
			}
		}
	}
	// The plain case does take the fast path.
	h := NewLogHandler(&bytes.Buffer{}, true, slog.LevelInfo)
	a := &accessLine{requestID: "req_1", method: "GET", route: "/v1/invoices/:id", path: "/v1/invoices/inv_1", status: 429,
		durationUS: 12, keyID: "", ip: "127.0.0.1"}
	if _, ok := h.appendAccess(nil, times[0], a); !ok {
		t.Error("a plain access line went the slow way")
	}
}

// Through a logger: the level is honoured and the line reaches the output once.
func TestAccessLineThroughLogger(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h := NewLogHandler(&out, true, slog.LevelWarn)
	a := &accessLine{requestID: "req_1", method: "GET", route: "/", path: "/", status: 200, ip: "127.0.0.1"}
	logAccess(context.Background(), slog.New(h), h, time.Now(), a)
	if out.Len() != 0 {
		t.Errorf("logged below the level: %s", out.String())
	}
	h = NewLogHandler(&out, false, slog.LevelInfo)
	logAccess(context.Background(), slog.New(h), h, time.Now(), a)
	if n := bytes.Count(out.Bytes(), []byte("msg=request")); n != 1 {
		t.Errorf("%d lines: %s", n, out.String())
	}
}

// The cached second formatting is time.Time's and slog's.
func TestTimeFormatsAreTheLibraries(t *testing.T) {
	t.Parallel()
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("a", 3600), time.FixedZone("b", -(9*3600 + 30*60))}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny)
	}
	base := time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC) // around New York's DST change
	nanos := []int{0, 1, 10, 100000, 120000000, 123000000, 999999999, 500000000, 1000, 999000000}
	for _, loc := range zones {
		for s := 0; s < 5; s++ {
			for _, ns := range nanos {
				tm := base.Add(time.Duration(s)*time.Second + time.Duration(ns)).In(loc)
				if got, want := string(appendRFC3339Nano([]byte("x"), tm)), string(tm.AppendFormat([]byte("x"), time.RFC3339Nano)); got != want {
					t.Fatalf("RFC3339Nano %s: %s", want, got)
				}
				if got, want := string(appendRFC3339Millis([]byte("x"), tm)), string(appendRFC3339MillisSlog([]byte("x"), tm)); got != want {
					t.Fatalf("millis %s: %s", want, got)
				}
			}
		}
	}
}

// appendRFC3339MillisSlog is slog's own code for its text time format.
func appendRFC3339MillisSlog(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}

func BenchmarkAccessLine(b *testing.B) {
	h := NewLogHandler(&bytes.Buffer{}, false, slog.LevelInfo)
	a := &accessLine{requestID: "req_01jd3k9x8s2c7v5bq4m6n0p1r2", method: "GET", route: "/v1/invoices/:id",
		path: "/v1/invoices/inv_01jd3k9x8s2c7v5bq4m6n0p1r2", status: 429, durationUS: 12,
		keyID: "key_01jd3k9x8s2c7v5bq4m6n0p1r2", ip: "127.0.0.1"}
	now := time.Now()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = h.appendAccess(buf[:0], now, a)
	}
}
