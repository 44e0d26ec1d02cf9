package writes

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// state reads the status of the request's record, locked where writers run
// concurrently, so two moves of one document never both win.
func (q *Request) state(tx *ent.Tx) (string, error) {
	st, err := q.stateOf(tx, q.Resource, q.ID, q.locks())
	if err == nil && st.status == "" {
		return "", apierr.NotFound(q.Resource.Singular)
	}
	return st.status, err
}

// allowed reads the record's state under lock and refuses q.Op from it.
func (q *Request) allowed(tx *ent.Tx) (string, error) {
	st, err := q.state(tx)
	if err != nil {
		return "", err
	}
	return st, q.check(q.Op, st)
}

// check refuses op on a record in state st.
func (q *Request) check(op resource.Op, st string) error {
	if op.Allowed(st) {
		return nil
	}
	verb := op.Name
	if verb == "" {
		verb = map[resource.OpKind]string{resource.Update: "edit", resource.Delete: "delete"}[op.Kind]
	}
	return stateConflict("%s %s cannot be %s (only from %s)", article(humanState(st)), q.Resource.Singular,
		resource.PastTense(verb), humanState(strings.Join(op.From, ", ")))
}

// checkEdit refuses an edit of the request's record in state st by the
// resource's declared update (its From), whichever operation edits it (an
// upsert by external_ref edits too).
func (q *Request) checkEdit(st string) error {
	edit, _ := q.Resource.Op(resource.Update)
	return q.check(edit, st)
}

// humanState writes a state as words: partially_paid is "partially paid".
func humanState(st string) string { return strings.ReplaceAll(st, "_", " ") }

func stateConflict(format string, a ...any) *apierr.Error {
	return apierr.Conflict("invalid_state_transition", format, a...)
}

// setState moves the request's record to st.
func (q *Request) setState(tx *ent.Tx, st string) error {
	return sqlstore.SetStatus(q.Ctx, q.DB, tx, q.Resource.Table, st, time.Now().UTC(), q.ID)
}

// move runs an action: the state check, then extra (a rule of the action's
// own, may be nil), then the move to the declared state.
func (q *Request) move(extra func(tx *ent.Tx, from string) error) (Result, error) {
	return q.inTx(func(tx *ent.Tx) error {
		st, err := q.allowed(tx)
		if err != nil {
			return err
		}
		if extra != nil {
			if err := extra(tx, st); err != nil {
				return err
			}
		}
		return q.setState(tx, q.Op.To)
	}, func() Answer { return record(http.StatusOK, q.Resource, q.ID, "") })
}

// transition is an action that only moves the record between its declared states.
func transition(q *Request) (Result, error) { return q.move(nil) }

// remove deletes a record in one of the states its Delete allows; it
// answers what Stripe does: the id and deleted: true.
func remove(q *Request) (Result, error) { return q.removing(nil) }

// removing is remove with extra, a rule of the delete's own run before the
// row goes (may be nil).
func (q *Request) removing(extra func(tx *ent.Tx) error) (Result, error) {
	var id string
	return q.inTx(func(tx *ent.Tx) error {
		if _, err := q.allowed(tx); err != nil {
			return err
		}
		if extra != nil {
			if err := extra(tx); err != nil {
				return err
			}
		}
		id = q.ID
		return sqlstore.Delete(q.Ctx, q.DB, tx, q.Resource.Table, q.ID)
	}, func() Answer {
		return Answer{Status: http.StatusOK, Body: Deleted(id, strings.ReplaceAll(q.Resource.Singular, " ", "_"))}
	})
}

// Deleted is the answer of every DELETE, a record's or the configuration's.
func Deleted(id, object string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":%q,"deleted":true}`, id, object)
}

// voidUnpaid is the void of a document that takes payments, refused once
// a completed payment moved money (it must be paid back or credited, not
// hidden). instead ends the refusal; more, when set, is a further rule.
func voidUnpaid(payments *resource.Resource, instead string, more func(*Request, *ent.Tx) error) Func {
	return func(q *Request) (Result, error) {
		return q.move(func(tx *ent.Tx, _ string) error {
			if more != nil {
				if err := more(q, tx); err != nil {
					return err
				}
			}
			var one int
			err := queryRow(q, tx, "SELECT 1 FROM "+payments.Table+" WHERE "+payments.Parent.FK+" = ? AND status = 'completed' LIMIT 1",
				[]any{q.ID}, &one)
			switch {
			case err == nil:
				return stateConflict("%s with a completed payment cannot be voided%s", article(q.Resource.Singular), instead)
			case err != sql.ErrNoRows:
				return err
			}
			return sqlstore.ClearBalance(q.Ctx, q.DB, tx, q.Resource.Table, q.ID, time.Now().UTC())
		})
	}
}
