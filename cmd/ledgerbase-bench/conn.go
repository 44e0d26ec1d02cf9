package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// benchConn is one keep-alive HTTP/1.1 connection of the load generator.
// It shares the machine with the server it measures, so it does what wrk
// does and nothing more: writes a request from a reused buffer, reads the
// headers that frame the body and skips the body; no pool, no per-request
// timer. Anything it cannot frame drops the connection, dialled again next.
type benchConn struct {
	addr     string
	deadline time.Time // for every read and write of the round
	c        net.Conn
	r        *bufio.Reader
	w        []byte
}

func newBenchConn(addr string, deadline time.Time) *benchConn {
	return &benchConn{addr: addr, deadline: deadline}
}

var errBadResponse = errors.New("bench: malformed HTTP response")

// do sends r and reads its response; it answers the status code.
func (c *benchConn) do(r request) (int, error) {
	if c.c == nil {
		nc, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
		if err != nil {
			return 0, err
		}
		if err := nc.SetDeadline(c.deadline); err != nil {
			nc.Close()
			return 0, err
		}
		c.c = nc
		if c.r == nil {
			c.r = bufio.NewReaderSize(nc, 32<<10)
		} else {
			c.r.Reset(nc)
		}
	}
	c.w = appendRequest(c.w[:0], c.addr, r)
	if _, err := c.c.Write(c.w); err != nil {
		c.close()
		return 0, err
	}
	status, keep, err := readResponse(c.r, r.method == "HEAD")
	if err != nil || !keep {
		c.close()
	}
	return status, err
}

func (c *benchConn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

func appendRequest(b []byte, host string, r request) []byte {
	b = append(b, r.method...)
	b = append(b, ' ')
	b = append(b, r.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUser-Agent: ledgerbase-bench\r\n"...)
	if r.auth != "" {
		b = append(b, "Authorization: "...)
		b = append(b, r.auth...)
		b = append(b, "\r\n"...)
	}
	if r.cookie != "" {
		b = append(b, "Cookie: "...)
		b = append(b, r.cookie...)
		b = append(b, "\r\n"...)
	}
	if r.body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.body)), 10)
		b = append(b, "\r\n\r\n"...)
		return append(b, r.body...)
	}
	return append(b, "\r\n"...)
}

// readResponse reads one response and skips its body. keep reports whether
// the connection may carry the next request.
func readResponse(r *bufio.Reader, head bool) (status int, keep bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	keep = line[7] == '1' // HTTP/1.0 closes unless it says otherwise
	length, chunked := int64(-1), false
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, false, fmt.Errorf("%w: header %q", errBadResponse, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return status, false, fmt.Errorf("%w: Content-Length %q", errBadResponse, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			switch {
			case bytes.EqualFold(value, []byte("close")):
				keep = false
			case bytes.EqualFold(value, []byte("keep-alive")):
				keep = true
			}
		}
	}
	switch {
	case status/100 == 1: // interim; the response follows
		return readResponse(r, head)
	case head || status == 204 || status == 304:
		return status, keep, nil
	case chunked:
		return status, keep, skipChunked(r)
	case length >= 0:
		_, err := r.Discard(int(length))
		return status, keep, err
	default: // the body runs to the end of the connection
		_, err := io.Copy(io.Discard, r)
		return status, false, err
	}
}

func skipChunked(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errBadResponse, line)
		}
		if n == 0 {
			break
		}
		if _, err := r.Discard(int(n)); err != nil {
			return err
		}
		if crlf, err := r.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errBadResponse)
		}
	}
	for { // trailers, up to the blank line
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}
