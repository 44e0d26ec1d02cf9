package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/role"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// The list commands print a table, or with --json a JSON array named as in
// /v1; rows come oldest first, so the newest is next to the prompt.

// workspaceRow is one workspace as `workspace list --json` prints it.
type workspaceRow struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Plan           string    `json:"plan"`
	CommerceMode   bool      `json:"commerce_mode"`
	CommerceModule bool      `json:"commerce_module"`
	CreatedAt      time.Time `json:"created_at"`
}

func workspaceListCmd() *cobra.Command {
	return listCmd("List workspaces: id, name, plan, commerce mode and module (--json for scripts)", "", false,
		func(ctx context.Context, db *ent.Client, _ string) ([]workspaceRow, error) {
			all, err := db.Workspace.Query().Order(ent.Asc(workspace.FieldCreatedAt), ent.Asc(workspace.FieldID)).All(ctx)
			rows := make([]workspaceRow, 0, len(all))
			for _, w := range all {
				rows = append(rows, workspaceRow{ID: w.ID, Name: w.Name, Plan: string(w.Plan),
					CommerceMode: w.CommerceMode, CommerceModule: w.CommerceModule, CreatedAt: w.CreatedAt.UTC().Truncate(time.Second)})
			}
			return rows, err
		},
		[]string{"ID", "NAME", "PLAN", "COMMERCE MODE", "COMMERCE MODULE", "CREATED"},
		func(r workspaceRow) []string {
			return []string{r.ID, r.Name, r.Plan, onOff(r.CommerceMode), onOff(r.CommerceModule), stamp(&r.CreatedAt, "")}
		})
}

// keyRow is one API key as `key list --json` prints it: never its secret
// (which is not stored) nor its hash.
type keyRow struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	Prefix     string     `json:"prefix"`
	Status     string     `json:"status"` // active, expired or revoked
	RateLimit  *int       `json:"rate_limit"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func keyListCmd() *cobra.Command {
	return listCmd("List a workspace's API keys, revoked and expired ones too; never a secret (--json for scripts)", "", true,
		func(ctx context.Context, db *ent.Client, ws string) ([]keyRow, error) {
			all, err := db.APIKey.Query().Where(apikey.WorkspaceID(ws)).
				Order(ent.Asc(apikey.FieldCreatedAt), ent.Asc(apikey.FieldID)).All(ctx)
			now := time.Now()
			rows := make([]keyRow, 0, len(all))
			for _, k := range all {
				rows = append(rows, keyRow{ID: k.ID, Name: k.Name, Role: k.Role, Prefix: k.Prefix, Status: access.KeyState(k, now),
					RateLimit: k.RateLimit, CreatedAt: k.CreatedAt.UTC().Truncate(time.Second), ExpiresAt: utc(access.KeyExpiry(k.ExpiresAt)),
					RevokedAt: utc(k.RevokedAt), LastUsedAt: utc(k.LastUsedAt)})
			}
			return rows, err
		},
		[]string{"ID", "NAME", "ROLE", "PREFIX", "STATUS", "CREATED", "EXPIRES", "REVOKED", "LAST USED"},
		func(r keyRow) []string {
			return []string{r.ID, cmp.Or(r.Name, "-"), r.Role, r.Prefix + "…", r.Status, stamp(&r.CreatedAt, ""),
				stamp(r.ExpiresAt, "never"), stamp(r.RevokedAt, "-"), stamp(r.LastUsedAt, "never")}
		})
}

// roleRow is one role as `role list --json` prints it. The built-in admin
// and viewer come first, their grants spelt out over every resource.
type roleRow struct {
	ID      *string           `json:"id"` // null for a built-in role
	Name    string            `json:"name"`
	BuiltIn bool              `json:"built_in"`
	Grants  map[string]string `json:"grants"`
}

func roleListCmd() *cobra.Command {
	return listCmd("List the roles a key of the workspace can have, built-in and custom, with their grants (--json for scripts)",
		`List the roles a key of the workspace can have: the built-in admin (write on
every resource) and viewer (read on every resource), then the workspace's
custom roles. Grants print as role create's --grant takes them. A role
never reaches past the workspace's plan and commerce settings.`, true,
		func(ctx context.Context, db *ent.Client, ws string) ([]roleRow, error) {
			custom, err := db.Role.Query().Where(role.WorkspaceID(ws)).
				Order(ent.Asc(role.FieldCreatedAt), ent.Asc(role.FieldID)).All(ctx)
			every := func(acc string) map[string]string {
				g := map[string]string{}
				for _, name := range resource.Grantable() {
					g[name] = acc
				}
				return g
			}
			rows := []roleRow{
				{Name: access.RoleAdmin, BuiltIn: true, Grants: every("write")},
				{Name: access.RoleViewer, BuiltIn: true, Grants: every("read")},
			}
			for _, r := range custom {
				g := map[string]string(r.Grants)
				if g == nil {
					g = map[string]string{}
				}
				rows = append(rows, roleRow{ID: &r.ID, Name: r.Name, Grants: g})
			}
			return rows, err
		},
		[]string{"NAME", "ID", "GRANTS"},
		func(r roleRow) []string {
			switch {
			case r.BuiltIn && r.Name == access.RoleAdmin:
				return []string{r.Name, "built-in", "write on every resource"}
			case r.BuiltIn:
				return []string{r.Name, "built-in", "read on every resource"}
			}
			return []string{r.Name, *r.ID, cmp.Or(grantList(r.Grants), "-")}
		})
}

// listCmd is a list command: load reads its rows (of --workspace, when
// perWorkspace), header and cells print them as a table, or --json.
func listCmd[T any](short, long string, perWorkspace bool, load func(ctx context.Context, db *ent.Client, ws string) ([]T, error),
	header []string, cells func(T) []string) *cobra.Command {
	c := &cobra.Command{Use: "list", Short: short, Long: long, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ws, _ := c.Flags().GetString("workspace")
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			if perWorkspace {
				if err := workspaceExists(c, db.Writer, ws); err != nil {
					return err
				}
			}
			rows, err := load(c.Context(), db.Writer, ws)
			if err != nil {
				return err
			}
			if asJSON, _ := c.Flags().GetBool("json"); asJSON {
				return printJSON(c.OutOrStdout(), rows)
			}
			t := newTable(c.OutOrStdout(), header...)
			for _, r := range rows {
				t.row(cells(r)...)
			}
			return t.flush()
		}}
	if perWorkspace {
		c.Flags().String("workspace", "", "workspace id (required)")
		_ = c.MarkFlagRequired("workspace")
	}
	c.Flags().Bool("json", false, "print a JSON array instead of a table")
	return c
}

// grantList writes a role matrix the way role create --grant reads it,
// sorted by resource.
func grantList(g map[string]string) string {
	names := slices.Sorted(maps.Keys(g))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ":" + g[n]
	}
	return strings.Join(parts, ",")
}

func workspaceExists(c *cobra.Command, db *ent.Client, id string) error {
	ok, err := db.Workspace.Query().Where(workspace.ID(id)).Exist(c.Context())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no workspace %s (ledgerbase workspace list shows them)", id)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

// table aligns columns for people.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, header ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline in a name would break the columns.
		cells[i] = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

func stamp(at *time.Time, none string) string {
	if at == nil {
		return none
	}
	return at.UTC().Format(time.RFC3339)
}

// utc is at as the API shows times: UTC, to the second.
func utc(at *time.Time) *time.Time {
	if at == nil {
		return nil
	}
	u := at.UTC().Truncate(time.Second)
	return &u
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
