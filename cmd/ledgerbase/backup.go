package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"entgo.io/ent/dialect"
	_ "github.com/mattn/go-sqlite3" // "sqlite3", to check the copy
	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

func backupCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "backup",
		Short: "Copy a live SQLite database, consistently, to --out (PostgreSQL: use pg_dump)",
		Long: `Copy the SQLite database to --out while the server keeps running. The copy
is one consistent snapshot (VACUUM INTO inside a read transaction): every
record committed before the backup started is in it, no half-written one is.
Restore by stopping the server and putting the copy in place of the database
file (see the README). PostgreSQL is backed up with its own tools (pg_dump).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig(c.Flags(), os.Environ())
			if err != nil {
				return err
			}
			out, _ := c.Flags().GetString("out")
			size, err := backup(c.Context(), cfg.Database.URL, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "backup written to %s (%d bytes)\n", out, size)
			return nil
		},
	}
	c.Flags().String("out", "", "file to write the copy to; it must not exist (required)")
	_ = c.MarkFlagRequired("out")
	return c
}

// errPostgresBackup points PostgreSQL users at the tool made for it.
var errPostgresBackup = errors.New(`the database is PostgreSQL: back it up with pg_dump, e.g.
  pg_dump --format=custom --file=ledgerbase.dump "$LEDGERBASE_DATABASE_URL"
and restore with pg_restore (see the README, "Backup and restore")`)

// backup copies the SQLite database at url to out and returns the copy's size.
func backup(ctx context.Context, url, out string) (int64, error) {
	if out == "" {
		return 0, errors.New("backup: --out is required")
	}
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return 0, errPostgresBackup
	}
	// Opening a missing SQLite file would create an empty database and
	// "back up" nothing.
	src := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "sqlite:")
	if _, err := os.Stat(src); err != nil {
		return 0, fmt.Errorf("backup: database %s: %w", src, err)
	}
	if _, err := os.Stat(out); err == nil {
		return 0, fmt.Errorf("backup: %s already exists; choose a new file", out)
	}
	// No migration: a backup must not change what it copies.
	db, err := database.Open(ctx, url, database.Options{MaxOpenConns: 1})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if db.Dialect != dialect.SQLite {
		return 0, errPostgresBackup
	}
	// Write beside the target and rename when complete, so a crash never
	// leaves a truncated file under the backup's name.
	partial := out + ".partial"
	os.Remove(partial)
	// VACUUM INTO copies a snapshot while the server keeps writing. It runs
	// on the writer connection because the read pool is query_only, which
	// forbids VACUUM; it takes no write lock on the source.
	if _, err := db.WritePool.ExecContext(ctx, "VACUUM INTO ?", partial); err != nil {
		os.Remove(partial)
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := checkCopy(ctx, partial); err != nil {
		os.Remove(partial)
		return 0, err
	}
	// Backups hold every record: readable by their owner only.
	if err := os.Chmod(partial, 0o600); err != nil {
		return 0, err
	}
	if err := os.Rename(partial, out); err != nil {
		os.Remove(partial)
		return 0, err
	}
	st, err := os.Stat(out)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// checkCopy opens the copy read-only and runs SQLite's quick_check on it.
func checkCopy(ctx context.Context, path string) error {
	c, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer c.Close()
	var res string
	if err := c.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Errorf("backup: check the copy: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("backup: the copy fails SQLite's check: %s", res)
	}
	return nil
}
