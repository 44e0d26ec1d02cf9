package mail_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/document"
	"github.com/ledgerbase/ledgerbase/api/mail"
	"github.com/ledgerbase/ledgerbase/api/mail/mailtest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
)

type obj = map[string]any

// newEnv is a server on a database of its own: an outbox's worker takes
// every due message of its database, so tests must not share one.
func newEnv(t *testing.T) *apitest.Env {
	t.Helper()
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "mail.db")
	if pg := os.Getenv(apitest.PostgresEnv); pg != "" {
		dsn = pgSchema(t, pg)
	}
	db, err := database.Open(ctx, dsn, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, records.Searches(resource.All)); err != nil {
		t.Fatal(err)
	}
	return apitest.Serve(t, apitest.NewServer(t, db))
}

// pgSchema is pg's URL on a schema of its own, dropped when the test ends.
func pgSchema(t *testing.T, pg string) string {
	admin, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("lbmail_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// docsOf are the core's documents, as serve wires them.
func docsOf(t *testing.T, c *api.Core) mail.Documents {
	return mail.Documents{Sender: func(ctx context.Context, ws string) (string, string, error) {
		p, err := c.Company(ctx, ws)
		if err != nil {
			return "", "", err
		}
		return p.LegalName, p.Email, nil
	}, PDF: func(ctx context.Context, ws, res, id, lang string) (string, []byte, error) {
		w, err := c.DB.Reader.Workspace.Get(ctx, ws)
		if err != nil {
			return "", nil, err
		}
		p := &access.Principal{Workspace: access.WorkspaceOf(w), Key: access.Key{Name: mail.System, Role: access.RoleAdmin}}
		return c.DocumentPDF(ctx, p, res, id, lang)
	}}
}

// fast retries every 100 ms.
func fast(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = 100 * time.Millisecond
	}
	return out
}

// runWorker runs the webhooks worker with the outbox of s on env's
// database until the test ends (or stop is called); s.From "" is a test
// sender, "company" none.
func runWorker(t *testing.T, env *apitest.Env, s mail.Settings) (stop func()) {
	t.Helper()
	switch s.From {
	case "":
		s.From = "billing@seller.test"
	case "company": // none: the company profile's email
		s.From = ""
	}
	if s.Schedule == nil {
		s.Schedule = fast(50)
	}
	if s.Timeout == 0 {
		s.Timeout = 3 * time.Second
	}
	s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o, err := mail.NewOutbox(env.DB, env.Server.Records, s, docsOf(t, env.Server.Core))
	if err != nil {
		t.Fatal(err)
	}
	w := webhooks.NewWorker(env.DB, webhooks.Settings{Poll: 50 * time.Millisecond, Logger: s.Logger})
	w.Queues = []webhooks.Queue{o}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// client makes a client of ws with email and lang ("" for none of each).
func client(t *testing.T, env *apitest.Env, key, name, email, lang string) string {
	t.Helper()
	b := obj{"name": name}
	if email != "" {
		b["email"] = email
	}
	if lang != "" {
		b["preferred_language"] = lang
	}
	return env.Do(t, "POST", "/v1/clients", key, b).WantStatus(t, 201).JSON(t)["id"].(string)
}

// draft makes a draft document of res for client cli.
func draft(t *testing.T, env *apitest.Env, key, res, cli string) (id, number string) {
	t.Helper()
	d := env.Do(t, "POST", "/v1/"+res, key, obj{"client_id": cli,
		"lines": []obj{{"description": "Consulting", "qty_milli": 1500, "unit_price_cents": 12000, "vat_rate_bp": 2000}}}).WantStatus(t, 201).JSON(t)
	return d["id"].(string), d["number"].(string)
}

// messagesOf are the outbox's messages of record id.
func messagesOf(t *testing.T, env *apitest.Env, id string) []*ent.EmailMessage {
	t.Helper()
	ms, err := env.DB.Reader.EmailMessage.Query().Where(emailmessage.RecordID(id)).Order(ent.Asc(emailmessage.FieldCreatedAt)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// waitRow waits until record id's only message satisfies ok.
func waitRow(t *testing.T, env *apitest.Env, id, what string, ok func(*ent.EmailMessage) bool) *ent.EmailMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ms := messagesOf(t, env, id)
		if len(ms) == 1 && ok(ms[0]) {
			return ms[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s: %+v", what, ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An invoice sent through /v1 reaches its client once, with its PDF
// attached and the subject and body in the client's language (French,
// Arabic); a quote sent with to, cc and a message reaches those, with the
// message; each carries the Message-ID the outbox stored, and each is told
// as email.sent.
func TestSendEmailsThePDFInTheClientsLanguage(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: srv.URL()})
	ws := env.Workspace(t, "business", false, false)

	for _, c := range []struct{ lang, email string }{{"fr", "claire@client-fr.test"}, {"ar", "amal@client-ar.test"}} {
		cli := client(t, env, ws.Key, "Client "+c.lang, c.email, c.lang)
		inv, number := draft(t, env, ws.Key, "invoices", cli)
		sent := env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200).JSON(t)
		if sent["status"] != "sent" {
			t.Fatalf("send answered %v", sent)
		}
		srv.Wait(t, 20*time.Second, "the "+c.lang+" invoice emailed", func([]mailtest.Message) bool { return len(srv.To(c.email)) > 0 })
		time.Sleep(300 * time.Millisecond) // a second copy would come by now
		ms := srv.To(c.email)
		if len(ms) != 1 {
			t.Fatalf("%s: %d messages to %s, want 1", c.lang, len(ms), c.email)
		}
		m := ms[0]
		l := document.Lang(c.lang)
		title := l.Text(document.TitleInvoice)
		if s := m.Subject(); !strings.Contains(s, title) || !strings.Contains(s, number) {
			t.Errorf("%s subject %q lacks %q and %s", c.lang, s, title, number)
		}
		parts, err := m.Parts()
		if err != nil {
			t.Fatal(err)
		}
		var text string
		var pdfs []mailtest.Part
		for _, p := range parts {
			switch p.ContentType {
			case "text/plain":
				text += string(p.Body)
			case "application/pdf":
				pdfs = append(pdfs, p)
			}
		}
		wantBody := strings.SplitN(l.Text(document.EmailBody, title, number, "X"), "\n", 2)[0] // the greeting
		if !strings.Contains(text, wantBody) || !strings.Contains(text, number) {
			t.Errorf("%s body lacks %q and %s:\n%s", c.lang, wantBody, number, text)
		}
		if len(pdfs) != 1 || !strings.Contains(pdfs[0].Filename, number) || !bytes.HasPrefix(pdfs[0].Body, []byte("%PDF-")) {
			t.Fatalf("%s: want one PDF named after %s, got %d parts: %+v", c.lang, number, len(pdfs), partNames(parts))
		}
		// The attachment is the invoice: pdftotext reads its number.
		file := filepath.Join(t.TempDir(), "attached.pdf")
		if err := os.WriteFile(file, pdfs[0].Body, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("pdftotext", file, "-").Output()
		if err != nil || !strings.Contains(string(out), number) {
			t.Fatalf("%s: pdftotext of the attachment (%v) lacks %s:\n%s", c.lang, err, number, out)
		}
		row := waitRow(t, env, inv, "marked sent", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusSent })
		if m.MessageID() != row.MessageID || row.Lang != c.lang || row.SentAt == nil || row.NextAttemptAt != nil || row.Attempts != 1 {
			t.Errorf("%s: message %q, row %+v", c.lang, m.MessageID(), row)
		}
		if m.From != "billing@seller.test" {
			t.Errorf("envelope from %q", m.From)
		}
	}

	// to, cc and a message instead of the client's address.
	cli := client(t, env, ws.Key, "Quoted", "", "fr")
	quo, number := draft(t, env, ws.Key, "quotes", cli)
	env.Do(t, "POST", "/v1/quotes/"+quo+"/send", ws.Key, obj{"to": []string{"buyer@quoted.test"}, "cc": []string{"boss@quoted.test", "acct@quoted.test"},
		"message": "Voici le devis dont nous avons parlé."}).WantStatus(t, 200)
	srv.Wait(t, 20*time.Second, "the quote emailed", func([]mailtest.Message) bool { return len(srv.To("buyer@quoted.test")) > 0 })
	m := srv.To("buyer@quoted.test")[0]
	if len(m.Rcpt) != 3 || !strings.Contains(m.Header.Get("Cc"), "boss@quoted.test") {
		t.Errorf("recipients %v, Cc %q", m.Rcpt, m.Header.Get("Cc"))
	}
	parts, _ := m.Parts()
	if !strings.Contains(string(parts[0].Body), "Voici le devis dont nous avons parlé.") || !strings.Contains(m.Subject(), number) {
		t.Errorf("quote email: subject %q, body %q", m.Subject(), parts[0].Body)
	}

	// Each is told as email.sent, seen by whoever may read the document.
	var evs struct {
		Data []struct {
			Type  string
			Actor struct{ Type, ID string }
			Data  struct{ Object obj }
		}
	}
	// The worker commits a message's status and event after the SMTP server
	// took it: the last one may still be on its way.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		env.Get(t, "/v1/events?type=email.sent", ws.Key).WantStatus(t, 200).Decode(t, &evs)
		if len(evs.Data) >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if len(evs.Data) != 3 {
		t.Fatalf("%d email.sent events, want 3", len(evs.Data))
	}
	for _, e := range evs.Data {
		if e.Actor.Type != "system" || e.Actor.ID != mail.System || e.Data.Object["status"] != "sent" || e.Data.Object["message_id"] == "" {
			t.Errorf("event %+v", e)
		}
	}
}

func partNames(ps []mailtest.Part) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ContentType+" "+p.Filename)
	}
	return out
}

