package database

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// schemaCreate serialises ent's schema creation within the process: it
// writes into the generated tables, package variables shared by every client.
var schemaCreate sync.Mutex

func createSchema(ctx context.Context, s *migrate.Schema) error {
	schemaCreate.Lock()
	defer schemaCreate.Unlock()
	return s.Create(ctx, migrate.WithGlobalUniqueID(false))
}

// retiredIndexes were declared once and are dropped where they remain: the
// events log lists by seq and bounds its ids instead (ent/schema/events.go).
var retiredIndexes = []string{"DROP INDEX IF EXISTS event_created_at", "DROP INDEX IF EXISTS event_workspace_id_created_at_id"}

// Migrator brings the parts of the schema ent does not know up to date
// (ent/shortcut's Searches: search indexes, counters and their triggers).
type Migrator interface {
	Migrate(ctx context.Context, d *DB) error
}

// Migrate brings the schema up to date: ent's tables and indexes, then
// what more (if not nil) adds. It is safe to run on every start and from
// several processes.
func (d *DB) Migrate(ctx context.Context, more Migrator) error {
	if err := createSchema(ctx, d.Writer.Schema); err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	// ent adds indexes but never drops one the schema no longer declares.
	if err := ExecAll(ctx, d.WritePool, retiredIndexes...); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if err := d.migrateOrder(ctx); err != nil {
		return fmt.Errorf("database: event order: %w", err)
	}
	if more != nil {
		if err := more.Migrate(ctx, d); err != nil {
			return err
		}
	}
	if d.Dialect == dialect.SQLite {
		optimize(ctx, d.WritePool)
	}
	return nil
}

// Rebuild builds part of the schema from scratch — the SQL build returns,
// run in one transaction that records marker in versionTable — unless
// versionTable already holds marker and broken (if any) finds nothing
// wrong. On PostgreSQL the transaction first locks versionTable, which
// serializes servers starting at once until it commits.
func (d *DB) Rebuild(ctx context.Context, versionTable, marker string, broken func(context.Context) bool,
	build func(tx *sql.Tx) ([]string, error)) error {
	if _, err := d.WritePool.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+versionTable+" (v TEXT NOT NULL)"); err != nil {
		return err
	}
	var have string
	_ = d.WritePool.QueryRowContext(ctx, "SELECT v FROM "+versionTable).Scan(&have)
	if have == marker && (broken == nil || !broken(ctx)) {
		return nil
	}
	return RunTx(ctx, d.WritePool, func(tx *sql.Tx) error {
		if d.Dialect == dialect.Postgres {
			if _, err := tx.ExecContext(ctx, "LOCK TABLE "+versionTable+" IN EXCLUSIVE MODE"); err != nil {
				return err
			}
		}
		stmts, err := build(tx)
		if err != nil {
			return err
		}
		if err := ExecAll(ctx, tx, append(stmts, "DELETE FROM "+versionTable)...); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, d.Rebind("INSERT INTO "+versionTable+" (v) VALUES (?)"), marker)
		return err
	})
}
