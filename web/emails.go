package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// emailsView is a document page's emails: each message the outbox holds
// for it, with "Send again".
type emailsView struct {
	Rows   []emailRow
	Notice string
}

// emailRow is one message as the page shows it.
type emailRow struct {
	ID, To, Cc, When, Status, Class, Detail, Error string
	Again                                          string // where Send again posts
	AgainLabel, AgainSays                          string
	Idem                                           string
}

// sendsEmail reports whether r has an action that emails its document.
func sendsEmail(r *resource.Resource) bool {
	for _, op := range r.Ops {
		if op.Emails {
			return true
		}
	}
	return false
}

// emailsOf is the emails section of record id of r (nil where r sends none).
func (u *UI) emailsOf(c *fiber.Ctx, r *resource.Resource, id string) (*emailsView, error) {
	if !sendsEmail(r) {
		return nil, nil
	}
	ms, err := u.core.Emails(c.UserContext(), u.principal(c), r, id)
	if err != nil {
		return nil, err
	}
	v := &emailsView{}
	if c.Query("done") == "email-again" {
		v.Notice = "The email goes out again shortly; its status shows here."
	}
	ws := workspaceOf(c)
	for _, m := range ms {
		row := emailRow{ID: m.ID, To: addresses(m.To), Cc: addresses(m.Cc), When: fmtTime(m.CreatedAt), Error: m.LastError,
			Status: strings.ReplaceAll(string(m.Status), "_", " "), Idem: newIdemKey(),
			Again: wsURL(ws, "records", r.Name, url.PathEscape(id), "emails", m.ID, "again")}
		switch m.Status {
		case emailmessage.StatusSent:
			row.Class, row.Detail = "badge ok", "sent "+fmtTimePtr(m.SentAt, "")
			row.AgainLabel, row.AgainSays = "Send again", "Send a new copy, with a new Message-ID."
			row.Error = ""
		case emailmessage.StatusFailed:
			row.Class = "badge bad"
			row.Detail = attemptsText(m.Attempts)
			if m.NextAttemptAt != nil {
				row.Detail += ", next " + fmtTime(*m.NextAttemptAt)
			} else {
				row.Detail += ", no more attempts"
			}
			row.AgainLabel, row.AgainSays = "Try now", "Attempt this message again now (the same Message-ID)."
		case emailmessage.StatusNotConfigured:
			row.Class, row.Detail = "badge warn", "waits until SMTP is configured"
			row.AgainLabel, row.AgainSays = "Try now", "Attempt this message again now (the same Message-ID)."
		default:
			row.Class, row.Detail = "badge", "due "+fmtTimePtr(m.NextAttemptAt, "now")
			if m.Attempts > 0 {
				row.Detail = attemptsText(m.Attempts) + ", " + row.Detail
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

// addresses is a stored JSON list of addresses as text.
func addresses(stored string) string {
	var out []string
	_ = json.Unmarshal([]byte(stored), &out)
	return strings.Join(out, ", ")
}

// sendEmailAgain is "Send again" of one message, through Core.Write as
// every admin write.
func (u *UI) sendEmailAgain(c *fiber.Ctx) error {
	r := browsableByName(c.Params("res"))
	if r == nil || !sendsEmail(r) {
		return u.notFound(c)
	}
	id := c.Params("id")
	w := api.WriteRequest{Principal: u.principal(c), Config: api.SendEmailAgain, ID: id, ChildID: c.Params("email"),
		Body: []byte("{}"), ContentType: api.JSON, Key: c.FormValue(idemName), Target: c.Path() + " " + string(c.Body()),
		RequestID: ids.QuickAt("req", time.Now())}
	if _, e := u.core.Write(c.UserContext(), w); e != nil {
		if e.Status == http.StatusNotFound {
			return u.fail(c, http.StatusNotFound, "Not found", "This "+r.Singular+" has no such email.")
		}
		return u.onceFailed(c, e)
	}
	return redirect(c, wsURL(workspaceOf(c), "records", r.Name, url.PathEscape(id))+"?done=email-again#emails")
}
