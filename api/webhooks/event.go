package webhooks

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Event is an event as GET /v1/events/{id} and a webhook's body show it.
// Sequence numbers the workspace's events in the order GET /v1/events
// lists them, which never shows an event before one it already showed
// (gaps allowed): deliveries may arrive in another order, so a receiver
// orders by it and dedupes by ID.
type Event struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"`
	Type      string    `json:"type"`
	Sequence  int64     `json:"sequence"`
	CreatedAt time.Time `json:"created_at"`
	Data      struct {
		Object             json.RawMessage `json:"object"`
		PreviousAttributes json.RawMessage `json:"previous_attributes,omitempty"`
	} `json:"data"`
	RequestID string `json:"request_id"`
	Actor     struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"actor"`
}

// EventColumns are the events columns ScanEvent reads, in its order.
const EventColumns = "id, seq, type, created_at, data, previous, request_id, actor_type, actor_id"

// ScanEvent reads a row of EventColumns; it returns the event and its seq.
func ScanEvent(rs interface{ Scan(...any) error }) (Event, int64, error) {
	var e Event
	var data string
	var prev sql.NullString
	err := rs.Scan(&e.ID, &e.Sequence, &e.Type, &e.CreatedAt, &data, &prev, &e.RequestID, &e.Actor.Type, &e.Actor.ID)
	e.Object = "event"
	e.CreatedAt = e.CreatedAt.UTC()
	e.Data.Object = json.RawMessage(data)
	if prev.Valid {
		e.Data.PreviousAttributes = json.RawMessage(prev.String)
	}
	return e, e.Sequence, err
}
