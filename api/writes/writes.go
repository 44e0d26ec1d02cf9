// Package writes implements the business rules of every write. Each file
// registers its operations in init; the core's one way in (api.Core.Write)
// finds them by resource and operation kind, after gating, permission and
// body validation.
package writes

import (
	"context"
	"fmt"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/body"
	"github.com/ledgerbase/ledgerbase/api/idempotency"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Request is one validated write.
type Request struct {
	Ctx       context.Context
	DB        *database.DB
	Records   *records.Engine
	Principal *access.Principal
	Resource  *resource.Resource
	Op        resource.Op
	// Body is the validated body. For bulk operations and shipment events
	// it is nil and Raw holds the decoded object for the operation to split.
	Body Values
	Raw  map[string]any
	// ID is the path's :id (the record, or the parent of a sub-resource);
	// ChildID the sub-resource's own id (address_id).
	ID, ChildID string
	RequestID   string
	// System names the job of a write no request made (the overdue sweep):
	// its events' actor is {type: system, id: System}.
	System string
	// Idem, when the POST carries an Idempotency-Key, keeps the answer in
	// the write's transaction.
	Idem *idempotency.Pending
	// touched are the other records the running transaction changed (see touch).
	touched []touched
	// deliveries counts the webhook deliveries the transaction stored.
	deliveries int
}

// Values is a validated body.
type Values = body.Values

// Result is what the client gets: a status and the JSON body.
type Result struct {
	Status int
	Body   []byte
	// Secret is shown to this caller once and kept nowhere: not in Body,
	// so neither in the write's event, its Idempotency-Key answer nor any
	// read (a new gift card's code).
	Secret string
}

// Func implements one write operation.
type Func func(*Request) (Result, error)

type key struct {
	r    *resource.Resource
	k    resource.OpKind
	name string // an Action's name
}

var registry = map[key]Func{}

// register binds an operation; called from init functions.
func register(r *resource.Resource, k resource.OpKind, f Func) {
	if _, ok := r.Op(k); !ok {
		panic(fmt.Sprintf("writes: %s has no %s operation declared", r.Name, k))
	}
	registry[key{r, k, ""}] = f
}

// registerAction binds an action whose rules go beyond its declared
// states (a check, a side effect); plain state moves need none.
func registerAction(r *resource.Resource, name string, f Func) {
	if _, ok := r.Action(name); !ok {
		panic(fmt.Sprintf("writes: %s has no %s action declared", r.Name, name))
	}
	registry[key{r, resource.Action, name}] = f
}

// Lookup finds the implementation of an operation: a registered one, or
// for an action or a delete the generic move its declaration describes.
func Lookup(r *resource.Resource, op resource.Op) (Func, bool) {
	name := ""
	if op.Kind == resource.Action {
		name = op.Name
	}
	if f, ok := registry[key{r, op.Kind, name}]; ok {
		return f, true
	}
	switch {
	case op.Kind == resource.Action && op.To != "":
		return transition, true
	case op.Kind == resource.Delete:
		return remove, true
	}
	return nil, false
}

// Workspace is the caller's workspace as the records engine sees it.
func (q *Request) Workspace() records.Workspace {
	return records.Workspace{ID: q.Principal.Workspace.ID, Commerce: q.Principal.Workspace.Commerce()}
}
