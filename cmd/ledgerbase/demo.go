package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/ent/demo"
)

func demoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Fill a workspace with realistic demo records",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ws, _ := c.Flags().GetString("workspace")
			n, _ := c.Flags().GetInt("records")
			if n < 1 {
				return fmt.Errorf("--records must be 1 or more")
			}
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Ent.Workspace.Get(c.Context(), ws); err != nil {
				return fmt.Errorf("workspace %s: %w", ws, err)
			}
			return demo.Seed(c.Context(), db, ws, demo.Options{Invoices: n})
		},
	}
	c.Flags().String("workspace", "", "workspace id (required)")
	c.Flags().Int("records", 50, "number of invoices; every other resource in proportion")
	_ = c.MarkFlagRequired("workspace")
	return c
}
