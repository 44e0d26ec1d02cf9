package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api/access"
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
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			ws, err := access.NewWorkspace(c.Context(), db.Writer, name, plan, mode, module)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), ws.ID)
			return nil
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
			spec := access.KeySpec{}
			spec.WorkspaceID, _ = c.Flags().GetString("workspace")
			spec.Role, _ = c.Flags().GetString("role")
			spec.Name, _ = c.Flags().GetString("name")
			spec.ExpiresIn, _ = c.Flags().GetDuration("expires-in")
			if c.Flags().Changed("rate-limit") {
				n, _ := c.Flags().GetInt("rate-limit")
				spec.RateLimit = &n
			}
			if spec.ExpiresIn < 0 {
				return fmt.Errorf("--expires-in must be positive")
			}
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			secret, k, err := access.NewKey(c.Context(), db.Writer, spec)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), secret)
			// Standard output stays the secret alone, for scripts; the id
			// (for key revoke) and the expiry go to standard error.
			expires := "never expires"
			if at := access.KeyExpiry(k.ExpiresAt); at != nil {
				expires = "expires at " + at.Format(time.RFC3339)
			}
			fmt.Fprintf(c.ErrOrStderr(), "created key %s; it %s\n", k.ID, expires)
			return nil
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
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			return access.RevokeKey(c.Context(), db.Writer, args[0])
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
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			r, err := access.NewRole(c.Context(), db.Writer, ws, name, grants)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), r.ID)
			return nil
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
