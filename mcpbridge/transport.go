package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
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

// HTTPHandler is the streamable HTTP transport on MCPPath, behind the
// Origin check (mcp-go's own loopback Host check stays on).
func (b *Bridge) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, server.NewStreamableHTTPServer(b.MCP,
		server.WithEndpointPath(MCPPath),
		server.WithStreamableHTTPLogger(b.log),
		server.WithHeartbeatInterval(30*time.Second),
	))
	return b.checkOrigin(mux)
}

// checkOrigin refuses (403, a JSON-RPC error) a request whose Origin is
// neither this machine nor allowed: a rebound foreign page still sends its
// own Origin, so this stops DNS rebinding. Non-browser clients send none.
func (b *Bridge) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || OriginAllowed(origin, b.allowedOrigins) {
			next.ServeHTTP(w, r)
			return
		}
		b.log.Warn("refused a request from a foreign origin", "origin", origin, "method", r.Method, "path", r.URL.Path)
		msg := fmt.Sprintf("Forbidden: Origin %q is not allowed (DNS rebinding protection); ledgerbase-mcp --allowed-origins lists the browser origins it accepts", origin)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32600, "message": msg}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(body)
	})
}

// OriginAllowed reports whether a browser page of origin may call the
// bridge: pages of this machine (localhost, 127.0.0.0/8, ::1) always, others
// when allowed lists them exactly (scheme://host[:port]) or holds "*".
func OriginAllowed(origin string, allowed []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return slices.Contains(allowed, "*")
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.IsLoopback() {
		return true
	}
	norm := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, a := range allowed {
		if a == "*" || strings.ToLower(strings.TrimSuffix(a, "/")) == norm {
			return true
		}
	}
	return false
}

// CheckOrigins validates an --allowed-origins list: each entry is "*" or
// scheme://host[:port] with no path.
func CheckOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(strings.TrimSuffix(o, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("allowed origin %q: want scheme://host[:port], e.g. https://assistant.example.com, or *", o)
		}
	}
	return nil
}

// ListenAddr is where --http listens: a bare port or ":port" means the
// loopback interface (127.0.0.1); listening beyond this machine takes an
// explicit host, e.g. 0.0.0.0:8090.
func ListenAddr(addr string) string {
	if _, err := strconv.Atoi(addr); err == nil {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
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
