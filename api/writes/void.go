package writes

import (
	"database/sql"
	"time"

	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/sqlstore"
)

// voidUnpaid is the void of a document that takes payments (invoices,
// bills): refused once money moved — a completed payment must be paid
// back or credited, not hidden by a void — and a void document owes
// nothing. payments is the document's payments sub-resource; instead
// ends the refusal with what to do ("credit it instead"); more, when set,
// is a further rule of the kind's own.
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
