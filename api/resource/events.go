package resource

import (
	"sort"
	text "strings"
)

// Event types follow from the declarations: <object>.<verb>, where the
// object is the resource's singular in snake case (invoice_payment) and the
// verb is created, updated or deleted, or the past tense of an action
// (invoice.sent, quote.accepted). A sub-resource that answers its parent
// (tracking events) names both: shipment.tracking_event.created. A write
// that moves its parent's status (a payment paying an invoice) also tells
// of the parent in its new state: invoice.paid.

// Object is the resource's name in event types and `object` fields.
func (r *Resource) Object() string { return text.NewReplacer("-", "_", " ", "_").Replace(r.Singular) }

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

// EventTypes lists every event type the declarations can produce, sorted.
func EventTypes() []string {
	seen := map[string]bool{}
	for _, r := range All {
		for _, o := range r.Ops {
			switch o.Kind {
			case List, Get:
				continue
			case Create, Upsert, Bulk:
				seen[r.EventType(o, true)] = true
				if o.Kind != Create || r.Parent == nil {
					seen[r.EventType(o, false)] = true
				}
			default:
				seen[r.EventType(o, false)] = true
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
		if r.Parent != nil {
			for _, v := range r.Parent.Resource.states() {
				seen[r.Parent.Resource.StateEvent(v)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
