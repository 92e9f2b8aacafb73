package client

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Cancel cancels a pending execution that was not dispatched yet.
func (c *Client) Cancel(ctx context.Context, id string) (api.ExecutionRecord, error) {
	var out api.ExecutionRecord
	err := c.call(ctx, "POST", "/v1/executions/"+url.PathEscape(id)+"/cancel", nil, &out)
	return out, err
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

// OpenDispute disputes a completed execution (API key of the paying wallet).
func (c *Client) OpenDispute(ctx context.Context, executionID string, p crtx.DisputeParams) (api.DisputeInfo, error) {
	var out api.DisputeInfo
	err := c.call(ctx, "POST", "/v1/executions/"+url.PathEscape(executionID)+"/disputes", p, &out)
	return out, err
}

// CreatorDisputes lists disputes about the creator's agents (creator session).
func (c *Client) CreatorDisputes(ctx context.Context) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	err := c.call(ctx, "GET", "/v1/creator/disputes", nil, &out)
	return out.Disputes, err
}

// RespondToDispute records the creator's answer (creator session).
func (c *Client) RespondToDispute(ctx context.Context, id, text string) (api.DisputeInfo, error) {
	var out api.DisputeInfo
	err := c.call(ctx, "POST", "/v1/creator/disputes/"+url.PathEscape(id)+"/response", map[string]string{"text": text}, &out)
	return out, err
}

// AdminDisputes lists disputes with a status ("" for all) (admin token).
func (c *Client) AdminDisputes(ctx context.Context, status string) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	path := "/v1/admin/disputes"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out.Disputes, err
}

// ResolveDispute applies the operator's ruling (admin token).
func (c *Client) ResolveDispute(ctx context.Context, id string, p crtx.ResolveParams) (api.DisputeInfo, error) {
	var out api.DisputeInfo
	err := c.call(ctx, "POST", "/v1/admin/disputes/"+url.PathEscape(id)+"/resolve", p, &out)
	return out, err
}

// SetVerified sets or clears a creator's badge (admin token).
func (c *Client) SetVerified(ctx context.Context, wallet string, verified bool) (api.CreatorProfile, error) {
	var out api.CreatorProfile
	action := map[bool]string{true: "verify", false: "unverify"}[verified]
	err := c.call(ctx, "POST", "/v1/admin/creators/"+url.PathEscape(wallet)+"/"+action, nil, &out)
	return out, err
}

// Suspend suspends an agent or lifts its suspension (admin token).
func (c *Client) Suspend(ctx context.Context, agentID string, suspended bool) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	action := map[bool]string{true: "suspend", false: "unsuspend"}[suspended]
	err := c.call(ctx, "POST", "/v1/admin/agents/"+url.PathEscape(agentID)+"/"+action, nil, &out)
	return out, err
}
