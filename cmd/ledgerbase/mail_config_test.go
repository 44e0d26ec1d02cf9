package main

import (
	"strings"
	"testing"
	"time"
)

// LEDGERBASE_SMTP_URL and LEDGERBASE_SMTP_FROM configure the outbox; an
// SMTP URL or sender serve cannot use stops it at start, naming the setting
// and never the password.
func TestSMTPSettings(t *testing.T) {
	t.Parallel()
	cfg, err := parseServe(t, []string{"LEDGERBASE_SMTP_URL=smtps://mailer:s3cret@mail.example.com:465", "LEDGERBASE_SMTP_FROM=billing@example.com",
		"LEDGERBASE_SMTP_RETRY_SCHEDULE=1s,2s"})
	if err != nil || cfg.SMTP.URL != "smtps://mailer:s3cret@mail.example.com:465" || cfg.SMTP.From != "billing@example.com" || cfg.SMTP.Timeout != 30*time.Second {
		t.Fatalf("%+v, %v", cfg.SMTP, err)
	}
	if s := cfg.mail(nil); len(s.Schedule) != 2 || s.Schedule[1] != 2*time.Second {
		t.Fatalf("schedule %v", s.Schedule)
	}
	for _, c := range []struct{ env, says string }{
		{"LEDGERBASE_SMTP_URL=http://mail.example.com", "scheme"},
		{"LEDGERBASE_SMTP_URL=smtp://mailer:s3cret@mail.example.com:587?tls=maybe", "tls="},
		{"LEDGERBASE_SMTP_URL=smtp://mailer:s3cret@:587", "no host"},
		{"LEDGERBASE_SMTP_URL=smtp://mail.example.com:99999", "port"},
		{"LEDGERBASE_SMTP_FROM=not an address", "smtp.from"},
		{"LEDGERBASE_SMTP_RETRY_SCHEDULE=soon", "smtp.retry_schedule"},
	} {
		_, err := parseServe(t, []string{c.env})
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want an error saying %q without the password", c.env, err, c.says)
		}
	}
}