// {"email": false} moves the state and puts nothing in the outbox; a
// document whose client has no address, with "email": true and no "to",
// is a 409 that writes nothing, not even the move; without "email" it
// only moves, as send and issue did before they emailed; bad recipients
// and a long message are 400s naming the field.
func TestSendRefusalsAndEmailFalse(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: srv.URL()})
	ws := env.Workspace(t, "business", false, false)

	cli := client(t, env, ws.Key, "Silent", "silent@client.test", "en")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	if st := env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, obj{"email": false}).WantStatus(t, 200).JSON(t)["status"]; st != "sent" {
		t.Fatalf("status %v", st)
	}
	if ms := messagesOf(t, env, inv); len(ms) != 0 {
		t.Fatalf("email false put %d messages in the outbox", len(ms))
	}

	none := client(t, env, ws.Key, "No address", "", "")
	for _, res := range []string{"invoices", "quotes", "credit-notes"} {
		id, _ := draft(t, env, ws.Key, res, none)
		action := map[string]string{"credit-notes": "issue"}[res]
		if action == "" {
			action = "send"
		}
		before := env.Get(t, "/v1/events?type="+resource.ByName(res).Object()+".*", ws.Key).JSON(t)["meta"].(obj)["total"]
		e := env.Do(t, "POST", "/v1/"+res+"/"+id+"/"+action, ws.Key, obj{"email": true}).WantError(t, 409, "no_recipient")
		if !strings.Contains(e["message"].(string), "no email address") {
			t.Errorf("409 message %q", e["message"])
		}
		if st := env.Get(t, "/v1/"+res+"/"+id, ws.Key).JSON(t)["status"]; st != "draft" {
			t.Errorf("%s: refused send left it %v", res, st)
		}
		if after := env.Get(t, "/v1/events?type="+resource.ByName(res).Object()+".*", ws.Key).JSON(t)["meta"].(obj)["total"]; after != before {
			t.Errorf("%s: refused send wrote events (%v, then %v)", res, before, after)
		}
		if ms := messagesOf(t, env, id); len(ms) != 0 {
			t.Errorf("%s: refused send left %d messages", res, len(ms))
		}
		// Without "email", or with no body at all, it moves and emails no one.
		for i, b := range []any{nil, obj{}} {
			other, _ := draft(t, env, ws.Key, res, none)
			if i == 0 {
				other = id
			}
			if st := env.Do(t, "POST", "/v1/"+res+"/"+other+"/"+action, ws.Key, b).WantStatus(t, 200).JSON(t)["status"]; st == "draft" {
				t.Errorf("%s %v: still a draft", res, b)
			}
			if ms := messagesOf(t, env, other); len(ms) != 0 {
				t.Errorf("%s %v: %d messages to no address", res, b, len(ms))
			}
		}
	}

	id, _ := draft(t, env, ws.Key, "invoices", none)
	path := "/v1/invoices/" + id + "/send"
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf("r%d@client.test", i)
	}
	for _, c := range []struct {
		body  obj
		param string
	}{
		{obj{"to": []string{"not an address"}}, "to[0]"},
		{obj{"to": []string{"ok@client.test", "Ada <ada@client.test>"}}, "to[1]"},
		{obj{"to": many}, "to"},
		{obj{"to": []string{"ok@client.test"}, "cc": []string{"@client.test"}}, "cc[0]"},
		{obj{"to": []string{"ok@client.test"}, "cc": many}, "cc"},
		{obj{"to": []string{"ok@client.test"}, "message": strings.Repeat("é", 5001)}, "message"},
		{obj{"email": "no"}, "email"},
	} {
		if e := env.Do(t, "POST", path, ws.Key, c.body).WantError(t, 400, "invalid_request"); e["param"] != c.param {
			t.Errorf("%v: param %v, want %s", c.body, e["param"], c.param)
		}
	}
	if ms := messagesOf(t, env, id); len(ms) != 0 {
		t.Fatalf("refused bodies left %d messages", len(ms))
	}
	// 5000 characters of a two-byte letter are within the bound.
	env.Do(t, "POST", path, ws.Key, obj{"to": []string{"ok@client.test"}, "message": strings.Repeat("é", 5000)}).WantStatus(t, 200)
	srv.Wait(t, 20*time.Second, "the override emailed", func([]mailtest.Message) bool { return len(srv.To("ok@client.test")) == 1 })
}

