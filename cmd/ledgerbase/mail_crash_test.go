package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/mail/mailtest"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Emails outlive a crash: invoices are sent while the SMTP server is down,
// so their messages are pending and being retried when serve is killed
// with SIGKILL; after a restart (the SMTP server up) each reaches its
// client, at least once, always with the Message-ID stored at send time.
func TestEmailsDeliveredAfterKill9(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	_, key := hookWorkspace(t, dbURL)
	smtpd := mailtest.New(t) // down
	flags := []string{"--smtp-url", smtpd.URL(), "--smtp-from", "billing@seller.test", "--smtp-timeout", "2s",
		"--smtp-retry-schedule", retries(100, 200*time.Millisecond), "--webhooks-poll", "100ms"}
	s := startServer(t, dbURL, flags...)
	env := client(t, s.url)
	const n = 6
	want := map[string]string{} // recipient → invoice
	for i := range n {
		to := fmt.Sprintf("client%d@crash.test", i)
		cli := env.Do(t, "POST", "/v1/clients", key, record{"name": fmt.Sprintf("Client %d", i), "email": to, "preferred_language": []string{"en", "fr", "ar"}[i%3]}).
			WantStatus(t, 201).JSON(t)["id"].(string)
		inv := env.Do(t, "POST", "/v1/invoices", key, record{"client_id": cli,
			"lines": []record{{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)["id"].(string)
		env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, nil).WantStatus(t, 200)
		want[to] = inv
	}
	db, err := database.Open(context.Background(), dbURL, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, 20*time.Second, "every message attempted and failing", func() bool {
		ms, err := db.Reader.EmailMessage.Query().All(context.Background())
		if err != nil || len(ms) != n {
			return false
		}
		for _, m := range ms {
			if m.Attempts == 0 || m.NextAttemptAt == nil {
				return false
			}
		}
		return true
	})
	s.kill9(t)

	stored := map[string]string{} // recipient → Message-ID
	ms, err := db.Reader.EmailMessage.Query().All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.SentAt != nil {
			t.Fatalf("message %s marked sent while the SMTP server was down", m.ID)
		}
		stored[m.To[2:len(m.To)-2]] = m.MessageID // to is ["addr"]
	}
	smtpd.Start()
	s = startServer(t, dbURL, flags...)
	smtpd.Wait(t, 60*time.Second, "every message after the restart", func([]mailtest.Message) bool {
		for to := range want {
			if len(smtpd.To(to)) == 0 {
				return false
			}
		}
		return true
	})
	for to := range want {
		for _, m := range smtpd.To(to) {
			if m.MessageID() != stored[to] {
				t.Errorf("to %s: Message-ID %q, stored %q", to, m.MessageID(), stored[to])
			}
		}
	}
	// This process's counters: each message it sent, none lost.
	waitFor(t, 10*time.Second, "the sent counter", func() bool {
		res, err := http.Get(s.url + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		m := regexp.MustCompile(`(?m)^ledgerbase_emails_total\{outcome="sent"\} (\d+)$`).FindSubmatch(b)
		return m != nil && string(m[1]) != "0" && strings.Contains(string(b), "ledgerbase_emails_pending 0")
	})
	t.Logf("%d messages, %d received", n, len(smtpd.Messages()))
}
