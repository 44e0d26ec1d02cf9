package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ledgerbase/ledgerbase/ent"
)

// InEventWriterTx is InTx for a transaction that may write events of
// workspace ws. On PostgreSQL it begins registered as their writer
// (RegisterEventWriter): BEGIN and the lock go in one round trip.
func (d *DB) InEventWriterTx(ctx context.Context, ws string, fn func(tx *ent.Tx) error) error {
	if d.Dialect == dialect.Postgres {
		ctx = context.WithValue(ctx, eventWriterKey{}, ws)
	}
	return d.InTx(ctx, fn)
}

type eventWriterKey struct{}

// beginDriver is ent's PostgreSQL driver, whose transactions begin with
// the event writer's lock when the context asks for it (InEventWriterTx).
type beginDriver struct {
	*entsql.Driver
	db *sql.DB
}

func (d beginDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	ws, ok := ctx.Value(eventWriterKey{}).(string)
	if !ok {
		return d.Driver.Tx(ctx)
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// Without arguments pgx sends the simple protocol, which takes two
	// statements in one message. The lock's arguments are numbers.
	begin := fmt.Sprintf("BEGIN; SELECT pg_advisory_xact_lock_shared(%d, %d)", eventLockClass, workspaceKey(ws))
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		t := &connTx{conn: conn}
		return nil, errors.Join(err, t.Rollback())
	}
	return &connTx{Conn: entsql.Conn{ExecQuerier: conn}, conn: conn}, nil
}

// connTx is a transaction begun by hand on a pooled connection; ending it
// gives the connection back (pgx's stdlib discards one left in a
// transaction, should an end fail).
type connTx struct {
	entsql.Conn
	conn *sql.Conn
}

// ErrCommitRolledBack is a commit PostgreSQL answered by rolling back: an
// earlier statement of the transaction failed.
var ErrCommitRolledBack = errors.New("database: the transaction failed before its commit and was rolled back")

func (t *connTx) Commit() error { return t.end("COMMIT") }

func (t *connTx) Rollback() error { return t.end("ROLLBACK") }

func (t *connTx) end(stmt string) error {
	if t.conn == nil {
		return sql.ErrTxDone
	}
	defer func() {
		t.conn.Close()
		t.conn = nil
	}()
	var tag pgconn.CommandTag
	err := t.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("database: a %T is not pgx's", dc)
		}
		var err error
		// Not the request's context: an end that is cut off leaves the
		// transaction to the server and the connection unusable.
		tag, err = c.Conn().Exec(context.Background(), stmt)
		return err
	})
	if err == nil && stmt == "COMMIT" && tag.String() == "ROLLBACK" {
		return ErrCommitRolledBack
	}
	return err
}