// With the SMTP server down the message fails and is retried; once the
// server is up it arrives, once.
func TestServerDownThenUpDeliversOnce(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.New(t) // down
	runWorker(t, env, mail.Settings{URL: srv.URL()})
	ws := env.Workspace(t, "growth", false, false)
	cli := client(t, env, ws.Key, "Patient", "patient@client.test", "")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	row := waitRow(t, env, inv, "a failed attempt", func(r *ent.EmailMessage) bool { return r.Attempts >= 2 })
	if row.Status != emailmessage.StatusFailed || row.NextAttemptAt == nil || row.LastError == "" {
		t.Fatalf("after failed attempts: %+v", row)
	}
	srv.Start()
	srv.Wait(t, 20*time.Second, "the message after the server came up", func([]mailtest.Message) bool { return len(srv.To("patient@client.test")) > 0 })
	waitRow(t, env, inv, "marked sent", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusSent })
	time.Sleep(500 * time.Millisecond) // five retry periods: a second copy would be here
	if ms := srv.To("patient@client.test"); len(ms) != 1 || ms[0].MessageID() != row.MessageID {
		t.Fatalf("%d messages, want 1 with Message-ID %s", len(ms), row.MessageID)
	}
}

// A server that refuses the message (554) leaves it failed, retried,
// told as email.failed; the send itself answered 200.
func TestRefusingServerLeavesTheMessageFailedWithRetry(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	srv.Refuse(&smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "relay refused for testing"})
	runWorker(t, env, mail.Settings{URL: srv.URL(), Schedule: []time.Duration{time.Hour}})
	ws := env.Workspace(t, "growth", false, false)
	cli := client(t, env, ws.Key, "Refused", "refused@client.test", "")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	row := waitRow(t, env, inv, "a refused attempt", func(r *ent.EmailMessage) bool { return r.Attempts == 1 })
	if row.Status != emailmessage.StatusFailed || row.NextAttemptAt == nil || time.Until(*row.NextAttemptAt) < 50*time.Minute ||
		!strings.Contains(row.LastError, "554") {
		t.Fatalf("after a refusal: %+v", row)
	}
	var evs struct {
		Data []struct{ Data struct{ Object obj } }
	}
	env.Get(t, "/v1/events?type=email.failed", ws.Key).WantStatus(t, 200).Decode(t, &evs)
	if len(evs.Data) != 1 || evs.Data[0].Data.Object["next_attempt_at"] == nil || !strings.Contains(evs.Data[0].Data.Object["last_error"].(string), "554") {
		t.Fatalf("email.failed events: %+v", evs.Data)
	}
}

// An smtp:// URL requires STARTTLS: against a server that does not offer
// it nothing is sent, and last_error says why.
func TestSTARTTLSRequiredIsNeverSentInClear(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: "smtp://" + srv.Addr, Schedule: []time.Duration{time.Hour}})
	ws := env.Workspace(t, "growth", false, false)
	cli := client(t, env, ws.Key, "Careful", "careful@client.test", "")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	row := waitRow(t, env, inv, "a refused attempt", func(r *ent.EmailMessage) bool { return r.Attempts == 1 })
	if row.Status != emailmessage.StatusFailed || !strings.Contains(row.LastError, "STARTTLS") {
		t.Fatalf("after the attempt: %+v", row)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages sent without TLS", n)
	}
}

// Without SMTP the message waits as not_configured; a worker with SMTP
// configured (serve restarted) sends it.
func TestNotConfiguredWaitsThenGoesOut(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	stop := runWorker(t, env, mail.Settings{})
	ws := env.Workspace(t, "growth", false, false)
	cli := client(t, env, ws.Key, "Later", "later@client.test", "")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	row := waitRow(t, env, inv, "marked not configured", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusNotConfigured })
	if row.Attempts != 0 || !strings.Contains(row.LastError, "LEDGERBASE_SMTP_URL") {
		t.Fatalf("not configured: %+v", row)
	}
	stop()
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: srv.URL()})
	srv.Wait(t, 20*time.Second, "the message once SMTP is configured", func([]mailtest.Message) bool { return len(srv.To("later@client.test")) == 1 })
	waitRow(t, env, inv, "marked sent", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusSent })
}

