// Package mail delivers the email outbox: the documents that send/issue
// actions put in it (api/writes), rendered as PDF at delivery and sent
// through SMTP by the worker that delivers webhooks, retried with backoff.
// Delivery is at least once: a message the SMTP server accepted just
// before the process died, not yet marked sent, goes again after the
// lease runs out, with the same Message-ID (receivers and mail clients
// dedupe by it).
package mail

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/ledgerbase/ledgerbase/api/webhooks"
)

// Settings are the outbox's configuration (smtp.* in serve's config).
type Settings struct {
	// URL is the SMTP server: smtp://user:pass@host:587 (STARTTLS
	// required), smtps://user:pass@host:465 (implicit TLS) or
	// smtp://host:port?tls=none (a local relay, no TLS). Empty: not
	// configured, and messages wait as not_configured.
	URL string
	// From is the sender's address; empty: the company profile's email.
	From string
	// Schedule is the delay before each retry; after the last one the
	// message has failed for good. Empty: webhooks.DefaultSchedule.
	Schedule []time.Duration
	// Timeout bounds one attempt's SMTP conversation.
	Timeout time.Duration
	Logger  *slog.Logger
}

func (s Settings) withDefaults() Settings {
	if len(s.Schedule) == 0 {
		s.Schedule = webhooks.DefaultSchedule
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// server is a parsed SMTP URL.
type server struct {
	host       string
	port       int
	user, pass string
	tls        string // "starttls" (required), "implicit" or "none"
}

// parseURL reads an SMTP URL; the error names what is wrong, never the password.
func parseURL(raw string) (server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return server{}, fmt.Errorf("smtp.url is not a URL (smtp://user:pass@host:587, smtps://user:pass@host:465 or smtp://host:25?tls=none)")
	}
	var s server
	q := u.Query()
	switch u.Scheme {
	case "smtp":
		s.tls, s.port = "starttls", 587
		switch q.Get("tls") {
		case "", "starttls":
		case "none":
			s.tls, s.port = "none", 25
		default:
			return server{}, fmt.Errorf("smtp.url: tls=%q: only tls=none (a relay without TLS) is known; smtp:// otherwise requires STARTTLS", q.Get("tls"))
		}
	case "smtps":
		s.tls, s.port = "implicit", 465
		if q.Has("tls") {
			return server{}, fmt.Errorf("smtp.url: smtps:// is implicit TLS; tls= does not apply")
		}
	default:
		return server{}, fmt.Errorf("smtp.url: the scheme must be smtp or smtps, not %q", u.Scheme)
	}
	for k := range q {
		if k != "tls" {
			return server{}, fmt.Errorf("smtp.url: unknown parameter %q (only tls=none)", k)
		}
	}
	s.host = u.Hostname()
	if s.host == "" {
		return server{}, fmt.Errorf("smtp.url has no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return server{}, fmt.Errorf("smtp.url: port %q is not a port", p)
		}
		s.port = n
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	return s, nil
}

// CheckURL reports whether raw is a usable SMTP URL ("" is: not configured).
func CheckURL(raw string) error {
	if raw == "" {
		return nil
	}
	_, err := parseURL(raw)
	return err
}

// CheckFrom reports whether from is a usable sender address ("" is).
func CheckFrom(from string) error {
	if from == "" {
		return nil
	}
	if err := gomail.NewMsg().From(from); err != nil {
		return fmt.Errorf("smtp.from: %q is not an address", from)
	}
	return nil
}

// options are go-mail's client options for s.
func (s server) options(timeout time.Duration) []gomail.Option {
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(timeout)}
	switch s.tls {
	case "implicit":
		opts = append(opts, gomail.WithSSL())
	case "starttls":
		// Mandatory: a server that does not offer STARTTLS is an error,
		// never a message sent in clear.
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if s.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.user), gomail.WithPassword(s.pass))
	}
	return opts
}

// addr is host:port, for logs.
func (s server) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }
