package chain

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"
)

// calls counts the JSON-RPC calls a Client makes, by method: what a paid
// or rate-limited provider bills and limits.
type calls struct {
	base       http.RoundTripper
	mu         sync.Mutex
	by, failed map[string]uint64
}

func newCalls() *calls {
	return &calls{base: http.DefaultTransport, by: map[string]uint64{}, failed: map[string]uint64{}}
}

// client is the HTTP client of the JSON-RPC client, counting its calls.
func (c *calls) client() *http.Client {
	return &http.Client{Transport: c, Timeout: 2 * time.Minute}
}

func (c *calls) RoundTrip(r *http.Request) (*http.Response, error) {
	method := "unknown"
	if r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			var call struct {
				Method string `json:"method"`
			}
			if b, err := io.ReadAll(io.LimitReader(body, 1<<20)); err == nil && json.Unmarshal(b, &call) == nil && call.Method != "" {
				method = call.Method
			}
			body.Close()
		}
	}
	c.mu.Lock()
	c.by[method]++
	c.mu.Unlock()
	resp, err := c.base.RoundTrip(r)
	if (err != nil && !errors.Is(r.Context().Err(), context.Canceled)) || (err == nil && resp.StatusCode >= 400) {
		// An error inside a JSON-RPC answer is the chain's word on a
		// request (an expired blockhash), not the provider failing; nor
		// is a call this process cancelled (stopping, a poll given up). One
		// that ran out of time is: a provider that hangs.
		c.mu.Lock()
		c.failed[method]++
		c.mu.Unlock()
	}
	return resp, err
}

// RPCCalls is how many JSON-RPC calls the client made, by method, and how
// many got no answer or an HTTP error.
func (c *Client) RPCCalls() (calls, failed map[string]uint64) {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return maps.Clone(c.calls.by), maps.Clone(c.calls.failed)
}