// "Send again" (the admin's, through Core.Write): a sent message goes
// again as a new one, with a new Message-ID; a failed one is attempted
// again now, as the same message.
func TestSendAgain(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: srv.URL(), Schedule: []time.Duration{time.Hour}})
	ws := env.Workspace(t, "growth", false, false)
	again := func(inv, msg string) map[string]any {
		t.Helper()
		res, e := env.Server.Core.Write(context.Background(), api.WriteRequest{Principal: access.System(ws.ID), Config: api.SendEmailAgain,
			ID: inv, ChildID: msg, Body: []byte("{}"), ContentType: api.JSON})
		if e != nil {
			t.Fatalf("send again: %v", e)
		}
		var out map[string]any
		if err := json.Unmarshal(res.Body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	cli := client(t, env, ws.Key, "Twice", "twice@client.test", "fr")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, obj{"message": "Merci."}).WantStatus(t, 200)
	first := waitRow(t, env, inv, "sent", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusSent })
	second := again(inv, first.ID)
	if second["id"] == first.ID || second["message_id"] == first.MessageID || second["status"] != "pending" {
		t.Fatalf("a sent message again: %v (first %s %s)", second, first.ID, first.MessageID)
	}
	srv.Wait(t, 20*time.Second, "the second copy", func([]mailtest.Message) bool { return len(srv.To("twice@client.test")) == 2 })
	got := srv.To("twice@client.test")
	if got[0].MessageID() != first.MessageID || got[1].MessageID() != second["message_id"] {
		t.Fatalf("Message-IDs %q, %q; want %q then %q", got[0].MessageID(), got[1].MessageID(), first.MessageID, second["message_id"])
	}
	if parts, _ := got[1].Parts(); len(parts) == 0 || !strings.Contains(string(parts[0].Body), "Merci.") {
		t.Errorf("the copy lost the message: %+v", parts)
	}

	srv.Refuse(&smtp.SMTPError{Code: 554, Message: "not now"})
	cli2 := client(t, env, ws.Key, "Retried", "retried@client.test", "")
	inv2, _ := draft(t, env, ws.Key, "invoices", cli2)
	env.Do(t, "POST", "/v1/invoices/"+inv2+"/send", ws.Key, nil).WantStatus(t, 200)
	failed := waitRow(t, env, inv2, "refused", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusFailed })
	srv.Refuse(nil)
	if same := again(inv2, failed.ID); same["id"] != failed.ID || same["message_id"] != failed.MessageID {
		t.Fatalf("a failed message again: %v, want the same %s", same, failed.ID)
	}
	srv.Wait(t, 20*time.Second, "the failed message, now", func([]mailtest.Message) bool { return len(srv.To("retried@client.test")) == 1 })
	if m := srv.To("retried@client.test")[0]; m.MessageID() != failed.MessageID {
		t.Fatalf("Message-ID %q, want %q", m.MessageID(), failed.MessageID)
	}
	waitRow(t, env, inv2, "sent", func(r *ent.EmailMessage) bool { return r.Status == emailmessage.StatusSent && r.Attempts == 2 })

	// Another record's message is not this one's.
	if _, e := env.Server.Core.Write(context.Background(), api.WriteRequest{Principal: access.System(ws.ID), Config: api.SendEmailAgain,
		ID: inv, ChildID: failed.ID, Body: []byte("{}"), ContentType: api.JSON}); e == nil || e.Status != 404 {
		t.Fatalf("send again of another record's message: %v", e)
	}
}

