// Package sqlstore is every write that is clearer as SQL than through
// ent's typed builders, each a named function. Ent sets updated_at itself;
// here each function sets it where the table has it.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
)

// exec runs a built statement in tx.
func exec(ctx context.Context, tx *ent.Tx, b entsql.Querier) error {
	q, args := b.Query()
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

// SetStatus moves the rows ids of table to status; updated_at becomes at.
func SetStatus(ctx context.Context, db *database.DB, tx *ent.Tx, table, status string, at time.Time, ids ...string) error {
	in := make([]any, len(ids))
	for i, id := range ids {
		in[i] = id
	}
	return exec(ctx, tx, entsql.Dialect(db.Dialect).Update(table).
		Set("status", status).Set("updated_at", at).Where(entsql.In("id", in...)))
}

// ClearBalance sets a document's remaining_cents to 0 (a void document
// owes nothing); updated_at becomes at.
func ClearBalance(ctx context.Context, db *database.DB, tx *ent.Tx, table, id string, at time.Time) error {
	return exec(ctx, tx, entsql.Dialect(db.Dialect).Update(table).
		Set("remaining_cents", 0).Set("updated_at", at).Where(entsql.EQ("id", id)))
}

// Delete deletes row id of table (the database's cascades take its
// dependents).
func Delete(ctx context.Context, db *database.DB, tx *ent.Tx, table, id string) error {
	return exec(ctx, tx, entsql.Dialect(db.Dialect).Delete(table).Where(entsql.EQ("id", id)))
}

// Reserve advances workspace counter name by n (creating it at n) and
// returns the first of the n values, in one statement on q: a write's
// transaction, which keeps the row locked to its commit, or a pool, which
// commits at once and locks the row only while the statement runs.
// Placeholders are $n, which SQLite takes too.
func Reserve(ctx context.Context, q database.Querier, workspaceID, name string, n int64) (int64, error) {
	now := time.Now().UTC()
	last, found := int64(0), false
	err := database.EachRow(ctx, q, `INSERT INTO sequences (id, workspace_id, created_at, updated_at, name, value)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, name)
		DO UPDATE SET value = sequences.value + excluded.value, updated_at = excluded.updated_at RETURNING value`,
		[]any{ids.At("seq", now), workspaceID, now, now, name, n}, []any{&last}, func() { found = true })
	if err == nil && !found {
		err = sql.ErrNoRows
	}
	return last - n + 1, err
}

// eventsPerInsert bounds one statement's events (13 arguments each) well
// below both databases' limits on arguments.
const eventsPerInsert = 64

// EnabledEndpoints reads a workspace's webhook endpoints that take
// deliveries, as (id, enabled_events) ($1 is the first argument on SQLite
// and PostgreSQL alike).
const EnabledEndpoints = "SELECT id, enabled_events FROM webhook_endpoints WHERE workspace_id = $1 AND disabled = false"

// InsertEvents appends events (ent/schema/events.go) in as few statements
// as they fit. A statement's SQL depends only on how many events it
// holds, so the driver's statement cache answers it. On PostgreSQL the
// statement numbers them itself (database.TxSeqSQL: the transaction's id
// and each event's place among events) and sets their Seq from RETURNING;
// on SQLite their Seq is stored as given.
//
// With endpointsOf, a workspace's id, the first statement also reads that
// workspace's EnabledEndpoints and InsertEvents returns them (PostgreSQL:
// one round trip less per write).
func InsertEvents(ctx context.Context, db *database.DB, tx *ent.Tx, events []*ent.Event, endpointsOf string) ([]ent.WebhookEndpoint, error) {
	pg := db.Dialect == dialect.Postgres
	if endpointsOf != "" && !pg {
		return nil, fmt.Errorf("sqlstore: endpoints read with events on PostgreSQL only")
	}
	seq := "?"
	if pg {
		seq = database.TxSeqSQL("?")
	}
	var eps []ent.WebhookEndpoint
	for start := 0; start < len(events); start += eventsPerInsert {
		evs := events[start:min(start+eventsPerInsert, len(events))]
		args := make([]any, 0, 13*len(evs)+1)
		for i, e := range evs {
			var previous any
			if e.Previous != nil {
				previous = *e.Previous
			}
			at := any(e.Seq)
			if pg {
				at = int64(start + i)
			}
			args = append(args, e.ID, e.WorkspaceID, e.CreatedAt, e.UpdatedAt, at, e.Type, e.ObjectType, e.ObjectID,
				e.Data, previous, e.RequestID, e.ActorType, e.ActorID)
		}
		q := "INSERT INTO events (id, workspace_id, created_at, updated_at, seq, type, object_type, object_id, data, previous, " +
			"request_id, actor_type, actor_id) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, "+seq+", ?, ?, ?, ?, ?, ?, ?, ?), ", len(evs)), ", ")
		if !pg {
			if _, err := tx.ExecContext(ctx, db.Rebind(q), args...); err != nil {
				return nil, err
			}
			continue
		}
		q += " RETURNING id, seq"
		var into *[]ent.WebhookEndpoint
		if endpointsOf != "" && start == 0 {
			// An endpoint's row has no seq. The endpoints are read in the
			// statement's snapshot, as a SELECT of their own would be.
			q = "WITH e AS (" + q + ") SELECT id, seq, NULL FROM e UNION ALL SELECT id, NULL, enabled_events FROM (" +
				strings.Replace(EnabledEndpoints, "$1", "?", 1) + ") w"
			args = append(args, endpointsOf)
			into = &eps
		}
		if err := returnSeqs(ctx, tx, db.Rebind(q), args, evs, into); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

// returnSeqs runs an insert of evs returning each one's id and seq, and
// sets their Seq (by id: RETURNING promises no order). Rows without a seq
// are endpoints (InsertEvents), added to *eps; with eps nil there are none.
func returnSeqs(ctx context.Context, tx *ent.Tx, q string, args []any, evs []*ent.Event, eps *[]ent.WebhookEndpoint) error {
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	byID := make(map[string]*ent.Event, len(evs))
	for _, e := range evs {
		byID[e.ID] = e
	}
	for rs.Next() {
		var id string
		var seq sql.NullInt64
		var types sql.NullString
		dest := []any{&id, &seq}
		if eps != nil {
			dest = append(dest, &types)
		}
		if err := rs.Scan(dest...); err != nil {
			return err
		}
		if !seq.Valid {
			*eps = append(*eps, ent.WebhookEndpoint{ID: id, EnabledEvents: types.String})
		} else if e := byID[id]; e != nil {
			e.Seq = seq.Int64
		}
	}
	return rs.Err()
}

// TokenTaker is the shared rate limit's take on db (the rate_buckets
// table): one atomic upsert refills key's bucket of size tokens by the
// time since its last take (rate tokens a second; at and the last take
// are unix seconds), capped at size, and takes a token if there is one.
// It answers the tokens left and whether it took one.
func TokenTaker(db *database.DB) func(ctx context.Context, key string, size, rate, at float64) (float64, bool, error) {
	// SET reads the row's old values, so tokens and allowed see the same refill.
	least, greatest := "min", "max"
	if db.Dialect == dialect.Postgres {
		least, greatest = "LEAST", "GREATEST"
	}
	refill := least + "(excluded.cap, rate_buckets.tokens + " + greatest + "(0, excluded.at - rate_buckets.at) * excluded.rate)"
	q := db.Rebind("INSERT INTO rate_buckets (id, tokens, at, cap, rate, allowed) VALUES (?, ?, ?, ?, ?, ?) " +
		"ON CONFLICT (id) DO UPDATE SET " +
		"tokens = CASE WHEN " + refill + " >= 1 THEN " + refill + " - 1 ELSE " + refill + " END, " +
		"allowed = (" + refill + " >= 1), at = excluded.at, cap = excluded.cap, rate = excluded.rate " +
		"RETURNING tokens, allowed")
	return func(ctx context.Context, key string, size, rate, at float64) (tokens float64, allowed bool, err error) {
		err = db.WritePool.QueryRowContext(ctx, q, key, size-1, at, size, rate, size >= 1).Scan(&tokens, &allowed)
		return tokens, allowed, err
	}
}
