package verify

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/mr-tron/base58"
)

// MemoProgram is the SPL Memo program (v2) whose instruction data an anchor
// is: the memo's bytes, nothing before them.
const MemoProgram = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"

// AnchorStatus says how far the verification of an execution reached past
// its block.
type AnchorStatus string

const (
	// Anchored: a Solana transaction signed by the ledger authority names
	// a block at or after the execution's, and the hash chain leads there.
	Anchored AnchorStatus = "anchored"
	// NotAnchoredYet: no block from the execution's on is anchored yet, or
	// the environment has no chain. It is no failure of the proof, which
	// then rests on the authority's signature alone.
	NotAnchoredYet AnchorStatus = "not_anchored_yet"
	// AnchorNotChecked: a block is anchored, on a cluster of no known
	// public endpoint (a local validator), and no RPC URL was given to read
	// it. Not a failure either: nothing was found wrong, nothing was read.
	AnchorNotChecked AnchorStatus = "not_checked"
)

// errNoRPC is checkAnchor's answer for an anchor it has no endpoint to read.
var errNoRPC = errors.New("no Solana RPC URL for the anchor's cluster")

// MainnetGenesisHash is Solana mainnet's genesis hash: the cluster every
// anchor of a mainnet ledger must be on.
const MainnetGenesisHash = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"

// DefaultSolanaRPC is the public JSON-RPC endpoint of a cluster, used when
// no RPC URL is given (Verifier.SolanaRPC). A "custom" cluster has none.
func DefaultSolanaRPC(cluster string) string {
	switch cluster {
	case "mainnet-beta":
		return "https://api.mainnet-beta.solana.com"
	case "devnet":
		return "https://api.devnet.solana.com"
	case "testnet":
		return "https://api.testnet.solana.com"
	}
	return ""
}

// maxChainWalk bounds the blocks read forward when the marketplace does not
// say (GET /v1/reserves) which block it anchored last.
const maxChainWalk = 10000

// verifyAnchor follows the hash chain from the execution's block (already
// checked) to the first anchored block at or after it, checking each block's
// link and authority signature, then the anchor's Solana transaction.
func (v Verifier) verifyAnchor(ctx context.Context, r *Report, from crtx.Block, authority ed25519.PublicKey,
	add func(name string, ok bool, format string, args ...any) bool) {
	env := from.Environment
	// The marketplace's word on its newest anchored block only bounds the
	// walk: a block is called anchored below only after its chain and its
	// memo are checked.
	last := from.Height + maxChainWalk
	if rs, err := v.Reads.Reserves(ctx); err == nil {
		last = 0
		for _, res := range rs.Reserves {
			if res.Environment == env {
				last = res.AnchoredBlock
			}
		}
		if last < from.Height {
			r.Anchor = NotAnchoredYet
			r.AnchorDetail = fmt.Sprintf("no block of %s from %d on is anchored on Solana yet", env, from.Height)
			if last == 0 {
				r.AnchorDetail = fmt.Sprintf("the %s ledger is not anchored on Solana (the marketplace reports no chain or no anchor for it)", env)
			}
			return
		}
	}
	prev := from
	for h := from.Height; h <= last; h++ {
		view, err := v.Reads.Block(ctx, env, h)
		if v.Code(err) == crtx.CodeBlockNotFound {
			r.Anchor = NotAnchoredYet
			r.AnchorDetail = fmt.Sprintf("no block of %s from %d to %d is anchored on Solana yet", env, from.Height, h-1)
			return
		}
		if err != nil {
			add("hash chain", false, "block %d: %v", h, err)
			return
		}
		b := view.Block
		var bad string
		switch {
		case b.Environment != env || b.Height != h:
			bad = fmt.Sprintf("GET block %d of %s served block %d of %s", h, env, b.Height, b.Environment)
		case h == from.Height && b.Hash != from.Hash:
			bad = fmt.Sprintf("block %d is served with hash %s, its proof with %s", h, b.Hash, from.Hash)
		case h > from.Height && b.PrevHash != prev.Hash:
			bad = fmt.Sprintf("block %d's prev_hash %s is not block %d's hash %s", h, b.PrevHash, h-1, prev.Hash)
		case b.ComputeHash().String() != b.Hash:
			bad = fmt.Sprintf("block %d does not hash to its hash", h)
		case !crtx.VerifyBase58(authority, hashBytes(b.Hash), b.Signature):
			bad = fmt.Sprintf("block %d's signature does not verify against the ledger authority key", h)
		}
		if bad != "" {
			add("hash chain", false, "%s", bad)
			return
		}
		prev = b
		if b.Anchor == nil {
			continue
		}
		if h == from.Height {
			add("hash chain", true, "block %d is anchored itself", h)
		} else {
			add("hash chain", true, "blocks %d to %d each name the one before and are signed by the ledger authority", from.Height, h)
		}
		if err := v.checkAnchor(ctx, b, authority); errors.Is(err, errNoRPC) {
			r.Anchor, r.AnchoredBlock, r.AnchoredBy = AnchorNotChecked, h, b.Anchor
			r.AnchorDetail = fmt.Sprintf("block %d is anchored by Solana transaction %s on a %q cluster, not read: %v", h, b.Anchor.Signature, b.Anchor.Cluster, err)
			return
		} else if err != nil {
			add("anchor", false, "block %d: %v", h, err)
			return
		}
		add("anchor", true, "block %d is named by the memo of Solana transaction %s (slot %d, %s), signed by the ledger authority",
			h, b.Anchor.Signature, b.Anchor.Slot, b.Anchor.Cluster)
		r.Anchor, r.AnchoredBlock, r.AnchoredBy = Anchored, h, b.Anchor
		r.AnchorDetail = fmt.Sprintf("through block %d, Solana transaction %s", h, b.Anchor.Signature)
		return
	}
	if last == from.Height+maxChainWalk {
		r.Anchor = NotAnchoredYet
		r.AnchorDetail = fmt.Sprintf("no block of %s from %d to %d is anchored on Solana", env, from.Height, last)
		return
	}
	add("hash chain", false, "the marketplace reports block %d of %s anchored, but no block from %d to it serves an anchor", last, env, from.Height)
}

