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

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Client talks to one crtx marketplace with one credential.
type Client struct {
	base       string
	token      string
	http       *http.Client
	onResponse func(status int, body []byte)
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

// WithToken returns a copy of c that sends another credential.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
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
		var eb api.ErrorBody
		if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
			return &Error{Status: resp.StatusCode, Code: "unexpected_response", RequestID: resp.Header.Get("X-Request-Id"),
				Message: fmt.Sprintf("not an error body: %.200q", data)}
		}
		return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message,
			ExecutionID: eb.Error.ExecutionID, RequestID: resp.Header.Get("X-Request-Id"),
			RetryAfter: resp.Header.Get("Retry-After")}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("crtx: decode %s %s: %w", method, path, err)
	}
	return nil
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

// Challenge asks for a sign-in message for wallet.
func (c *Client) Challenge(ctx context.Context, wallet string) (api.ChallengeResponse, error) {
	var out api.ChallengeResponse
	err := c.call(ctx, "POST", "/v1/auth/challenge", map[string]string{"wallet": wallet}, &out)
	return out, err
}

// CreateSession exchanges a signed challenge for a session.
func (c *Client) CreateSession(ctx context.Context, wallet, message, signature string) (api.SessionResponse, error) {
	var out api.SessionResponse
	err := c.call(ctx, "POST", "/v1/auth/session",
		map[string]string{"wallet": wallet, "message": message, "signature": signature}, &out)
	return out, err
}

// SignIn runs the whole sign-in with a wallet key and returns a client that
// acts with the new session.
func (c *Client) SignIn(ctx context.Context, key ed25519.PrivateKey) (*Client, api.SessionResponse, error) {
	wallet := crtx.Address(key.Public().(ed25519.PublicKey))
	ch, err := c.Challenge(ctx, wallet)
	if err != nil {
		return nil, api.SessionResponse{}, err
	}
	s, err := c.CreateSession(ctx, wallet, ch.Message, crtx.SignBase58(key, []byte(ch.Message)))
	if err != nil {
		return nil, s, err
	}
	return c.WithToken(s.SessionToken), s, nil
}

// SignOut ends the client's session.
func (c *Client) SignOut(ctx context.Context) error {
	return c.call(ctx, "DELETE", "/v1/auth/session", nil, nil)
}

// KeyParams create an API key.
type KeyParams struct {
	Name        string           `json:"name"`
	Environment crtx.Environment `json:"environment"`
	SpendLimit  *crtx.USDC       `json:"spend_limit_usdc,omitempty"`
}

// CreateKey makes an API key (session required).
func (c *Client) CreateKey(ctx context.Context, p KeyParams) (api.CreatedKey, error) {
	var out api.CreatedKey
	err := c.call(ctx, "POST", "/v1/keys", p, &out)
	return out, err
}

// Keys lists the wallet's API keys (session required).
func (c *Client) Keys(ctx context.Context) ([]crtx.APIKey, error) {
	var out api.KeyList
	err := c.call(ctx, "GET", "/v1/keys", nil, &out)
	return out.Keys, err
}

