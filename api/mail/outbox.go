package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	gomail "github.com/wneessen/go-mail"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/document"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
)

// Documents is what delivery needs of the core: the PDF, and who sends.
type Documents struct {
	// PDF renders a document in lang: its file name and bytes
	// (api.Core.DocumentPDF).
	PDF func(ctx context.Context, ws, resource, id, lang string) (filename string, pdf []byte, err error)
	// Sender is the workspace's company name and email (api.Core.Company);
	// nil or empty values fall back to the workspace's name and
	// Settings.From.
	Sender func(ctx context.Context, ws string) (name, email string, err error)
}

// Outbox sends due messages; it is a webhooks.Queue, served by the worker
// that delivers webhooks. Any number of processes may share a database: a
// claim moves next_attempt_at past the attempt's deadline in its own short
// transaction, so two never hold the same message, and one that dies
// mid-send leaves a claim that runs out and is taken again.
type Outbox struct {
	db      *database.DB
	records *records.Engine
	s       Settings
	srv     *server // nil: SMTP is not configured
	docs    Documents
	batch   int
	// Metrics, when set, count the attempts.
	Metrics *Metrics
}

// NewOutbox builds the outbox on db; a bad SMTP URL is an error (serve
// refuses to start rather than hold every message).
func NewOutbox(db *database.DB, eng *records.Engine, s Settings, docs Documents) (*Outbox, error) {
	o := &Outbox{db: db, records: eng, s: s.withDefaults(), docs: docs, batch: 10}
	if s.URL != "" {
		srv, err := parseURL(s.URL)
		if err != nil {
			return nil, err
		}
		o.srv = &srv
	}
	if err := CheckFrom(s.From); err != nil {
		return nil, err
	}
	return o, nil
}

// Batch is how many messages one round claims (webhooks.Queue).
func (o *Outbox) Batch() int { return o.batch }

// lease is how long a claim holds a message: the SMTP conversation's
// deadline twice (the PDF is rendered first) and a margin.
func (o *Outbox) lease() time.Duration { return 2*o.s.Timeout + 5*time.Second }

// RunOnce claims the due messages (up to a batch), sends them side by side
// and records each attempt; it returns how many it claimed. Without SMTP
// configured it only marks the due ones not_configured: they wait, and go
// out once a process with SMTP configured runs.
func (o *Outbox) RunOnce(ctx context.Context) (int, error) {
	now := time.Now().UTC()
	// Idle servers look on the read pool first: claiming takes the writer.
	q := o.db.Reader.EmailMessage.Query().Where(emailmessage.NextAttemptAtLTE(now))
	if o.srv == nil {
		q = q.Where(emailmessage.StatusNEQ(emailmessage.StatusNotConfigured))
	}
	found, err := q.Exist(ctx)
	if err != nil || !found {
		return 0, err
	}
	if o.srv == nil {
		n, err := o.db.Writer.EmailMessage.Update().
			Where(emailmessage.NextAttemptAtLTE(now), emailmessage.StatusNEQ(emailmessage.StatusNotConfigured)).
			SetStatus(emailmessage.StatusNotConfigured).SetLastError("SMTP is not configured: set LEDGERBASE_SMTP_URL and restart serve").
			Save(ctx)
		if n > 0 {
			o.Metrics.outcome(OutcomeNotConfigured, n)
		}
		return 0, err
	}
	ms, err := o.claim(ctx, now)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ms))
	for i, m := range ms {
		wg.Go(func() {
			start := time.Now()
			res := o.send(ctx, m)
			if ctx.Err() != nil {
				return // cut off: unrecorded, the claim runs out
			}
			errs[i] = o.record(ctx, m, res, time.Since(start))
		})
	}
	wg.Wait()
	return len(ms), errors.Join(errs...)
}

// claim takes the due messages for one lease.
func (o *Outbox) claim(ctx context.Context, now time.Time) ([]*ent.EmailMessage, error) {
	tx, err := o.db.Writer.Tx(ctx)
	if err != nil {
		return nil, err
	}
	q := tx.EmailMessage.Query().Where(emailmessage.NextAttemptAtLTE(now)).
		Order(ent.Asc(emailmessage.FieldNextAttemptAt), ent.Asc(emailmessage.FieldID)).Limit(o.batch)
	if o.db.Dialect == dialect.Postgres {
		q = q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
	}
	ms, err := q.All(ctx)
	if err == nil && len(ms) > 0 {
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.ID
		}
		err = tx.EmailMessage.Update().Where(emailmessage.IDIn(ids...)).SetNextAttemptAt(now.Add(o.lease())).Exec(ctx)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return ms, tx.Commit()
}

// send makes one attempt: renders the PDF, composes, and hands the message
// to the SMTP server. It returns the error ("" when the server accepted).
func (o *Outbox) send(ctx context.Context, m *ent.EmailMessage) string {
	ctx, cancel := context.WithTimeout(ctx, o.lease()-5*time.Second)
	defer cancel()
	msg, err := o.compose(ctx, m)
	if err != nil {
		return clean(err.Error())
	}
	c, err := gomail.NewClient(o.srv.host, o.srv.options(o.s.Timeout)...)
	if err == nil {
		err = c.DialAndSendWithContext(ctx, msg)
	}
	if err != nil {
		return clean(fmt.Sprintf("%s: %s", o.srv.addr(), err))
	}
	return ""
}