// hashBytes decodes a block hash already checked to be ComputeHash's text.
func hashBytes(h string) []byte {
	b, _ := hex.DecodeString(h)
	return b
}

// errAnchor is wrapped by every way an anchor fails to hold.
var errAnchor = errors.New("the anchor does not hold")

// checkAnchor reads b's anchor transaction from the cluster and checks it:
// it succeeded, in the anchor's slot, and carries a Memo instruction whose
// data is exactly b's memo, with the ledger authority among the memo's
// signers and its signature over the message valid.
func (v Verifier) checkAnchor(ctx context.Context, b crtx.Block, authority ed25519.PublicKey) error {
	a := b.Anchor
	rpc := v.SolanaRPC
	if rpc == "" {
		rpc = DefaultSolanaRPC(a.Cluster)
	}
	if rpc == "" {
		return fmt.Errorf("%w: give it to check the anchor (crtx verify --rpc, CRTX_SOLANA_RPC)", errNoRPC)
	}
	// A mainnet ledger's anchors must be on Solana mainnet, whatever the
	// marketplace names: a memo on devnet (free, and reset from time to
	// time) or on a validator of its own proves nothing to a mainnet
	// caller. The cluster is known by its genesis hash.
	if b.Environment == crtx.Mainnet {
		var genesis string
		if err := v.solanaCall(ctx, rpc, "getGenesisHash", nil, &genesis); err != nil {
			return err
		}
		if genesis != MainnetGenesisHash {
			return fmt.Errorf("%w: a mainnet block's anchor must be on Solana mainnet (genesis %s); the cluster at %s has genesis %q", errAnchor, MainnetGenesisHash, rpc, genesis)
		}
	}
	got, err := v.solanaTransaction(ctx, rpc, a.Signature)
	if err != nil {
		return err
	}
	return checkAnchorTransaction(got, b, authority)
}

// solanaGot is what getTransaction answers about one transaction.
type solanaGot struct {
	Slot uint64
	// Err is meta.err as sent; "null" when the transaction succeeded.
	Err json.RawMessage
	Raw []byte
}

