package market

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// TestEndpoint sends a synthetic request, marked X-Crtx-Test, to a
// creator's endpoint and reports whether it answers in the protocol's shape
// with a signature by key, and, for a metered listing (metered), with its
// usage signed. It moves no money and writes nothing.
func (m *Listings) TestEndpoint(ctx context.Context, wallet, endpoint, key string, timeoutSeconds int, metered bool, example crtx.Example) crtx.TestReport {
	rep := crtx.TestReport{Problems: []string{}}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	pub, err := crtx.ParseAddress("signing_public_key", key)
	if err != nil {
		problem("%s", crtx.ErrorMessage(err))
	}
	if err := m.cfg.Caller.CheckURL(ctx, "endpoint_url", endpoint); err != nil {
		problem("%s", crtx.ErrorMessage(err))
		return rep
	}
	return m.probe(ctx, wallet, "", endpoint, key, pub, timeoutSeconds, metered, example, rep)
}

// probe is TestEndpoint after the URL check. The request is a test on
// mainnet, signed for agentID ("" for a listing not yet written and for the
// Test Execution tool) and key: an agent's service refuses one meant for
// another key, so a listing cannot borrow someone else's service through a
// proxy that relays the test.
func (m *core) probe(ctx context.Context, wallet, agentID, endpoint, key string, pub ed25519.PublicKey, timeoutSeconds int, metered bool, example crtx.Example, rep crtx.TestReport) crtx.TestReport {
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "crtx reachability test", Parameters: json.RawMessage(`{}`),
		UserPubkey: wallet, TimeoutSeconds: timeoutSeconds}
	// A listing with an example is tested with it: what its page shows
	// as working has worked.
	if example.Task != "" {
		req.Task, rep.Example = example.Task, example.Task
		if len(example.Parameters) > 0 {
			req.Parameters = example.Parameters
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutSeconds)*time.Second)
	defer cancel()
	start := time.Now()
	reply, ex, err := m.cfg.Caller.Trace(cctx, endpoint, crtx.RequestScope{AgentID: agentID, SigningKey: key, Environment: crtx.Mainnet, Test: true}, req)
	rep.LatencyMS = time.Since(start).Milliseconds()
	if ex.Request != "" {
		rep.Exchange = &ex
	}
	if err != nil {
		var ce *crtx.CallError
		if !errors.As(err, &ce) {
			m.cfg.Logger.Error("reachability test", "err", err)
			problem("the test request could not be sent")
			return rep
		}
		if ce.Code == crtx.CodeInvalidAgentResponse {
			rep.Reachable = true // something answered, just not a reply
		}
		// The detail (a dial error, the resolved address) stays in the log.
		m.cfg.Logger.Info("reachability test", "err", err)
		problem("%s", ce.Message)
		return rep
	}
	rep.Reachable = true
	rep.Status = reply.Status
	if pub == nil {
		return rep
	}
	err = crtx.CheckReply(req, reply, pub)
	if err == nil && metered && reply.Status == "completed" {
		// A metered listing's calls are charged from the usage it signs:
		// one that does not sign it would fail every call.
		var up *crtx.ReplyProblem
		if errors.As(crtx.CheckUsage(reply, pub), &up) {
			err = &crtx.ReplyProblem{Kind: up.Kind, Message: "for a metered listing (docs/creators.md, \"Metered listings\"), " + up.Message}
		}
	}
	var rp *crtx.ReplyProblem
	switch {
	case err == nil:
		rep.ShapeOK = true
		rep.SignatureOK = reply.Status == "completed"
		if reply.Status == "failed" && example.Task != "" {
			problem("the endpoint answered failed to the example, which must work as shown (%s)", *reply.Error)
		} else if reply.Status == "failed" {
			problem("the endpoint answered failed (%s), so there was no signature to check", *reply.Error)
		}
	case errors.As(err, &rp) && rp.Kind == crtx.CodeInvalidSignature:
		rep.ShapeOK = true
		problem("%s", rp.Message)
	default:
		problem("%v", err)
	}
	return rep
}
