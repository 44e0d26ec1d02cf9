package database

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/ledgerbase/ledgerbase/ent/migrate"
)

// Events on PostgreSQL go in transaction-id order (horizon.go), and the
// events of one record must go in the order of its changes. A transaction
// that started writing after another committed has the larger id, so only
// transactions running side by side can be out of order: an older one
// that changes a row after a newer one changed it and committed (it
// waited on the row's lock) would tell of the row's later state first. A
// trigger on every record table refuses that change as a serialization
// failure (40001); the write reruns in a new transaction, with a newer id.
// The check reads the row's current version in a fresh snapshot: in a
// trigger after a lock wait, that is the version the other transaction
// left, whose xmin is that transaction's id (age below 0: newer than this
// one). Row triggers do not see OLD's system columns, hence the read.

const orderVersion = "v1"

// unordered are workspace tables whose rows no event tells of: they are
// changed by workers, counters or configuration writes outside the
// writes' reruns.
var unordered = []string{"api_keys", "email_messages", "events", "idempotency_keys", "key_usages", "roles", "sequences",
	"webhook_attempts", "webhook_deliveries", "webhook_endpoints"}

// orderedTables are the record tables: those with a workspace_id, but
// the unordered.
func orderedTables() []string { return WorkspaceTables(unordered...) }

// WorkspaceTables are the tables with a workspace_id column, but those
// named in except.
func WorkspaceTables(except ...string) []string {
	var out []string
	for _, t := range migrate.Tables {
		if slices.Contains(except, t.Name) {
			continue
		}
		if slices.ContainsFunc(t.Columns, func(c *schema.Column) bool { return c.Name == "workspace_id" }) {
			out = append(out, t.Name)
		}
	}
	return out
}

// migrateOrder installs the triggers (PostgreSQL).
func (d *DB) migrateOrder(ctx context.Context) error {
	if d.Dialect != dialect.Postgres {
		return nil
	}
	tables := orderedTables()
	return d.Rebuild(ctx, "event_order_version", orderVersion+":"+strings.Join(tables, ","), nil, func(*sql.Tx) ([]string, error) {
		var out []string
		for _, t := range unordered { // one of an earlier version's
			out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %[1]s_order ON %[1]s", t))
		}
		for _, t := range tables {
			out = append(out, fmt.Sprintf(`CREATE OR REPLACE FUNCTION %[1]s_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT age(xmin) FROM %[1]s WHERE id = OLD.id) < 0 THEN
		RAISE EXCEPTION 'a newer transaction changed %[1]s %% first', OLD.id USING ERRCODE = '40001';
	END IF;
	IF TG_OP = 'DELETE' THEN
		RETURN OLD;
	END IF;
	RETURN NEW;
END $$`, t),
				fmt.Sprintf("DROP TRIGGER IF EXISTS %[1]s_order ON %[1]s", t),
				fmt.Sprintf("CREATE TRIGGER %[1]s_order BEFORE UPDATE OR DELETE ON %[1]s FOR EACH ROW EXECUTE FUNCTION %[1]s_order()", t))
		}
		return out, nil
	})
}
