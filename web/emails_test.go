package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/mail"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// A sent invoice's page lists its email: to whom, when, its status and
// why it has not gone; "Try now" (through Core.Write) makes it due again.
func TestInvoicePageListsItsEmails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := webtest.SignedIn(t, f.env)
	key := f.ws.Key
	cli := f.env.Do(t, "POST", "/v1/clients", key, map[string]any{"name": "Mailed", "email": "ap@mailed.test"}).WantStatus(t, 201).JSON(t)["id"].(string)
	inv := f.env.Do(t, "POST", "/v1/invoices", key, map[string]any{"client_id": cli,
		"lines": []any{map[string]any{"description": "Work", "qty_milli": 1000, "unit_price_cents": 10000}}}).WantStatus(t, 201).JSON(t)["id"].(string)
	page := "/admin/w/" + f.ws.ID + "/records/invoices/" + inv
	if p := c.Get(page); !strings.Contains(p.Body, "Not emailed yet.") {
		t.Fatalf("a draft's page does not say it was not emailed\n%s", p.Body)
	}
	f.env.Do(t, "POST", "/v1/invoices/"+inv+"/send", key, map[string]any{"cc": []string{"boss@mailed.test"}}).WantStatus(t, 200)

	// No SMTP: one round of an outbox without it marks the message.
	o, err := mail.NewOutbox(f.env.DB, f.env.Server.Records, mail.Settings{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, mail.Documents{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	p := c.Get(page)
	section := regexp.MustCompile(`(?s)<section id="emails".*?</section>`).FindString(p.Body)
	for _, want := range []string{"ap@mailed.test", "Cc boss@mailed.test", "not configured", "SMTP is not configured", ">Try now<"} {
		if !strings.Contains(section, want) {
			t.Fatalf("the emails section lacks %q\n%s", want, section)
		}
	}
	m, err := f.env.DB.Reader.EmailMessage.Query().Where(emailmessage.RecordID(inv)).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again := regexp.MustCompile(`action="([^"]*/emails/` + m.ID + `/again)">.*?name="_idem" value="([^"]+)"`).FindStringSubmatch(section)
	if again == nil {
		t.Fatalf("no Try now form with a key\n%s", section)
	}
	before := time.Now().UTC()
	r := c.PostWithToken(page, again[1], url.Values{"_idem": {again[2]}})
	if r.Status != 303 {
		t.Fatalf("try now: %d\n%s", r.Status, r.Body)
	}
	got := c.Follow(r)
	if !strings.Contains(got.Body, "The email goes out again shortly") {
		t.Fatalf("no notice after Try now\n%s", got.Body)
	}
	m2, err := f.env.DB.Reader.EmailMessage.Get(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m2.NextAttemptAt == nil || m2.NextAttemptAt.Before(before.Add(-time.Second)) || m2.MessageID != m.MessageID {
		t.Fatalf("after Try now: %+v (before %+v)", m2, m)
	}
	if n := f.env.DB.Reader.EmailMessage.Query().Where(emailmessage.RecordID(inv)).CountX(context.Background()); n != 1 {
		t.Fatalf("Try now made %d messages, want the one", n)
	}
	// Another workspace's record or message: not found, nothing written.
	if r := c.PostWithToken(page, page+"/emails/eml_nothere00000000000000000/again", nil); r.Status != 404 {
		t.Fatalf("send again of no message: %d", r.Status)
	}
}
