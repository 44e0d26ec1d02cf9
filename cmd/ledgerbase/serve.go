package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/openapi"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

func serveCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the /v1 API, the admin UI and metrics",
		Args:  cobra.NoArgs,
		RunE:  runServe,
	}
	c.Flags().String("addr", "127.0.0.1:8080", "address to listen on")
	c.Flags().Bool("demo", false, "on an empty database, create a demo workspace with data and print a key")
	return c
}

func runServe(c *cobra.Command, _ []string) error {
	addr, _ := c.Flags().GetString("addr")
	withDemo, _ := c.Flags().GetBool("demo")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db, err := openDB(c)
	if err != nil {
		return err
	}
	defer db.Close()
	var banner string
	if withDemo {
		if banner, err = demoWorkspace(c.Context(), db, addr); err != nil {
			return err
		}
	}
	srv, err := api.New(db, api.Config{Logger: log})
	if err != nil {
		return err
	}
	if err := openapi.Register(srv); err != nil {
		return err
	}
	app := srv.Finish()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Info("ledgerbase listening", "addr", "http://"+ln.Addr().String(), "database", databaseURL(c))
	if banner != "" {
		fmt.Fprint(c.OutOrStdout(), banner)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	return app.ShutdownWithTimeout(20 * time.Second)
}

// demoInvoices is the size of `serve --demo`'s data: enough for several
// pages of every list, small enough to load in a blink.
const demoInvoices = 500

// demoWorkspace seeds a business workspace with commerce on when the
// database has none, and mints a key for it on every start (secrets are
// never stored, so an old one cannot be shown again).
func demoWorkspace(ctx context.Context, db *database.DB, addr string) (string, error) {
	ws, err := db.Ent.Workspace.Query().Order(ent.Asc(workspace.FieldCreatedAt)).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return "", err
	}
	if ws == nil {
		ws, err = access.NewWorkspace(ctx, db.Ent, "Demo Company", "business", true, true)
		if err != nil {
			return "", err
		}
		if err := demo.Seed(ctx, db, ws.ID, demo.Options{Invoices: demoInvoices, Seed: 1}); err != nil {
			return "", fmt.Errorf("demo data: %w", err)
		}
	}
	secret, _, err := access.NewKey(ctx, db.Ent, access.KeySpec{WorkspaceID: ws.ID, Name: "demo", Role: access.RoleAdmin})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`
Ledgerbase demo is ready: workspace %q (%s), business plan, commerce on.

  export KEY=%s
  curl -H "Authorization: Bearer $KEY" http://%s/v1/invoices

`, ws.Name, ws.ID, secret, addr), nil
}
