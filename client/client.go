// Package client is the Go SDK of the crtx REST interface: typed requests and
// responses, and typed errors that carry the error code.
package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/siwx"
)

// Client talks to one crtx marketplace with one credential.
type Client struct {
	base       string
	token      string
	http       *http.Client
	onResponse func(status int, body []byte)
	// wallet is the key SignIn signed in with, kept to sign listing
	// statements (SignListing); nil for any other credential.
	wallet ed25519.PrivateKey
	// agentKeys are agent signing keys, kept to sign their own listing
	// statements (WithAgentKey).
	agentKeys []ed25519.PrivateKey
	// solanaRPC is the Solana JSON-RPC URL that Verify reads anchors
	// from; empty, the public endpoint of the anchor's cluster.
	solanaRPC string
	// signInWithX is the SIGN-IN-WITH-X proof sent without a token
	// (SignInWithX).
	signInWithX string
}

// New returns a client for the marketplace at baseURL (for example
// "http://127.0.0.1:8080"). token is an API key, a session token, an admin
// token, or empty.
func New(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: &http.Client{Timeout: 5 * time.Minute}}
}

// WithHTTPClient returns a copy of c that sends its requests through hc.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	cp := *c
	cp.http = hc
	return &cp
}

// OnResponse returns a copy of c that hands every response body, as
// received, to fn (the crtx command prints them unchanged with --json).
func (c *Client) OnResponse(fn func(status int, body []byte)) *Client {
	cp := *c
	cp.onResponse = fn
	return &cp
}

// WithToken returns a copy of c that sends another credential. The copy
// forgets the wallet key of SignIn and the agent keys: the credential may
// be another wallet's.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token, cp.wallet, cp.agentKeys = token, nil, nil
	return &cp
}

// Token returns the credential the client sends.
func (c *Client) Token() string { return c.token }

// Error is an error answered by the marketplace.
type Error struct {
	Status      int
	Code        string
	Message     string
	ExecutionID *string
	RequestID   string
	// RetryAfter is the Retry-After header of a 429, in seconds as sent.
	RetryAfter string
	// Fields are the request fields at fault, when several were.
	Fields []api.FieldError
}

func (e *Error) Error() string {
	return fmt.Sprintf("crtx: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// Code returns the error code of err if the marketplace answered it, else "".
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Do sends a request with a raw body and content type and decodes a 2xx JSON
// answer into out (when out is not nil). Any other answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return c.DoRequest(req, out)
}

// DoRequest sends a prepared request (for headers of its own) with the
// client's credential, unless it carries an Authorization header already,
// and handles the answer as Do does.
func (c *Client) DoRequest(req *http.Request, out any) error {
	if c.token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.token == "" && c.signInWithX != "" {
		req.Header.Set(siwx.Header, c.signInWithX)
	}
	req.Header.Set("Accept", "application/json")
	method, path := req.Method, req.URL.Path
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if c.onResponse != nil {
		c.onResponse(resp.StatusCode, data)
	}
	if resp.StatusCode >= 300 {
		return apiError(resp, data)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("crtx: decode %s %s: %w", method, path, err)
	}
	return nil
}

// apiError reads an error answer (resp, its body data) into an *Error.
func apiError(resp *http.Response, data []byte) error {
	var eb api.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "unexpected_response", RequestID: resp.Header.Get("X-Request-Id"),
			Message: fmt.Sprintf("not an error body: %.200q", data)}
	}
	return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message,
		ExecutionID: eb.Error.ExecutionID, RequestID: resp.Header.Get("X-Request-Id"),
		RetryAfter: resp.Header.Get("Retry-After"), Fields: eb.Error.Fields}
}

// do sends in (when not nil) as JSON and reads the answer as a T.
func do[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.call(ctx, method, path, in, &out)
	return out, err
}

// withQuery appends q to path, when there is one.
func withQuery(path string, q url.Values) string {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	ct := ""
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
		ct = "application/json"
	}
	return c.Do(ctx, method, path, ct, body, out)
}

// WellKnown reads /.well-known/crtx.json.
func (c *Client) WellKnown(ctx context.Context) (api.WellKnown, error) {
	return do[api.WellKnown](ctx, c, "GET", "/.well-known/crtx.json", nil)
}