// RevokeKey revokes an API key at once (session required).
func (c *Client) RevokeKey(ctx context.Context, id string) (crtx.APIKey, error) {
	var out crtx.APIKey
	err := c.call(ctx, "DELETE", "/v1/keys/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Wallet returns the balances of the client's wallet.
func (c *Client) Wallet(ctx context.Context) (api.WalletResponse, error) {
	var out api.WalletResponse
	err := c.call(ctx, "GET", "/v1/wallet", nil, &out)
	return out, err
}

// Airdrop credits devnet funds to wallet (no credential needed).
func (c *Client) Airdrop(ctx context.Context, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	var out api.FundingResponse
	err := c.call(ctx, "POST", "/v1/devnet/airdrop", map[string]any{"wallet": wallet, "amount_usdc": amount}, &out)
	return out, err
}

// Deposit credits funds through the admin API (admin token required).
func (c *Client) Deposit(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return c.adminFunding(ctx, "/v1/admin/deposits", env, wallet, amount)
}

// Withdraw debits funds through the admin API (admin token required).
func (c *Client) Withdraw(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return c.adminFunding(ctx, "/v1/admin/withdrawals", env, wallet, amount)
}

func (c *Client) adminFunding(ctx context.Context, path string, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	var out api.FundingResponse
	err := c.call(ctx, "POST", path, map[string]any{"environment": env, "wallet": wallet, "amount_usdc": amount}, &out)
	return out, err
}

// Account reads a ledger account and its newest transactions.
func (c *Client) Account(ctx context.Context, env crtx.Environment, address string) (api.AccountView, error) {
	var out api.AccountView
	err := c.call(ctx, "GET", "/v1/ledger/"+string(env)+"/accounts/"+url.PathEscape(address), nil, &out)
	return out, err
}

// Transaction reads a ledger transaction.
func (c *Client) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	var out crtx.LedgerTx
	err := c.call(ctx, "GET", "/v1/ledger/"+string(env)+"/transactions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Proof reads the inclusion proof of a sealed transaction.
func (c *Client) Proof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error) {
	var out crtx.Proof
	err := c.call(ctx, "GET", "/v1/ledger/"+string(env)+"/transactions/"+url.PathEscape(id)+"/proof", nil, &out)
	return out, err
}

// Block reads a sealed block and its transactions.
func (c *Client) Block(ctx context.Context, env crtx.Environment, height int64) (api.BlockView, error) {
	var out api.BlockView
	err := c.call(ctx, "GET", fmt.Sprintf("/v1/ledger/%s/blocks/%d", env, height), nil, &out)
	return out, err
}

// WellKnown reads /.well-known/crtx.json.
func (c *Client) WellKnown(ctx context.Context) (api.WellKnown, error) {
	var out api.WellKnown
	err := c.call(ctx, "GET", "/.well-known/crtx.json", nil, &out)
	return out, err
}

// VerifyTransaction fetches a transaction and its proof and checks them
// against the ledger authority key published by the marketplace.
func (c *Client) VerifyTransaction(ctx context.Context, env crtx.Environment, id string) error {
	wk, err := c.WellKnown(ctx)
	if err != nil {
		return err
	}
	authority, err := crtx.ParseAddress("ledger_authority_public_key", wk.AuthorityPublicKey)
	if err != nil {
		return err
	}
	t, err := c.Transaction(ctx, env, id)
	if err != nil {
		return err
	}
	p, err := c.Proof(ctx, env, id)
	if err != nil {
		return err
	}
	return crtx.VerifyProof(p, t, authority)
}

// Agents lists active agents; q holds the query parameters of GET /v1/agents
// (limit, offset, tags, min_success_rate, min_executions, verified_only,
// sort, q, environment).
func (c *Client) Agents(ctx context.Context, q url.Values) (api.AgentPage, error) {
	var out api.AgentPage
	path := "/v1/agents"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}

// Agent reads an agent's full listing with its statistics in env (mainnet
// when empty).
func (c *Client) Agent(ctx context.Context, id string, env crtx.Environment) (api.AgentListing, error) {
	var out api.AgentListing
	path := "/v1/agents/" + url.PathEscape(id)
	if env != "" {
		path += "?environment=" + string(env)
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}

// CreateListing lists an agent (creator session required).
func (c *Client) CreateListing(ctx context.Context, p crtx.ListingParams) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "POST", "/v1/creator/agents", p, &out)
	return out, err
}

// UpdateListing changes a listing; nil fields stay as they are.
func (c *Client) UpdateListing(ctx context.Context, id string, p crtx.ListingParams) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "PATCH", "/v1/creator/agents/"+url.PathEscape(id), p, &out)
	return out, err
}

// Delist takes an agent out of the catalog.
func (c *Client) Delist(ctx context.Context, id string) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "DELETE", "/v1/creator/agents/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CreatorAgents lists the creator's own agents, every status included.
func (c *Client) CreatorAgents(ctx context.Context) ([]api.CreatorAgent, error) {
	var out api.CreatorAgentList
	err := c.call(ctx, "GET", "/v1/creator/agents", nil, &out)
	return out.Agents, err
}

