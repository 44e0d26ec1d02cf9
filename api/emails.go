package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/mail"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/writes"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/emailmessage"
)

// Emails are the outbox's messages of record id of r (a document that
// emails), newest first, if p may read r.
func (c *Core) Emails(ctx context.Context, p *access.Principal, r *resource.Resource, id string) ([]*ent.EmailMessage, error) {
	if err := p.Gate(r, resource.Read); err != nil {
		return nil, err
	}
	return c.DB.Reader.EmailMessage.Query().
		Where(emailmessage.WorkspaceID(p.Workspace.ID), emailmessage.Resource(r.Name), emailmessage.RecordID(id)).
		Order(ent.Desc(emailmessage.FieldCreatedAt), ent.Desc(emailmessage.FieldID)).Limit(100).All(ctx)
}

// sendEmailAgain is "Send again" of message ChildID of record ID
// (writes.SendAgain says what again means); it answers the message that
// will go out.
func sendEmailAgain(ctx context.Context, tx *ent.Tx, w *WriteRequest, _ struct{}) (writes.Result, error) {
	m, err := tx.EmailMessage.Query().Where(emailmessage.ID(w.ChildID), emailmessage.WorkspaceID(w.Principal.Workspace.ID),
		emailmessage.RecordID(w.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return writes.Result{}, apierr.NotFound("email of this record")
	}
	if err != nil {
		return writes.Result{}, err
	}
	if m, err = writes.SendAgain(ctx, tx, m.WorkspaceID, m.ID); err != nil {
		return writes.Result{}, err
	}
	return answer(http.StatusOK, nil, func() any { return json.RawMessage(mail.JSON(m)) })
}
