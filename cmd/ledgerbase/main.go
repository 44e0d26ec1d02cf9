// Command ledgerbase is the appliance: it serves the /v1 API, the admin UI
// and metrics, and administers workspaces, keys and roles from the shell.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

func main() {
	if err := root().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbase:", err)
		os.Exit(1)
	}
}

func root() *cobra.Command {
	c := &cobra.Command{
		Use:           "ledgerbase",
		Short:         "Ledgerbase keeps a workspace's business records and serves them over /v1",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	c.PersistentFlags().String("database-url", "", "sqlite:PATH or postgres://... (env LEDGERBASE_DATABASE_URL; default "+database.DefaultURL+")")
	c.PersistentFlags().String("config", "", "YAML configuration file (env LEDGERBASE_CONFIG); see configs/ledgerbase.yaml")
	c.AddCommand(serveCmd(), migrateCmd(), workspaceCmd(), keyCmd(), roleCmd(), demoCmd(), adminCmd(), backupCmd(), healthcheckCmd())
	return c
}

// searches are the search indexes the declarations ask for.
func searches() shortcut.Searches { return records.Searches(resource.All) }

// openDB opens and migrates the database the settings name: --database-url,
// else LEDGERBASE_DATABASE_URL, else the --config file's database.url.
func openDB(c *cobra.Command) (*database.DB, error) {
	cfg, err := loadConfig(c.Flags(), os.Environ())
	if err != nil {
		return nil, err
	}
	return openMigrated(context.Background(), cfg.Database.URL, cfg.databaseOptions())
}

// openMigrated opens the database at url and brings its schema up to date.
func openMigrated(ctx context.Context, url string, o database.Options) (*database.DB, error) {
	db, err := database.Open(ctx, url, o)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, searches()); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the database schema",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			db, err := openDB(c)
			if err != nil {
				return err
			}
			defer db.Close()
			fmt.Fprintln(c.ErrOrStderr(), "database is up to date")
			return nil
		},
	}
}
