package mail

import (
	"encoding/json"
	"time"

	"github.com/ledgerbase/ledgerbase/ent"
)

// message is an outbox message as events show it.
type message struct {
	ID            string     `json:"id"`
	Object        string     `json:"object"`
	Resource      string     `json:"resource"`
	RecordID      string     `json:"record_id"`
	Number        string     `json:"number"`
	Lang          string     `json:"lang"`
	To            []string   `json:"to"`
	Cc            []string   `json:"cc"`
	MessageID     string     `json:"message_id"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastError     string     `json:"last_error"`
	SentAt        *time.Time `json:"sent_at"`
	CreatedAt     time.Time  `json:"created_at"`
}

// JSON is m as the data.object of its email.sent and email.failed events
// (the sender's message stays out: it is the client's business).
func JSON(m *ent.EmailMessage) []byte {
	out := message{ID: m.ID, Object: "email", Resource: m.Resource, RecordID: m.RecordID, Number: m.Number, Lang: m.Lang,
		To: []string{}, Cc: []string{}, MessageID: m.MessageID, Status: string(m.Status), Attempts: m.Attempts,
		NextAttemptAt: utc(m.NextAttemptAt), LastError: m.LastError, SentAt: utc(m.SentAt), CreatedAt: m.CreatedAt.UTC()}
	_ = json.Unmarshal([]byte(m.To), &out.To)
	_ = json.Unmarshal([]byte(m.Cc), &out.Cc)
	b, _ := json.Marshal(out)
	return b
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
