// Package mailtest runs a real SMTP server on a loopback port for tests
// (github.com/emersion/go-smtp), keeping every message it accepts, and
// reads them back as MIME.
package mailtest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From   string
	Rcpt   []string
	Header mail.Header
	Raw    []byte
}

// Part is one part of a multipart message.
type Part struct {
	ContentType string
	Filename    string
	Body        []byte
}

// Server is an SMTP server without TLS on a fixed loopback address: Stop
// and Start take it down and up on the same address.
type Server struct {
	Addr string

	mu     sync.Mutex
	refuse *smtp.SMTPError
	msgs   []Message
	srv    *smtp.Server
	done   chan struct{}
	t      testing.TB
}

// New reserves a loopback address for a server, not started (Start).
func New(t testing.TB) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &Server{Addr: addr, t: t}
	t.Cleanup(s.Stop)
	return s
}

// Started is New and Start.
func Started(t testing.TB) *Server {
	s := New(t)
	s.Start()
	return s
}

// URL is the server's smtp:// URL without TLS.
func (s *Server) URL() string { return "smtp://" + s.Addr + "?tls=none" }

// Start serves on Addr.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the address may linger a moment after Stop
		if ln, err = net.Listen("tcp", s.Addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("mailtest: listen on %s: %v", s.Addr, err)
	}
	srv := smtp.NewServer(backend{s})
	srv.Domain = "mailtest.localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 20 << 20
	s.srv, s.done = srv, make(chan struct{})
	go func(done chan struct{}) { _ = srv.Serve(ln); close(done) }(s.done)
}

// Stop takes the server down.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		<-done
	}
}

// Refuse makes the server answer every message with e (a 554), or
// accept them again with nil.
func (s *Server) Refuse(e *smtp.SMTPError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = e
}

// Messages are the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// To are the accepted messages with rcpt among their recipients.
func (s *Server) To(rcpt string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		for _, r := range m.Rcpt {
			if strings.EqualFold(r, rcpt) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// Wait waits until check holds of the accepted messages, or fails the test.
func (s *Server) Wait(t testing.TB, d time.Duration, what string, check func([]Message) bool) []Message {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ms := s.Messages()
		if check(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailtest: %s: not within %s (%d messages)", what, d, len(ms))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Subject is the message's decoded subject.
func (m Message) Subject() string {
	s, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return m.Header.Get("Subject")
	}
	return s
}

// MessageID is the Message-ID header without its angle brackets.
func (m Message) MessageID() string {
	return strings.Trim(strings.TrimSpace(m.Header.Get("Message-Id")), "<>")
}

// Parts are the message's MIME parts, decoded (nested multiparts flattened).
func (m Message) Parts() ([]Part, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return nil, err
	}
	return parts(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body)
}

func parts(contentType, encoding, disposition string, body io.Reader) ([]Part, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(mt, "multipart/") {
		var out []Part
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			sub, err := parts(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	b, err := io.ReadAll(decoder(encoding, body))
	if err != nil {
		return nil, err
	}
	p := Part{ContentType: mt, Body: b, Filename: params["name"]}
	if _, dp, err := mime.ParseMediaType(disposition); err == nil && dp["filename"] != "" {
		p.Filename = dp["filename"]
	}
	if dec, err := new(mime.WordDecoder).DecodeHeader(p.Filename); err == nil {
		p.Filename = dec
	}
	return []Part{p}, nil
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	rcpt []string
}

func (x *session) Reset()        { x.from, x.rcpt = "", nil }
func (x *session) Logout() error { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}
func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.rcpt = append(x.rcpt, to)
	return nil
}
func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.refuse != nil {
		return x.s.refuse
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return &smtp.SMTPError{Code: 550, Message: "not a message: " + err.Error()}
	}
	x.s.msgs = append(x.s.msgs, Message{From: x.from, Rcpt: append([]string(nil), x.rcpt...), Header: msg.Header, Raw: raw})
	return nil
}

// decoder undoes a part's transfer encoding.
func decoder(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &stripNewlines{r: r})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// stripNewlines drops CR and LF, which base64 bodies are wrapped with.
type stripNewlines struct{ r io.Reader }

func (s *stripNewlines) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		k := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' {
				p[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}
