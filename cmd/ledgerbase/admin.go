package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/ent"
)

func workspaceCmd() *cobra.Command {
	c := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a workspace; prints its id alone",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			name, _ := c.Flags().GetString("name")
			plan, _ := c.Flags().GetString("plan")
			mode, _ := c.Flags().GetBool("commerce-mode")
			module, _ := c.Flags().GetBool("commerce-module")
			in := map[string]any{"name": name, "plan": plan, "commerce_mode": mode, "commerce_module": module}
			return configure(c, "", api.CreateWorkspace, "", in, func(res api.Result, made made) {
				fmt.Fprintln(c.OutOrStdout(), made.ID)
			})
		},
	}
	create.Flags().String("name", "", "workspace name (required)")
	create.Flags().String("plan", "starter", "starter, growth or business")
	create.Flags().Bool("commerce-mode", false, "switch commerce mode on")
	create.Flags().Bool("commerce-module", false, "enable the commerce plan module")
	_ = create.MarkFlagRequired("name")
	c.AddCommand(create, workspaceListCmd())
	return c
}

func keyCmd() *cobra.Command {
	c := &cobra.Command{Use: "key", Short: "Manage API keys"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key; prints the secret alone (it is not shown again), and its id and expiry on standard error",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ws, _ := c.Flags().GetString("workspace")
			role, _ := c.Flags().GetString("role")
			name, _ := c.Flags().GetString("name")
			in := map[string]any{"name": name, "role": role}
			if d, _ := c.Flags().GetDuration("expires-in"); d < 0 {
				return fmt.Errorf("--expires-in must be positive")
			} else if d > 0 {
				in["expires_in"] = d.String()
			}
			if c.Flags().Changed("rate-limit") {
				in["rate_limit"], _ = c.Flags().GetInt("rate-limit")
			}
			return configure(c, ws, api.CreateKey, "", in, func(res api.Result, made made) {
				fmt.Fprintln(c.OutOrStdout(), res.Secret)
				// Standard output stays the secret alone, for scripts; the id
				// (for key revoke) and the expiry go to standard error.
				expires := "never expires"
				if made.ExpiresAt != nil {
					expires = "expires at " + made.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(c.ErrOrStderr(), "created key %s; it %s\n", made.ID, expires)
			})
		},
	}
	create.Flags().String("workspace", "", "workspace id (required)")
	create.Flags().String("role", access.RoleAdmin, "admin, viewer or a custom role")
	create.Flags().String("name", "", "a name to recognise the key by")
	create.Flags().Duration("expires-in", 0, "lifetime, e.g. 720h (default: never expires)")
	create.Flags().Int("rate-limit", 0, "requests per minute, overriding the plan's (0 = unlimited)")
	_ = create.MarkFlagRequired("workspace")
	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key; its next call gets 401",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return configure(c, "", api.RevokeKey, args[0], nil, nil)
		},
	}
	c.AddCommand(create, revoke, keyListCmd())
	return c
}

func roleCmd() *cobra.Command {
	c := &cobra.Command{Use: "role", Short: "Manage custom roles"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a custom role from grants like clients:write,invoices:read",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ws, _ := c.Flags().GetString("workspace")
			name, _ := c.Flags().GetString("name")
			grant, _ := c.Flags().GetString("grant")
			grants, err := access.ParseGrantList(grant)
			if err != nil {
				return err
			}
			in := map[string]any{"name": name, "grants": grants}
			return configure(c, ws, api.CreateRole, "", in, func(res api.Result, made made) {
				fmt.Fprintln(c.OutOrStdout(), made.ID)
			})
		},
	}
	create.Flags().String("workspace", "", "workspace id (required)")
	create.Flags().String("name", "", "role name (required)")
	create.Flags().String("grant", "", "comma-separated resource:none|read|write")
	_ = create.MarkFlagRequired("workspace")
	_ = create.MarkFlagRequired("name")
	c.AddCommand(create, roleListCmd())
	return c
}

// made is what the CLI reads of a configuration write's answer.
type made struct {
	ID        string     `json:"id"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// configure runs the configuration write op through the core's Write as
// the command line in workspace ws (a revoked key's own), with the body in
// (nil for none) on the object id, and passes its answer to done.
func configure(c *cobra.Command, ws string, op api.ConfigOp, id string, in any, done func(api.Result, made)) error {
	db, err := openDB(c)
	if err != nil {
		return err
	}
	defer db.Close()
	if op == api.RevokeKey {
		k, err := db.Reader.APIKey.Get(c.Context(), id)
		if ent.IsNotFound(err) {
			return fmt.Errorf("no key %s", id)
		}
		if err != nil {
			return err
		}
		ws = k.WorkspaceID
	}
	core, err := api.New(db, api.Config{})
	if err != nil {
		return err
	}
	b := []byte("{}")
	if in != nil {
		b, _ = json.Marshal(in)
	}
	res, e := core.Write(c.Context(), api.WriteRequest{Principal: access.System(ws), Config: op, ID: id, Body: b, ContentType: api.JSON})
	switch {
	case e != nil && e.Status >= 500 && e.Cause != nil:
		return e.Cause
	case e != nil:
		return errors.New(e.Message)
	}
	var m made
	if err := json.Unmarshal(res.Body, &m); err != nil {
		return err
	}
	if done != nil {
		done(res, m)
	}
	return nil
}
