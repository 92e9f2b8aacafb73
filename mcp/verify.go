package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/ipfs"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/verify"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// verify runs the checks the Go client's Verify runs (one copy, in the
// verify package), from the public reads made of the market for the
// caller. The checks and their verdicts are the client's; a failed read's
// words are the market's (the client adds its request id), and anchors are
// read from the cluster's public endpoint, as the client reads them.
func (s *server) verify(ctx context.Context, _ *sdk.CallToolRequest, in executionIn) (*sdk.CallToolResult, verify.Report, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, verify.Report{}, s.toolError(err)
	}
	v := verify.Verifier{Reads: reads{m: s.market, p: c.p, log: s.log}, Code: crtx.ErrorCode, Solana: &http.Client{Timeout: solanaTimeout}}
	r, err := v.Run(ctx, in.ExecutionID)
	if err != nil {
		// What the REST reads answered: the code and the words.
		var e *crtx.Error
		if errors.As(err, &e) {
			err = &crtx.Error{Code: e.Code, Message: e.Message}
		}
		return nil, r, s.toolError(err)
	}
	res := &sdk.CallToolResult{}
	if !r.OK() {
		// A failed check is the answer, not a failure of the tool: the
		// report says which.
		res.Content = []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("execution %s did NOT verify; see the checks", in.ExecutionID)}}
	}
	return res, r, nil
}

// reads are the public reads of m a verification makes, for p, answered
// as the REST interface answers them.
type reads struct {
	m   *market.Market
	p   crtx.Principal
	log *slog.Logger
}

func (r reads) Execution(ctx context.Context, id string) (api.ExecutionRecord, error) {
	e, result, err := r.m.Executions.GetExecution(ctx, r.p, id)
	if err != nil {
		return api.ExecutionRecord{}, err
	}
	return api.NewExecutionRecord(e, result, r.m.Links()), nil
}

// solanaTimeout bounds each read of a public Solana endpoint the verify
// tool makes, so that a slow cluster fails the anchor's check rather than
// holding the tool call.
const solanaTimeout = 10 * time.Second

// Content reads a result the marketplace publishes at /ipfs/{cid}, failing
// as the client's GET of it does.
func (r reads) Content(ctx context.Context, ipfsURL string) ([]byte, error) {
	fail := func(status int) error {
		return fmt.Errorf("crtx: GET %s: %d %s", ipfsURL, status, http.StatusText(status))
	}
	cid, ok := strings.CutPrefix(ipfsURL, r.m.Config().PublicURL+"/ipfs/")
	if !ok || !ipfs.ParseCID(cid) {
		return nil, fail(http.StatusNotFound)
	}
	content, err := r.m.Executions.ResultContent(ctx, cid)
	if e := (*crtx.Error)(nil); errors.As(err, &e) {
		return nil, fail(api.Status(e))
	}
	if err != nil {
		// What failed inside is the log's, not the caller's: the REST read
		// answers 500 too.
		r.log.Error("verify: read result", "cid", cid, "err", err)
		return nil, fail(http.StatusInternalServerError)
	}
	return []byte(content), nil
}

func (r reads) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	return r.m.Ledger.Transaction(ctx, env, id)
}

func (r reads) Proof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error) {
	return r.m.Ledger.Proof(ctx, env, id)
}

func (r reads) Block(ctx context.Context, env crtx.Environment, height int64) (api.BlockView, error) {
	b, err := r.m.Ledger.Block(ctx, env, height)
	if err != nil {
		return api.BlockView{}, err
	}
	return api.NewBlockView(b), nil
}

func (r reads) Reserves(ctx context.Context) (api.Reserves, error) {
	rs, err := r.m.Ledger.Reserves(ctx)
	return api.Reserves{Reserves: rs}, err
}

func (r reads) WellKnown(context.Context) (api.WellKnown, error) {
	c := r.m.Config()
	return api.NewWellKnown(r.m.SigningPublicKey(), r.m.Config().NextSigner, r.m.Config().PreviousSigner, r.m.AuthorityPublicKey(), c.PublicURL, c.FeeBps), nil
}

// Receipt is the receipt's bytes as GET /v1/executions/{id}/receipt
// serves them.
func (r reads) Receipt(ctx context.Context, id string) ([]byte, error) {
	e, err := r.m.Executions.Receipt(ctx, r.p, id)
	if err != nil {
		return nil, err
	}
	rc, err := api.NewReceipt(e, r.m.Links(), r.m.Config().Signer)
	if err != nil {
		return nil, err
	}
	return json.Marshal(rc)
}
