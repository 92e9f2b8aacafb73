package client

import (
	"context"

	"github.com/crtx-market/crtx/verify"
)

// A verification's report, its checks and how far it reached past the
// execution's block are the verify package's: the MCP server's
// verify_execution answers the same report.
type (
	VerifyReport = verify.Report
	Check        = verify.Check
	AnchorStatus = verify.AnchorStatus
)

// How far a verification reached past the execution's block
// (VerifyReport.Anchor).
const (
	Anchored         = verify.Anchored
	NotAnchoredYet   = verify.NotAnchoredYet
	AnchorNotChecked = verify.AnchorNotChecked
)

// MemoProgram is the SPL Memo program (v2) whose instruction data an
// anchor is; MainnetGenesisHash is Solana mainnet's genesis hash, the
// cluster every anchor of a mainnet ledger must be on.
const (
	MemoProgram        = verify.MemoProgram
	MainnetGenesisHash = verify.MainnetGenesisHash
)

// DefaultSolanaRPC is the public JSON-RPC endpoint of a cluster, used when
// no RPC URL is given (WithSolanaRPC). A "custom" cluster has none.
func DefaultSolanaRPC(cluster string) string { return verify.DefaultSolanaRPC(cluster) }

// WithSolanaRPC returns a copy of c that reads anchors from the Solana
// JSON-RPC endpoint at rpcURL rather than the public endpoint of the
// anchor's cluster; a marketplace on a "custom" cluster (a local validator)
// needs it.
func (c *Client) WithSolanaRPC(rpcURL string) *Client {
	cp := *c
	cp.solanaRPC = rpcURL
	return &cp
}

// Verify checks an execution from the marketplace's public reads, as
// docs/verify.md does (verify.Verifier.Run says each check); anchors are
// read from Solana with c's HTTP client.
func (c *Client) Verify(ctx context.Context, id string) (VerifyReport, error) {
	return verify.Verifier{Reads: c, Code: Code, Solana: c.http, SolanaRPC: c.solanaRPC}.Run(ctx, id)
}
