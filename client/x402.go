package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/siwx"
	"github.com/crtx-market/crtx/x402"
)

// Paying per call with x402 (docs/x402.md): PaymentRequired asks what a
// call costs and how to pay it, the caller builds and signs the payment's
// transaction (chain.X402Payment does, from a Solana key file), and
// ExecutePaid runs the call with it. No account or API key is needed.

// PaymentRequired asks for the x402 payment requirements of a call of
// agentID: the PAYMENT-REQUIRED header of the 402 that answers an execute
// request without a credential.
func (c *Client) PaymentRequired(ctx context.Context, agentID string, p crtx.ExecuteParams) (x402.PaymentRequired, error) {
	var pr x402.PaymentRequired
	resp, err := c.postExecute(ctx, agentID, p, nil)
	if err != nil {
		return pr, err
	}
	h := resp.Header.Get(x402.HeaderPaymentRequired)
	if resp.StatusCode != http.StatusPaymentRequired || h == "" {
		return pr, errorOf(resp)
	}
	return pr, decodeX402Header(h, &pr)
}

// ExecutePaid runs a call paid by payment (the PAYMENT-SIGNATURE header's
// PaymentPayload), as Execute does one paid by a key: the record of a
// synchronous call, or the id and status of an asynchronous one, and the
// payment's settlement (PAYMENT-RESPONSE). A refused payment is an *Error
// with code payment_invalid. A payment sent again answers the call it paid
// only to its payer: from a client that signed in with its wallet
// (SignInWithX), or with the idempotency key it first carried.
func (c *Client) ExecutePaid(ctx context.Context, agentID string, p crtx.ExecuteParams, payment x402.PaymentPayload, idempotencyKey string) (api.ExecutionRecord, x402.SettleResponse, error) {
	var rec api.ExecutionRecord
	var settle x402.SettleResponse
	resp, err := c.postExecute(ctx, agentID, p, c.paidHeaders(payment, idempotencyKey))
	if err != nil {
		return rec, settle, err
	}
	defer resp.Body.Close()
	if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
		if err := decodeX402Header(h, &settle); err != nil {
			return rec, settle, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return rec, settle, err
	}
	if c.onResponse != nil {
		c.onResponse(resp.StatusCode, data)
	}
	if resp.StatusCode >= 300 {
		return rec, settle, apiError(resp, data)
	}
	return rec, settle, json.Unmarshal(data, &rec)
}

// ExecutePaidStream is ExecutePaid for a streamed call (docs/streaming.md):
// each piece of the result is given to delta as the creator writes it, as
// ExecuteStream's. The payment is settled before the first piece, and its
// settlement (PAYMENT-RESPONSE) comes with the stream's headers.
func (c *Client) ExecutePaidStream(ctx context.Context, agentID string, p crtx.ExecuteParams, payment x402.PaymentPayload, idempotencyKey string, delta func(text string)) (api.ExecutionRecord, x402.SettleResponse, error) {
	var settle x402.SettleResponse
	p.Stream, p.Async = true, false
	req, err := c.executeRequest(ctx, agentID, p, c.paidHeaders(payment, idempotencyKey))
	if err != nil {
		return api.ExecutionRecord{}, settle, err
	}
	req.Header.Set("Accept", "text/event-stream")
	var herr error
	anon := *c // paid, not by the client's key: the payment would go unread
	anon.token = ""
	rec, err := anon.stream(req, 0, delta, func(resp *http.Response) {
		if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
			herr = decodeX402Header(h, &settle)
		}
	})
	if herr != nil && err == nil {
		err = herr
	}
	return rec, settle, err
}

// paidHeaders are the headers of a call paid with payment.
func (c *Client) paidHeaders(payment x402.PaymentPayload, idempotencyKey string) map[string]string {
	headers := map[string]string{x402.HeaderPaymentSignature: x402.EncodeHeader(payment)}
	if idempotencyKey != "" {
		headers["Idempotency-Key"] = idempotencyKey
	}
	if c.signInWithX != "" {
		// The payer's proof: a payment sent again answers its call.
		headers[siwx.Header] = c.signInWithX
	}
	return headers
}

// SignInWithX returns a copy of c that reads the executions key paid for
// with x402 on network: it signs a fresh sign-in-with-x challenge (a
// Sign-In-With-Solana message) and sends the proof with each request,
// for the five minutes it is valid.
func (c *Client) SignInWithX(ctx context.Context, key ed25519.PrivateKey, network string) (*Client, error) {
	ch, err := do[siwx.Extension](ctx, c, "GET", "/v1/x402/sign-in-with-x", nil)
	if err != nil {
		return nil, err
	}
	found := false
	for _, s := range ch.SupportedChains {
		found = found || s.ChainID == network
	}
	if !found {
		return nil, fmt.Errorf("crtx: the marketplace signs in no wallet of network %s", network)
	}
	p := siwx.Payload{Info: ch.Info, Address: crtx.Address(key.Public().(ed25519.PublicKey)), ChainID: network,
		Type: "ed25519", SignatureScheme: "siws"}
	p.Signature = crtx.SignBase58(key, []byte(p.Message()))
	cp := *c
	cp.token, cp.signInWithX = "", x402.EncodeHeader(p)
	return &cp, nil
}

// postExecute POSTs an execute request without the client's token.
func (c *Client) postExecute(ctx context.Context, agentID string, p crtx.ExecuteParams, headers map[string]string) (*http.Response, error) {
	req, err := c.executeRequest(ctx, agentID, p, headers)
	if err != nil {
		return nil, err
	}
	return c.http.Do(req)
}

// executeRequest is an execute request without the client's token.
func (c *Client) executeRequest(ctx context.Context, agentID string, p crtx.ExecuteParams, headers map[string]string) (*http.Request, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/agents/"+url.PathEscape(agentID)+"/execute", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// errorOf reads an error answer into an *Error.
func errorOf(resp *http.Response) error {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return apiError(resp, data)
}

// decodeX402Header reads a base64 JSON x402 header into v.
func decodeX402Header(h string, v any) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h))
	if err != nil {
		return fmt.Errorf("crtx: an x402 header that is not base64: %w", err)
	}
	return json.Unmarshal(b, v)
}