// SetDisplayName sets the creator's public name.
func (c *Client) SetDisplayName(ctx context.Context, name string) (api.CreatorProfile, error) {
	var out api.CreatorProfile
	err := c.call(ctx, "PUT", "/v1/creator/profile", map[string]string{"display_name": name}, &out)
	return out, err
}

// TestExecution runs the Test Execution tool against an endpoint.
func (c *Client) TestExecution(ctx context.Context, endpoint, publicKey string) (api.TestReport, error) {
	var out api.TestReport
	err := c.call(ctx, "POST", "/v1/creator/test-execution",
		map[string]string{"endpoint_url": endpoint, "signing_public_key": publicKey}, &out)
	return out, err
}

// ExecuteOptions are the headers of an execute request and its retries.
type ExecuteOptions struct {
	// IdempotencyKey makes a retry answer the first response again.
	IdempotencyKey string
	// Retries is how many times to send the request again when no answer
	// came (a network error), the marketplace was unavailable (503), or the
	// first attempt is still in flight (409 idempotency_in_progress). Every
	// attempt carries the same Idempotency-Key — a random one if none was
	// given — so a retry is never charged twice.
	Retries int
}

// retryable reports whether an attempt may be sent again unchanged.
func retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return true // no answer at all
	}
	return e.Status == http.StatusServiceUnavailable || e.Code == "idempotency_in_progress"
}

// Execute runs an agent. A synchronous execution answers its final record
// (an *Error carrying the execution id when it failed); an asynchronous one
// answers a record with only ExecutionID and Status ("pending") set.
func (c *Client) Execute(ctx context.Context, agentID string, p crtx.ExecuteParams, o ExecuteOptions) (api.ExecutionRecord, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return api.ExecutionRecord{}, err
	}
	if o.Retries > 0 && o.IdempotencyKey == "" {
		o.IdempotencyKey = "crtx-go-" + crtx.NewUUID()
	}
	backoff := 200 * time.Millisecond
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/agents/"+url.PathEscape(agentID)+"/execute", bytes.NewReader(body))
		if err != nil {
			return api.ExecutionRecord{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		if o.IdempotencyKey != "" {
			req.Header.Set("Idempotency-Key", o.IdempotencyKey)
		}
		var out api.ExecutionRecord
		err = c.DoRequest(req, &out)
		if err == nil || attempt >= o.Retries || !retryable(err) || ctx.Err() != nil {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(backoff):
			backoff = min(backoff*2, 5*time.Second)
		}
	}
}

// Execution reads an execution record.
func (c *Client) Execution(ctx context.Context, id string) (api.ExecutionRecord, error) {
	var out api.ExecutionRecord
	err := c.call(ctx, "GET", "/v1/executions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Executions lists the key's executions; q holds limit, offset, status,
// agent_id, from and to.
func (c *Client) Executions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	var out api.ExecutionPage
	path := "/v1/executions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}

// Wait polls an execution until it is final or ctx ends.
func (c *Client) Wait(ctx context.Context, id string, every time.Duration) (api.ExecutionRecord, error) {
	for {
		r, err := c.Execution(ctx, id)
		if err != nil || r.Status.Final() {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(every):
		}
	}
}

// Content fetches the bytes at an ipfs_url.
func (c *Client) Content(ctx context.Context, ipfsURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", ipfsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("crtx: GET %s: %s", ipfsURL, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// CreatorEarnings reads the creator's earnings in env (creator session).
func (c *Client) CreatorEarnings(ctx context.Context, env crtx.Environment) (crtx.Earnings, error) {
	var out crtx.Earnings
	err := c.call(ctx, "GET", "/v1/creator/earnings?environment="+string(env), nil, &out)
	return out, err
}

// CreatorExecutions lists executions of the creator's agents; q holds the
// filters of GET /v1/executions and environment.
func (c *Client) CreatorExecutions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	var out api.ExecutionPage
	path := "/v1/creator/executions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}