// checkAnchorTransaction checks a transaction read from the cluster
// against b's anchor and memo.
func checkAnchorTransaction(got solanaGot, b crtx.Block, authority ed25519.PublicKey) error {
	a := b.Anchor
	if e := bytes.TrimSpace(got.Err); len(e) > 0 && string(e) != "null" {
		return fmt.Errorf("%w: transaction %s failed on the chain: %s", errAnchor, a.Signature, e)
	}
	if got.Slot != a.Slot {
		return fmt.Errorf("%w: transaction %s is in slot %d, the block says %d", errAnchor, a.Signature, got.Slot, a.Slot)
	}
	tx, err := parseSolanaTransaction(got.Raw)
	if err != nil {
		return fmt.Errorf("%w: transaction %s: %w", errAnchor, a.Signature, err)
	}
	if base58.Encode(tx.Signatures[0]) != a.Signature {
		return fmt.Errorf("%w: the cluster answered another transaction (%s) for %s", errAnchor, base58.Encode(tx.Signatures[0]), a.Signature)
	}
	m := tx.Message
	i, ok := m.signer(authority)
	if !ok {
		return fmt.Errorf("%w: the ledger authority %s did not sign transaction %s", errAnchor, base58.Encode(authority), a.Signature)
	}
	if !ed25519.Verify(authority, tx.MessageBytes, tx.Signatures[i]) {
		return fmt.Errorf("%w: the ledger authority's signature in transaction %s does not verify", errAnchor, a.Signature)
	}
	memo := crtx.AnchorMemo(b)
	for _, ix := range m.Instructions {
		if base58.Encode(m.program(ix)) != MemoProgram || string(ix.Data) != memo {
			continue
		}
		for _, k := range ix.Accounts {
			if k == i {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: transaction %s has no Memo instruction %q signed by the ledger authority", errAnchor, a.Signature, memo)
}

// solanaCall calls method on the Solana JSON-RPC endpoint at rpc and
// decodes its result into result (left as it is when the result is null).
func (v Verifier) solanaCall(ctx context.Context, rpc, method string, params []any, result any) error {
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, "POST", rpc, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := v.Solana.Do(req)
	if err != nil {
		return fmt.Errorf("solana rpc %s: %w", rpc, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("solana rpc %s: %w", rpc, err)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("solana rpc %s: HTTP %d, not a JSON-RPC answer: %.200q", rpc, resp.StatusCode, data)
	}
	if out.Error != nil {
		return fmt.Errorf("solana rpc %s: %s: %d %s", rpc, method, out.Error.Code, out.Error.Message)
	}
	if len(out.Result) == 0 || string(out.Result) == "null" {
		return nil
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		return fmt.Errorf("solana rpc %s: %s: %w", rpc, method, err)
	}
	return nil
}

// solanaTransaction calls getTransaction on the Solana JSON-RPC endpoint
// at rpc, asking for the finalized transaction in base64.
func (v Verifier) solanaTransaction(ctx context.Context, rpc, signature string) (solanaGot, error) {
	var res *struct {
		Slot        uint64   `json:"slot"`
		Transaction []string `json:"transaction"`
		Meta        *struct {
			Err json.RawMessage `json:"err"`
		} `json:"meta"`
	}
	err := v.solanaCall(ctx, rpc, "getTransaction",
		[]any{signature, map[string]any{"encoding": "base64", "maxSupportedTransactionVersion": 0, "commitment": "finalized"}}, &res)
	switch {
	case err != nil:
		return solanaGot{}, err
	case res == nil:
		return solanaGot{}, fmt.Errorf("%w: transaction %s is not finalized on the cluster at %s", errAnchor, signature, rpc)
	case res.Meta == nil:
		return solanaGot{}, fmt.Errorf("solana rpc %s: transaction %s is served without its status (meta)", rpc, signature)
	case len(res.Transaction) != 2 || res.Transaction[1] != "base64":
		return solanaGot{}, fmt.Errorf("solana rpc %s: transaction %s is not served in base64", rpc, signature)
	}
	raw, err := base64.StdEncoding.DecodeString(res.Transaction[0])
	if err != nil {
		return solanaGot{}, fmt.Errorf("solana rpc %s: transaction %s: %w", rpc, signature, err)
	}
	if res.Meta.Err == nil {
		return solanaGot{}, fmt.Errorf("solana rpc %s: transaction %s is served without meta.err", rpc, signature)
	}
	return solanaGot{Slot: res.Slot, Err: res.Meta.Err, Raw: raw}, nil
}
