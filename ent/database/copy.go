package database

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CopyFrom loads rows (values in cols' order) into table with PostgreSQL's
// COPY through pgx: one stream instead of statements of a few thousand
// rows, and no SQL to parse per batch. It runs on conn, so it joins the
// transaction begun there (BeginTx on the same *sql.Conn). Statement-level
// triggers fire once per COPY, as for one INSERT of every row.
func CopyFrom(ctx context.Context, conn *sql.Conn, table string, cols []string, rows [][]any) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("database: COPY needs a PostgreSQL connection")
		}
		var err error
		n, err = c.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	})
	return n, err
}
