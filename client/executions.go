package client

import (
	"bufio"
	"bytes"
	"context"
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

// ExecuteOptions are the headers of an execute request and its retries.
type ExecuteOptions struct {
	// IdempotencyKey makes a retry answer the first response again.
	IdempotencyKey string
	// Retries is how many times to send the request again when no answer
	// came (a network error, or a load balancer's 502 or 504 that is not
	// the marketplace's own error: the replica went away mid-request), the
	// marketplace was unavailable (503), or the first attempt is still in
	// flight (409 idempotency_in_progress). Every
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
	gateway := (e.Status == http.StatusBadGateway || e.Status == http.StatusGatewayTimeout) && e.Code == "unexpected_response"
	return gateway || e.Status == http.StatusServiceUnavailable || e.Code == "idempotency_in_progress"
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
	return do[api.ExecutionRecord](ctx, c, "GET", "/v1/executions/"+url.PathEscape(id), nil)
}

// Executions lists the key's executions; q holds limit, offset, status,
// agent_id, from and to.
func (c *Client) Executions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	path := withQuery("/v1/executions", q)
	return do[api.ExecutionPage](ctx, c, "GET", path, nil)
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

// Cancel cancels a pending execution that was not dispatched yet.
func (c *Client) Cancel(ctx context.Context, id string) (api.ExecutionRecord, error) {
	return do[api.ExecutionRecord](ctx, c, "POST", "/v1/executions/"+url.PathEscape(id)+"/cancel", nil)
}

// Events follows an execution's Server-Sent Events, calling fn with the
// record at each status change, until the final one.
func (c *Client) Events(ctx context.Context, id string, fn func(api.ExecutionRecord)) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/executions/"+url.PathEscape(id)+"/events", nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.DoRequest(req, nil) // answers the error body as an *Error
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var r api.ExecutionRecord
			if err := json.Unmarshal([]byte(data), &r); err != nil {
				return err
			}
			fn(r)
		}
	}
	return sc.Err()
}