// A server that accepts the connection and never answers: the attempt
// times out (smtp.timeout), the message is failed and retried, the send
// answered 200 at once.
func TestSilentServerTimesOut(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, silent
		}
	}()
	env := newEnv(t)
	runWorker(t, env, mail.Settings{URL: "smtp://" + ln.Addr().String() + "?tls=none", Timeout: time.Second, Schedule: []time.Duration{time.Hour}})
	ws := env.Workspace(t, "growth", false, false)
	cli := client(t, env, ws.Key, "Waiting", "waiting@client.test", "")
	inv, _ := draft(t, env, ws.Key, "invoices", cli)
	start := time.Now()
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("send took %s: it must not wait for SMTP", d)
	}
	row := waitRow(t, env, inv, "a timed-out attempt", func(r *ent.EmailMessage) bool { return r.Attempts == 1 })
	if row.Status != emailmessage.StatusFailed || row.NextAttemptAt == nil || row.LastError == "" {
		t.Fatalf("after the timeout: %+v", row)
	}
	t.Logf("last error: %s", row.LastError)
}

// A bilingual client's email says everything in English, then Arabic.
func TestBilingualText(t *testing.T) {
	subject, body := mail.Text("bilingual", document.Invoice, "INV-000007", "Acme SARL", "See you soon.")
	en, ar := document.Lang("en"), document.Lang("ar")
	for _, want := range []string{en.Text(document.EmailSubject, en.Text(document.TitleInvoice), "INV-000007", "Acme SARL"),
		ar.Text(document.EmailSubject, ar.Text(document.TitleInvoice), "INV-000007", "Acme SARL")} {
		if !strings.Contains(subject, want) {
			t.Errorf("subject %q lacks %q", subject, want)
		}
	}
	if !strings.HasPrefix(body, "See you soon.\n\n") || !strings.Contains(body, ar.Text(document.EmailBody, ar.Text(document.TitleInvoice), "INV-000007", "Acme SARL")) {
		t.Errorf("body %q", body)
	}
}

// The company profile sends: its legal name in the subject and From, its
// email as the sender when smtp.from is empty, its default language for a
// client without one.
func TestTheCompanySends(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	srv := mailtest.Started(t)
	runWorker(t, env, mail.Settings{URL: srv.URL(), From: "company"})
	ws := env.Workspace(t, "growth", false, false)
	env.Do(t, "PATCH", "/v1/company", ws.Key, obj{"legal_name": "Atelier Dupont SARL", "email": "factures@dupont.test", "default_language": "fr"}).WantStatus(t, 200)
	cli := client(t, env, ws.Key, "Sans langue", "client@sans-langue.test", "")
	inv, number := draft(t, env, ws.Key, "invoices", cli)
	env.Do(t, "POST", "/v1/invoices/"+inv+"/send", ws.Key, nil).WantStatus(t, 200)
	srv.Wait(t, 20*time.Second, "the company's email", func([]mailtest.Message) bool { return len(srv.To("client@sans-langue.test")) == 1 })
	m := srv.To("client@sans-langue.test")[0]
	fr := document.Lang("fr")
	if want := fr.Text(document.EmailSubject, fr.Text(document.TitleInvoice), number, "Atelier Dupont SARL"); m.Subject() != want {
		t.Errorf("subject %q, want %q", m.Subject(), want)
	}
	if m.From != "factures@dupont.test" || !strings.Contains(m.Header.Get("From"), "factures@dupont.test") {
		t.Errorf("from %q, header %q", m.From, m.Header.Get("From"))
	}
	if row := messagesOf(t, env, inv)[0]; row.Lang != "fr" {
		t.Errorf("lang %q, want the company's fr", row.Lang)
	}
}
