// Command ledgerbase-mcp is the MCP bridge an integrator runs next to an AI
// assistant: MCP tools over the Ledgerbase /v1 API, called with one API key.
// It speaks stdio by default and streamable HTTP with --http.
package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbase/ledgerbase/mcpbridge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := root().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbase-mcp:", err)
		os.Exit(1)
	}
}

func root() *cobra.Command {
	c := &cobra.Command{
		Use:   "ledgerbase-mcp",
		Short: "MCP tools over the Ledgerbase /v1 API, for AI assistants",
		Long: `ledgerbase-mcp offers the records of one Ledgerbase workspace as MCP tools.
It reads LEDGERBASE_URL and LEDGERBASE_API_KEY from the environment (flags
override the URL; the key is best kept in the environment), asks /v1/me what
the key's workspace can reach, and offers only those tools.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          run,
	}
	f := c.Flags()
	f.String("url", "", "Ledgerbase base URL, e.g. http://127.0.0.1:8080 (env LEDGERBASE_URL)")
	f.String("api-key", "", "API key (env LEDGERBASE_API_KEY; prefer the environment: flags show in process lists)")
	f.String("http", "", "serve streamable HTTP on this address instead of stdio; a bare port or :port listens on 127.0.0.1 only (e.g. 8090), 0.0.0.0:8090 on every interface")
	f.StringSlice("allowed-origins", nil, "browser origins allowed to call the HTTP transport besides this machine's (scheme://host[:port], comma-separated); any other Origin is refused with 403")
	f.Bool("read-only", false, "offer only reading tools")
	f.StringSlice("toolsets", nil, "offer only these toolsets: "+strings.Join(mcpbridge.Toolsets(), ","))
	f.Duration("timeout", 30*time.Second, "time limit of each call to Ledgerbase")
	f.Int("retries", 3, "how many times a rate-limited (429) call is retried")
	f.Duration("max-retry-wait", 30*time.Second, "longest Retry-After the bridge waits for; a longer one is reported to the assistant")
	f.Bool("verbose", false, "log every API call (method, path, status, request id) to stderr")
	return c
}

func run(c *cobra.Command, _ []string) error {
	f := c.Flags()
	url, _ := f.GetString("url")
	url = cmp.Or(url, os.Getenv("LEDGERBASE_URL"))
	key, _ := f.GetString("api-key")
	key = cmp.Or(key, os.Getenv("LEDGERBASE_API_KEY"))
	addr, _ := f.GetString("http")
	readOnly, _ := f.GetBool("read-only")
	toolsets, _ := f.GetStringSlice("toolsets")
	timeout, _ := f.GetDuration("timeout")
	retries, _ := f.GetInt("retries")
	maxWait, _ := f.GetDuration("max-retry-wait")
	verbose, _ := f.GetBool("verbose")
	origins, _ := f.GetStringSlice("allowed-origins")

	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	// stdout carries the stdio protocol: logs go to stderr only.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := mcpbridge.New(ctx, mcpbridge.Config{
		URL: url, APIKey: key, ReadOnly: readOnly, Toolsets: toolsets,
		Timeout: timeout, Retries: retries, MaxRetryWait: maxWait,
		Version: version, Logger: log, AllowedOrigins: origins,
	})
	if err != nil {
		return err
	}
	if addr == "" {
		return b.ServeStdio(ctx, os.Stdin, os.Stdout)
	}
	ln, err := net.Listen("tcp", mcpbridge.ListenAddr(addr))
	if err != nil {
		return err
	}
	if !loopback(ln.Addr()) {
		log.Warn("the MCP endpoint is reachable beyond this machine and acts with the bridge's API key; put it behind an authenticating proxy")
	}
	return b.ServeHTTP(ctx, ln)
}

func loopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
