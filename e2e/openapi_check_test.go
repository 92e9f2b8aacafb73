package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// router loads openapi.json the way any client of it would.
func router() (routers.Router, error) {
	specOnce.Do(func() {
		b, err := os.ReadFile("../http/openapi.json")
		if err != nil {
			specErr = err
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(b)
		if err != nil {
			specErr = err
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			specErr = fmt.Errorf("openapi.json is not a valid document: %w", err)
			return
		}
		doc.Servers = nil // match paths on any host
		// HTML pages are checked for their status and media type only.
		openapi3filter.RegisterBodyDecoder("text/html", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(r)
			return string(b), err
		})
		specRouter, specErr = legacy.NewRouter(doc)
	})
	return specRouter, specErr
}

// checking is an http.RoundTripper that validates every response from the
// marketplace against /v1/openapi.json with kin-openapi's response
// validator, so the document cannot drift from the server. A response the
// document does not describe fails the test that received it.
type checking struct {
	t    *testing.T
	base string
}

func (c checking) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	// A stream is read as it comes, by the caller: not here, whole.
	if err != nil || !strings.HasPrefix(req.URL.String(), c.base) || resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp, err
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil
	}
	r, err := router()
	if err != nil {
		c.t.Errorf("openapi.json: %v", err)
		return resp, nil
	}
	route, params, err := r.FindRoute(req)
	if err != nil {
		return resp, nil // no such route: the 404 and 405 bodies are checked by the error tests
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		c.t.Errorf("%s %s → %d does not match openapi.json: %v\nbody: %.300s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return resp, nil
}
