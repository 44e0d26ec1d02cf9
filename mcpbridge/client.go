package mcpbridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls /v1 with one bearer key, like any integrator's code. The key
// goes only into the Authorization header: never into errors or logs.
type Client struct {
	base    string
	key     string
	http    *http.Client
	retries int
	maxWait time.Duration
	ua      string
	log     *slog.Logger
}

// APIError is an error answer of /v1, kept whole so an assistant can act on
// its code and quote its request id.
type APIError struct {
	Status     int    `json:"status,omitempty"` // 0: the bridge's own error, no answer from Ledgerbase
	Code       string `json:"code"`
	Message    string `json:"message"`
	RequestID  string `json:"request_id,omitempty"`
	Param      string `json:"param,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
}

func (e *APIError) Error() string {
	s := e.Code + ": " + e.Message
	if e.Status != 0 {
		s = fmt.Sprintf("Ledgerbase answered %d %s", e.Status, s)
	}
	if e.Param != "" {
		s += " (param " + e.Param + ")"
	}
	if e.RequestID != "" {
		s += " [request_id " + e.RequestID + "]"
	}
	return s
}

// maxBody bounds what the bridge reads of one answer (a page of 100
// products with their variants stays far below it).
const maxBody = 32 << 20

// Do sends one request and returns the body of a 2xx answer, an *APIError,
// or an error saying the server could not be reached. A 429 is retried after
// its Retry-After, at most c.retries times and only while the wait is at
// most c.maxWait; a POST carries one Idempotency-Key across those retries.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body any) ([]byte, error) {
	b, _, err := c.do(ctx, method, path, query, body, "application/json")
	return b, err
}

// PDF gets a document's PDF (GET /v1/invoices/{id}/pdf) and the file name
// the server gives it.
func (c *Client) PDF(ctx context.Context, path string, query url.Values) (pdf []byte, filename string, err error) {
	b, h, err := c.do(ctx, http.MethodGet, path, query, nil, "application/pdf")
	if err != nil {
		return nil, "", err
	}
	if _, params, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil {
		filename = params["filename"]
	}
	return b, filename, nil
}

// do is Do accepting a media type, answering the headers too.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, accept string) ([]byte, http.Header, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, nil, err
		}
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	idem := ""
	if method == http.MethodPost {
		idem = randomKey()
	}
	for attempt := 0; ; attempt++ {
		out, h, err := c.once(ctx, method, u, raw, idem, accept)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || attempt >= c.retries {
			return out, h, err
		}
		wait := backoff(ae.RetryAfter, attempt)
		if wait > c.maxWait {
			return nil, nil, err
		}
		c.log.Info("rate limited; retrying", "method", method, "path", path, "retry_in", wait.String(),
			"attempt", attempt+1, "of", c.retries, "request_id", ae.RequestID)
		select {
		case <-ctx.Done():
			return nil, nil, err
		case <-time.After(wait):
		}
	}
}

// backoff honours the server's Retry-After; without one it doubles from 1s.
func backoff(retryAfter, attempt int) time.Duration {
	if retryAfter > 0 {
		return time.Duration(retryAfter) * time.Second
	}
	return time.Second << attempt
}

func (c *Client) once(ctx context.Context, method, u string, raw []byte, idem, accept string) ([]byte, http.Header, error) {
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", c.ua)
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	start := time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.unreachable(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, nil, c.unreachable(err)
	}
	c.log.Debug("api call", "method", method, "path", req.URL.Path, "status", res.StatusCode,
		"request_id", res.Header.Get("X-Request-Id"), "ms", time.Since(start).Milliseconds())
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return b, res.Header, nil
	}
	return nil, nil, apiError(res, b)
}

// apiError reads the /v1 error body; anything else (a proxy's HTML page)
// still becomes an APIError naming the status.
func apiError(res *http.Response, b []byte) *APIError {
	var env struct {
		Error *APIError `json:"error"`
	}
	e := &APIError{}
	if json.Unmarshal(b, &env) == nil && env.Error != nil && env.Error.Code != "" {
		e = env.Error
	} else {
		e.Code = "unexpected_response"
		e.Message = fmt.Sprintf("the server answered %s without a Ledgerbase error body: %.200s", res.Status, strings.TrimSpace(string(b)))
	}
	e.Status = res.StatusCode
	if e.RequestID == "" {
		e.RequestID = res.Header.Get("X-Request-Id")
	}
	e.RetryAfter, _ = strconv.Atoi(res.Header.Get("Retry-After"))
	return e
}

// unreachable explains a transport failure without echoing anything secret
// (url.Error carries the URL, which never holds the key).
func (c *Client) unreachable(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the Ledgerbase server at %s did not answer within %s; it may be down or overloaded", c.base, c.http.Timeout)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("the call to Ledgerbase was cancelled")
	}
	return fmt.Errorf("cannot reach Ledgerbase at %s (is it running, and is LEDGERBASE_URL right?): %v", c.base, rootCause(err))
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func randomKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}
