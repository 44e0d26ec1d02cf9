package resource

import (
	"maps"
	"slices"
	text "strings"
)

// Event types follow from the declarations: <object>.<verb> (invoice.sent),
// and <object>.<state> for a status moved by a sub-resource or the clock
// (invoice.paid, invoice.overdue).

// Object is the resource's name in event types and `object` fields.
func (r *Resource) Object() string { return snakeCase.Replace(r.Singular) }

var snakeCase = text.NewReplacer("-", "_", " ", "_")

// Verb is the event verb of an operation; created tells a create that made
// a record from one that matched an existing one (which updated it).
func (o Op) Verb(created bool) string {
	switch o.Kind {
	case Create, Upsert, Bulk:
		if created {
			return "created"
		}
		return "updated"
	case Update:
		return "updated"
	case Delete:
		return "deleted"
	case Action:
		return PastTense(o.Name)
	}
	return ""
}

// EventType is the type of the event an operation of r writes.
func (r *Resource) EventType(o Op, created bool) string {
	if _, listed := r.Op(List); r.Parent != nil && !listed {
		return r.Parent.Resource.Object() + "." + r.Object() + "." + o.Verb(created)
	}
	return r.Object() + "." + o.Verb(created)
}

// StateEvent is the type of the event telling that a record of r moved to
// state (invoice.paid).
func (r *Resource) StateEvent(state string) string { return r.Object() + "." + state }

// HasStatus reports whether r's records have a status (a declared status filter).
func (r *Resource) HasStatus() bool { return r.states() != nil }

// states are the values of r's status filter.
func (r *Resource) states() []string {
	for _, f := range r.Filters {
		if f.Param == "status" {
			return f.Values
		}
	}
	return nil
}

// PastTense is an action's verb in events and messages: send → sent.
func PastTense(verb string) string {
	switch verb {
	case "send":
		return "sent"
	case "open":
		return "opened"
	case "cancel":
		return "cancelled" // as the state is spelled
	case "issue", "archive", "decline", "invoice":
		return verb + "d"
	case "apply":
		return "applied"
	}
	if text.HasSuffix(verb, "e") {
		return verb + "d"
	}
	return verb + "ed"
}

// The events of the outbox (Op.Emails): a message went out, or an attempt
// failed (data.object.next_attempt_at says when the next one is, null
// when there is none). Whoever may read the document sees them.
const (
	EmailSent   = "email.sent"
	EmailFailed = "email.failed"
)

// EventTypes lists every event type the declarations can produce, sorted.
func EventTypes() []string {
	seen := map[string]bool{}
	for _, r := range All {
		for _, o := range r.Ops {
			switch o.Kind {
			case List, Get, Document:
				continue
			case Create, Upsert, Bulk:
				seen[r.EventType(o, true)] = true
				if o.Kind != Create || r.Parent == nil {
					seen[r.EventType(o, false)] = true
				}
			default:
				seen[r.EventType(o, false)] = true
			}
			if o.Emails {
				seen[EmailSent], seen[EmailFailed] = true, true
			}
			for _, m := range o.Makes {
				seen[m.Object()+".created"] = true
			}
			for _, t := range o.Touches {
				seen[t.Object()+".updated"] = true
				for _, st := range t.states() {
					seen[t.StateEvent(st)] = true
				}
			}
		}
		for _, st := range r.Clock {
			seen[r.StateEvent(st)] = true
		}
		if r.Parent != nil && r.Parent.Resource.HasStatus() {
			seen[r.Parent.Resource.Object()+".updated"] = true
			for _, v := range r.Parent.Resource.states() {
				seen[r.Parent.Resource.StateEvent(v)] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Events is the workspace's change log, served by hand (api.Core.Events),
// not by the records engine, so it is not among All.
var Events = &Resource{Name: "events", Singular: "event", Prefix: "evt", Plan: Starter, Toolset: "events",
	Doc: "Every committed change of the workspace (type resource.verb, e.g. invoice.paid; data.object is the record as GET showed it " +
		"right after the change, data.previous_attributes the fields an update changed), on every plan, limited to the resources " +
		"the key's role may read.",
	Ops: []Op{{Kind: List}, {Kind: Get}}}

// EventEndpoints are the endpoints of Events.
func EventEndpoints() []Endpoint {
	return []Endpoint{{"GET", "/v1/events", Events, Op{Kind: List}}, {"GET", "/v1/events/:id", Events, Op{Kind: Get}}}
}

// EventParam is a query parameter of GET /v1/events besides limit and offset.
type EventParam struct {
	Name string
	Time bool // an RFC 3339 time
	Doc  string
}

// EventParams are GET /v1/events's own query parameters.
var EventParams = []EventParam{
	{Name: "type", Doc: "One event type or a comma list; invoice.* matches every invoice event."},
	{Name: "created[gte]", Time: true, Doc: "Only events at or after this RFC 3339 time."},
	{Name: "created[lt]", Time: true, Doc: "Only events before this RFC 3339 time."},
	{Name: "starting_after", Doc: "An event id: the page of events older than it (newest first); not with offset."},
	{Name: "ending_before", Doc: "An event id: the page of events right after it (newer), newest first; not with offset."},
}
