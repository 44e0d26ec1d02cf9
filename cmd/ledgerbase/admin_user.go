package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/web/session"
)

func adminCmd() *cobra.Command {
	c := &cobra.Command{Use: "admin", Short: "Manage admin UI accounts"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an admin account for the web UI (/admin); prints its id",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			email, _ := c.Flags().GetString("email")
			if stdin, _ := c.Flags().GetBool("password-stdin"); !stdin {
				// A password on the command line would land in shell history and ps.
				return fmt.Errorf("pass the password on standard input with --password-stdin")
			}
			line, err := bufio.NewReader(c.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return fmt.Errorf("reading the password from standard input: %w", err)
			}
			password := strings.TrimRight(line, "\r\n")
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			a, err := session.CreateAdmin(c.Context(), db.Writer, email, password)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), a.ID)
			return nil
		},
	}
	create.Flags().String("email", "", "the admin's email, used to sign in (required)")
	create.Flags().Bool("password-stdin", false, "read the password from the first line of standard input")
	_ = create.MarkFlagRequired("email")
	c.AddCommand(create)
	return c
}
