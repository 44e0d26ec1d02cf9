package mcpbridge

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP over in and out (what desktop assistants launch)
// until in closes or ctx ends.
func (b *Bridge) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	s := server.NewStdioServer(b.MCP)
	s.SetErrorLogger(log.New(slogWriter{b}, "", 0))
	err := s.Listen(ctx, in, out)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type slogWriter struct{ b *Bridge }

func (w slogWriter) Write(p []byte) (int, error) {
	w.b.log.Warn(string(p))
	return len(p), nil
}

// MCPPath is where the streamable HTTP transport answers.
const MCPPath = "/mcp"

// HTTPHandler is the streamable HTTP transport on MCPPath. mcp-go refuses a
// non-localhost Host header on a loopback connection (DNS rebinding), which
// is what a bridge on 127.0.0.1 wants; we keep that protection on.
func (b *Bridge) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, server.NewStreamableHTTPServer(b.MCP,
		server.WithEndpointPath(MCPPath),
		server.WithStreamableHTTPLogger(b.log),
		server.WithHeartbeatInterval(30*time.Second),
	))
	return mux
}

// ServeHTTP serves the streamable HTTP transport on ln with plain net/http
// until ctx ends, then drains for a few seconds.
func (b *Bridge) ServeHTTP(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: b.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	b.log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+MCPPath)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
