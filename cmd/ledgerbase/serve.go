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
	"github.com/ledgerbase/ledgerbase/web"
	"github.com/ledgerbase/ledgerbase/web/session"
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
	srv.Mount(web.New(srv).Mount)
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
	usageDone := make(chan struct{})
	go func() { srv.Usage.Run(ctx, time.Minute); close(usageDone) }()
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		stop()
		<-usageDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	err = app.ShutdownWithTimeout(20 * time.Second)
	<-usageDone // the last traffic counts are written before the database closes
	return err
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
	login, err := demoAdmin(ctx, db)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`
Ledgerbase demo is ready: workspace %q (%s), business plan, commerce on.

  export KEY=%s
  curl -H "Authorization: Bearer $KEY" http://%s/v1/invoices

Admin UI: http://%s/admin/  %s

`, ws.Name, ws.ID, secret, addr, addr, login), nil
}

// demoAdmin creates admin@example.com with a random password when no admin
// exists, and says how to sign in.
func demoAdmin(ctx context.Context, db *database.DB) (string, error) {
	exists, err := session.AnyAdmin(ctx, db.Ent)
	if err != nil || exists {
		return "(sign in with your admin account)", err
	}
	password := session.Token()[:20]
	if _, err := session.CreateAdmin(ctx, db.Ent, "admin@example.com", password); err != nil {
		return "", err
	}
	return "email admin@example.com, password " + password, nil
}
