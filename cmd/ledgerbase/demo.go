package main

import (
	"fmt"
	"time"

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
			seed, _ := c.Flags().GetUint64("seed")
			if n < 1 {
				return fmt.Errorf("--records must be 1 or more")
			}
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Writer.Workspace.Get(c.Context(), ws); err != nil {
				return fmt.Errorf("workspace %s: %w", ws, err)
			}
			start := time.Now()
			counts, err := demo.Run(c.Context(), db, ws, demo.Options{Invoices: n, Seed: seed, Alone: true})
			if err != nil {
				return err
			}
			total := 0
			for _, k := range counts {
				total += k
			}
			fmt.Fprintf(c.ErrOrStderr(), "demo: %d invoices, %d records in all, in %s\n", n, total, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	c.Flags().String("workspace", "", "workspace id (required)")
	c.Flags().Int("records", 50, "number of invoices; every other resource in proportion")
	c.Flags().Uint64("seed", 1, "seed of the generator: the same seed gives the same records")
	_ = c.MarkFlagRequired("workspace")
	return c
}
