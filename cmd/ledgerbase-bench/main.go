// Command ledgerbase-bench measures a ledgerbase binary under load (see
// benchCmd). It is apart from the appliance so that the production binary
// carries no load generator, HTTP client or lab switch.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := benchCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbase-bench:", err)
		os.Exit(1)
	}
}