// compose builds the email of m: from the sender, to its recipients, the
// subject and body from the catalogue in m's language after the sender's
// message, the PDF attached, with m's Message-ID.
func (o *Outbox) compose(ctx context.Context, m *ent.EmailMessage) (*gomail.Msg, error) {
	name, from, err := o.sender(ctx, m.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if from == "" {
		return nil, fmt.Errorf("no sender address: set LEDGERBASE_SMTP_FROM, or the company's email")
	}
	if o.docs.PDF == nil {
		return nil, fmt.Errorf("documents cannot be rendered by this process")
	}
	filename, pdf, err := o.docs.PDF(ctx, m.WorkspaceID, m.Resource, m.RecordID, m.Lang)
	if err != nil {
		return nil, fmt.Errorf("render the PDF: %w", err)
	}
	var to, cc []string
	if err := json.Unmarshal([]byte(m.To), &to); err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(m.Cc), &cc)
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.FromFormat(name, from); err != nil {
		return nil, fmt.Errorf("sender %q: %w", from, err)
	}
	if err := msg.To(to...); err != nil {
		return nil, err
	}
	if len(cc) > 0 {
		if err := msg.Cc(cc...); err != nil {
			return nil, err
		}
	}
	subject, body := Text(document.Lang(m.Lang), KindOf(m.Resource), m.Number, name, m.Message)
	msg.Subject(subject)
	msg.SetBodyString(gomail.TypeTextPlain, body)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDateWithValue(m.CreatedAt)
	if err := msg.AttachReader(filename, bytes.NewReader(pdf), gomail.WithFileContentType("application/pdf")); err != nil {
		return nil, err
	}
	return msg, nil
}

// sender is who sends a workspace's documents: the company's name and
// email, the settings' From first.
func (o *Outbox) sender(ctx context.Context, ws string) (name, email string, err error) {
	if o.docs.Sender != nil {
		if name, email, err = o.docs.Sender(ctx, ws); err != nil {
			return "", "", err
		}
	}
	if name == "" {
		w, err := o.db.Reader.Workspace.Get(ctx, ws)
		if err != nil {
			return "", "", err
		}
		name = w.Name
	}
	if o.s.From != "" {
		email = o.s.From
	}
	return name, email, nil
}

// KindOf is the document kind of a /v1 resource name.
func KindOf(resourceName string) document.Kind {
	switch resourceName {
	case "invoices":
		return document.Invoice
	case "quotes":
		return document.Quote
	case "credit-notes":
		return document.CreditNote
	case "sales-orders":
		return document.SalesOrder
	case "shipments":
		return document.Shipment
	}
	return document.Kind(resourceName)
}

// Text is the subject and body of the email of a document of kind k
// numbered number from seller, in l (bilingual: English, then Arabic),
// with the sender's message first.
func Text(l document.Lang, k document.Kind, number, seller, message string) (subject, body string) {
	var subjects, bodies []string
	for _, side := range l.Sides() {
		title := side.Text(k.Title())
		subjects = append(subjects, side.Text(document.EmailSubject, title, number, seller))
		bodies = append(bodies, side.Text(document.EmailBody, title, number, seller))
	}
	body = strings.Join(bodies, "\n\n---\n\n")
	if m := strings.TrimSpace(message); m != "" {
		body = m + "\n\n" + body
	}
	return strings.Join(subjects, " / "), body + "\n"
}

// record writes the attempt's outcome with its event, in one transaction:
// sent; or failed, retried after the schedule's next delay with jitter,
// or for good after the last one.
func (o *Outbox) record(ctx context.Context, m *ent.EmailMessage, errText string, took time.Duration) error {
	r := resource.ByName(m.Resource)
	if r == nil {
		return fmt.Errorf("mail: message %s is of an unknown resource %q", m.ID, m.Resource)
	}
	q := &writes.Request{Ctx: context.WithoutCancel(ctx), DB: o.db, Records: o.records, Resource: r, System: System,
		Principal: &access.Principal{Workspace: access.Workspace{ID: m.WorkspaceID}}}
	outcome := OutcomeSent
	err := q.Tell(func(tx *ent.Tx) ([]writes.Change, error) {
		now := time.Now().UTC()
		attempts := m.Attempts + 1
		up := tx.EmailMessage.UpdateOneID(m.ID).SetAttempts(attempts)
		typ := resource.EmailSent
		if errText == "" {
			outcome = OutcomeSent
			up.SetStatus(emailmessage.StatusSent).SetSentAt(now).ClearNextAttemptAt().SetLastError("")
		} else {
			typ = resource.EmailFailed
			up.SetStatus(emailmessage.StatusFailed).SetLastError(errText)
			if attempts > len(o.s.Schedule) {
				outcome = OutcomeFailed
				up.ClearNextAttemptAt()
			} else {
				outcome = OutcomeRetry
				delay := o.s.Schedule[attempts-1]
				delay += time.Duration(rand.Int64N(int64(delay)/5 + 1)) // jitter: retries of many messages spread out
				up.SetNextAttemptAt(now.Add(delay))
			}
		}
		saved, err := up.Save(q.Ctx)
		if err != nil {
			return nil, err
		}
		return []writes.Change{{Type: typ, Resource: r, ID: m.ID, Object: JSON(saved)}}, nil
	})
	if err != nil {
		return err
	}
	if errText != "" {
		o.s.Logger.Warn("mail: attempt failed", "message", m.ID, "workspace", m.WorkspaceID, "outcome", outcome, "err", errText)
	}
	o.Metrics.attempt(outcome, took)
	return nil
}

// System is the actor of the outbox's events.
const System = "email_delivery"

// clean makes text storable on both databases (UTF-8, no NUL), and short.
func clean(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) > 1000 {
		s = strings.ToValidUTF8(s[:1000], "") + "…"
	}
	return s
}
