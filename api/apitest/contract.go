package apitest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/ledgerbase/ledgerbase/api/openapi"
)

// contract is the router over the served OpenAPI document.
var contract = sync.OnceValues(func() (routers.Router, error) {
	doc, _, err := openapi.Document()
	if err != nil {
		return nil, err
	}
	d := *doc
	d.Servers = nil // match paths on whatever port the test server listens
	return legacy.NewRouter(&d)
})

// checkContract holds every /v1 exchange a test makes to the OpenAPI
// document: a response must match the documented status and schema, and a
// request the document refuses must not succeed. It reports with Errorf,
// so it is safe from a test's goroutines.
func checkContract(t testing.TB, req *http.Request, reqBody []byte, res *http.Response, resBody []byte) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/v1/") || req.Method == http.MethodHead {
		return
	}
	router, err := contract()
	if err != nil {
		t.Errorf("apitest: OpenAPI document: %v", err)
		return
	}
	ctx := context.Background()
	in := req.Clone(ctx)
	in.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(in)
	if err != nil {
		// Not a documented route: the server must not serve it either.
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s is not in the OpenAPI document, yet answered %d: %s", req.Method, req.URL.Path, res.StatusCode, resBody)
		}
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	rin := &openapi3filter.RequestValidationInput{Request: in, PathParams: params, Route: route, Options: opts}
	if reqErr := openapi3filter.ValidateRequest(ctx, rin); reqErr != nil && res.StatusCode < 400 {
		t.Errorf("%s %s answered %d to a request the OpenAPI document refuses: %v", req.Method, req.URL.Path, res.StatusCode, reqErr)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: rin, Status: res.StatusCode, Header: res.Header,
		Body: io.NopCloser(bytes.NewReader(resBody)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\nbody: %.2000s", req.Method, req.URL.Path, res.StatusCode, err, resBody)
	}
}
