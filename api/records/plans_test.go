package records_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Issue 37: the statements of a cached read's miss keep the plans that
// make them short on PostgreSQL — the plan prepared statements use once
// generic (force_generic_plan), explained with ANALYZE and BUFFERS: the
// record and the version by primary key, a newest-first page by walking
// the workspace's created_at index without a sort, the table versions by
// the counters' key; none scans a table, each touches a few buffers.
func TestHotQueriesKeepTheirPlans(t *testing.T) {
	if apitest.Backend() != "postgres" {
		t.Skip("PostgreSQL's plans")
	}
	t.Parallel()
	ctx := context.Background()
	db, _ := apitest.DB(t)
	ws, err := access.NewWorkspace(ctx, db.Writer, "plans", "business", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Run(ctx, db, ws.ID, demo.Options{Invoices: 3000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	// The counters of many other workspaces: with few rows a scan of
	// list_totals is the better plan, as the planner knows.
	if _, err := db.WritePool.ExecContext(ctx, `INSERT INTO list_totals (workspace_id, tbl, shard, n, gen)
		SELECT 'ws_plans_' || w, t, s, 1, 1 FROM generate_series(1, 500) w, unnest(CAST('{invoices,clients,quotes,items}' AS text[])) t, generate_series(0, 15) s
		ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WritePool.ExecContext(ctx, "ANALYZE list_totals"); err != nil {
		t.Fatal(err)
	}
	e, err := records.New(db, resource.All)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := db.ReadPool.QueryRowContext(ctx, "SELECT id FROM invoices WHERE workspace_id = $1 ORDER BY id DESC LIMIT 1", ws.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	conn, err := db.ReadPool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	hot := records.HotSQL(e, resource.Invoices)
	for _, c := range []struct {
		name, sql string
		args      []string
		index     string // the index the plan must use
	}{
		{"version", hot["version"], []string{ws.ID, id}, "invoices_pkey"},
		{"get", hot["get"], []string{ws.ID, id}, "invoices_pkey"},
		{"page", hot["page"], []string{ws.ID, "50"}, "invoice_workspace_id_created_at_id"},
		{"versions", shortcut.VersionsSQL, []string{"{" + ws.ID + "," + ws.ID + "}", "{invoices,clients}"}, "list_totals_pkey"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stmt := "hot_" + c.name
			if _, err := conn.ExecContext(ctx, "PREPARE "+stmt+" AS "+c.sql); err != nil {
				t.Fatal(err)
			}
			defer conn.ExecContext(ctx, "DEALLOCATE "+stmt)
			lits := make([]string, len(c.args))
			for i, a := range c.args {
				lits[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
			}
			var out string
			if err := conn.QueryRowContext(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "+stmt+"("+strings.Join(lits, ", ")+")").Scan(&out); err != nil {
				t.Fatal(err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			root := plans[0].Plan
			indexes := map[string]bool{}
			root.walk(func(n planNode) {
				if n.NodeType == "Seq Scan" || n.NodeType == "Sort" || strings.HasPrefix(n.NodeType, "Bitmap") {
					t.Errorf("%s: a %s (of %q) in the plan:\n%s", c.name, n.NodeType, n.Relation, out)
				}
				indexes[n.Index] = true
			})
			if !indexes[c.index] {
				t.Errorf("%s: the plan does not use %s:\n%s", c.name, c.index, out)
			}
			if b := root.SharedHit + root.SharedRead; b > 40 {
				t.Errorf("%s: %d buffers touched, more than 40:\n%s", c.name, b, out)
			}
		})
	}
}

type planNode struct {
	NodeType   string     `json:"Node Type"`
	Relation   string     `json:"Relation Name"`
	Index      string     `json:"Index Name"`
	SharedHit  int        `json:"Shared Hit Blocks"`
	SharedRead int        `json:"Shared Read Blocks"`
	Plans      []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}
