package writes

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/document"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// emailing is an action that emails its document (Op.Emails): the move,
// and one message in the outbox in the same transaction, so the message
// exists exactly when the move does. "email": false only moves; without
// "email" a document with no address only moves too, as the action did
// before it emailed (/v1 is not broken in place); "email": true without a
// recipient refuses the whole action, the move included.
func emailing(q *Request) (Result, error) {
	return q.move(func(tx *ent.Tx, _ string) error {
		send, asked := q.Body.Bool("email")
		if asked && !send {
			return nil
		}
		return q.enqueueEmail(tx, asked)
	})
}

// enqueueEmail puts the request's document in the outbox: to the body's
// recipients, else the client's email; in the client's language. Without
// an address it is a 409 when required, else nothing is sent.
func (q *Request) enqueueEmail(tx *ent.Tx, required bool) error {
	var number string
	var clientID *string
	if err := queryRow(q, tx, "SELECT number, client_id FROM "+q.Resource.Table+" WHERE id = ? AND workspace_id = ?",
		[]any{q.ID, q.Workspace().ID}, &number, &clientID); err != nil {
		return err
	}
	var email string
	var lang *string
	if clientID != nil {
		err := queryRow(q, tx, "SELECT email, preferred_language FROM clients WHERE id = ?", []any{*clientID}, &email, &lang)
		if err != nil && !isNoRows(err) {
			return err
		}
	}
	to, _ := q.Body.Strings("to")
	if len(to) == 0 {
		email = strings.TrimSpace(email)
		if !required && !resource.EmailAddress.Match(email) {
			return nil
		}
		if email == "" {
			return apierr.Conflict("no_recipient", "the %s's client has no email address: send \"to\" with the recipients, or \"email\": false to mark it %s without emailing it",
				q.Resource.Singular, resource.PastTense(q.Op.Name))
		}
		if !resource.EmailAddress.Match(email) {
			return apierr.Conflict("no_recipient", "the %s's client's email %q is not an address: correct it, send \"to\" with the recipients, or \"email\": false to mark it %s without emailing it",
				q.Resource.Singular, email, resource.PastTense(q.Op.Name))
		}
		to = []string{email}
	}
	cc, _ := q.Body.Strings("cc")
	message, _ := q.Body.String("message")
	// The document's language, as its PDF's default.
	var client, company string
	if lang != nil {
		client = *lang
	}
	err := queryRow(q, tx, "SELECT default_language FROM companies WHERE workspace_id = ?", []any{q.Workspace().ID}, &company)
	if err != nil && !isNoRows(err) {
		return err
	}
	l := string(document.DefaultLang(client, company))
	m := outgoing{ws: q.Workspace().ID, resource: q.Resource.Name, id: q.ID, number: number, lang: l, to: to, cc: cc, message: message}
	if _, err := m.create(q.Ctx, tx); err != nil {
		return err
	}
	q.mails++
	return nil
}

// outgoing is a message about to enter the outbox.
type outgoing struct {
	ws, resource, id, number, lang string
	to, cc                         []string
	message                        string
}

// create stores the message, due now, with its Message-ID, made once here
// so every attempt (and a resend after a crash) carries the same one.
func (m outgoing) create(ctx context.Context, tx *ent.Tx) (string, error) {
	now := time.Now().UTC()
	id := ids.At("eml", now)
	to, _ := json.Marshal(m.to)
	cc, _ := json.Marshal(orEmpty(m.cc))
	return id, tx.EmailMessage.Create().SetID(id).SetWorkspaceID(m.ws).SetResource(m.resource).SetRecordID(m.id).
		SetNumber(m.number).SetLang(m.lang).SetTo(string(to)).SetCc(string(cc)).SetMessage(m.message).
		SetMessageID(MessageID(id)).SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MessageID is the Message-ID (without its angle brackets) of outbox
// message id: unique by the id, on this host's name.
func MessageID(id string) string {
	host, err := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return -1
	}, host)
	if err != nil || strings.Trim(host, ".") == "" {
		host = "ledgerbase.localhost"
	}
	return id + "@" + strings.Trim(host, ".")
}

// SendAgain is the admin's "Send again" of outbox message id of workspace
// ws: a message that went out is sent again as a new message (a new
// Message-ID: the client gets a second email); one that failed or waits
// for SMTP to be configured is attempted again now, as the same message.
// It answers the message that will go out.
func SendAgain(ctx context.Context, tx *ent.Tx, ws, id string) (*ent.EmailMessage, error) {
	m, err := tx.EmailMessage.Query().Where(emailmessage.ID(id), emailmessage.WorkspaceID(ws)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("email")
	}
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	switch m.Status {
	case emailmessage.StatusPending:
		return nil, apierr.Conflict("email_pending", "this email has not been attempted yet: it goes out shortly")
	case emailmessage.StatusFailed, emailmessage.StatusNotConfigured:
		return tx.EmailMessage.UpdateOne(m).SetNextAttemptAt(now).Save(ctx)
	}
	var to, cc []string
	_ = json.Unmarshal([]byte(m.To), &to)
	_ = json.Unmarshal([]byte(m.Cc), &cc)
	again := outgoing{ws: ws, resource: m.Resource, id: m.RecordID, number: m.Number, lang: m.Lang, to: to, cc: cc, message: m.Message}
	newID, err := again.create(ctx, tx)
	if err != nil {
		return nil, err
	}
	return tx.EmailMessage.Get(ctx, newID)
}

// Tell runs do, a job of the system q.System (the outbox's worker), in
// one transaction with the events it returns: each tells of q.Resource's
// record or of something about it (an email), so whoever may read the
// resource sees it.
func (q *Request) Tell(do func(tx *ent.Tx) ([]Change, error)) error {
	var changes []Change
	_, err := q.inTx(func(tx *ent.Tx) error {
		var err error
		changes, err = do(tx)
		return err
	}, func() Answer {
		return Answer{Status: http.StatusOK, Body: []byte{}, Changes: changes, Unchanged: len(changes) == 0}
	})
	return err
}
