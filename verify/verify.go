// Package verify checks an execution as a careful caller would, trusting
// only the keys the marketplace publishes and the Solana cluster: one copy
// of the checks, which the Go client runs over the REST interface and the
// MCP server's verify_execution over the market itself.
package verify

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/ipfs"
)

// Check is one step of a verification.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is what Run found.
type Report struct {
	ExecutionID string  `json:"execution_id"`
	Checks      []Check `json:"checks"`
	// Anchor says whether the proof reached Solana: Anchored when the
	// hash chain leads from the execution's block to a block whose memo
	// the ledger authority signed on the chain (the checks "hash chain"
	// and "anchor"), NotAnchoredYet when no block from it on is anchored
	// yet, AnchorNotChecked when the anchor's cluster could not be read (no
	// RPC URL for it), empty when the verification stopped before its
	// block.
	Anchor       AnchorStatus `json:"anchor,omitempty"`
	AnchorDetail string       `json:"anchor_detail,omitempty"`
	// AnchoredBlock is the block the anchor names, AnchoredBy its Solana
	// transaction, when Anchor is Anchored or AnchorNotChecked.
	AnchoredBlock int64        `json:"anchored_block,omitempty"`
	AnchoredBy    *crtx.Anchor `json:"anchored_by,omitempty"`
}

// OK reports whether every check held.
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Reads are the marketplace's public reads a verification makes: the Go
// client makes them over the REST interface, the MCP server of the
// marketplace itself.
type Reads interface {
	Execution(ctx context.Context, id string) (api.ExecutionRecord, error)
	// Content is the bytes at an ipfs_url.
	Content(ctx context.Context, ipfsURL string) ([]byte, error)
	Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error)
	Proof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error)
	Block(ctx context.Context, env crtx.Environment, height int64) (api.BlockView, error)
	Reserves(ctx context.Context) (api.Reserves, error)
	WellKnown(ctx context.Context) (api.WellKnown, error)
	// Receipt is the signed receipt of a final execution, as its bytes.
	Receipt(ctx context.Context, id string) ([]byte, error)
}

// Verifier checks executions from the public reads alone.
type Verifier struct {
	Reads Reads
	// Code is the error code an error of Reads carries (only not_sealed
	// and block_not_found are asked about).
	Code func(error) string
	// Solana reads anchors' transactions, from the public endpoint of their
	// cluster or from SolanaRPC when it is given.
	Solana    *http.Client
	SolanaRPC string
}

// Run checks an execution as docs/verify.md does, trusting only the keys
// the marketplace publishes and, for the anchor, the Solana cluster: the
// seed's procedure (the content at ipfs_url hashes to result_hash), the
// ExecutionRecord on the ledger committing that hash, the creator's
// signature, the listing transaction that registered the key signed by the
// creator's wallet, the record's inclusion in a block signed by the ledger
// authority, the hash chain from that block to the first block anchored on
// Solana and the anchor's transaction (Anchor says whether there was one
// yet), and the marketplace's receipt. It waits up to a minute for the
// record's block to be sealed.
func (v Verifier) Run(ctx context.Context, id string) (Report, error) {
	r := Report{ExecutionID: id}
	add := func(name string, ok bool, format string, args ...any) bool {
		r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
		return ok
	}
	rec, err := v.Reads.Execution(ctx, id)
	if err != nil {
		return r, err
	}
	if !add("completed", (rec.Status == crtx.ExecCompleted || rec.Status == crtx.ExecDisputed) && rec.ResultHash != nil && (rec.IPFSURL != nil || rec.Result != nil),
		"status %s", rec.Status) {
		return r, nil
	}
	if rec.IPFSURL == nil {
		// A private execution's result is published nowhere: the caller
		// holds it in the record, and its hash is what the ledger commits.
		got := crtx.ResultHash(*rec.Result)
		add("result hash", got == *rec.ResultHash, "sha256 of the %d bytes of the private result is %s; the record says %s", len(*rec.Result), got, *rec.ResultHash)
	} else {
		content, err := v.Reads.Content(ctx, *rec.IPFSURL)
		if err != nil {
			add("published result", false, "%v", err)
			return r, nil
		}
		got := crtx.ResultHash(string(content))
		add("result hash", got == *rec.ResultHash, "sha256 of the %d bytes at ipfs_url is %s; the record says %s", len(content), got, *rec.ResultHash)
		cid := ipfs.CID(string(content))
		add("content id", path.Base(*rec.IPFSURL) == cid, "the content's CID is %s", cid)
	}

	if rec.LedgerTransaction == nil {
		add("ledger record", false, "the record names no ledger transaction")
		return r, nil
	}
	record, err := v.Reads.Transaction(ctx, rec.Environment, *rec.LedgerTransaction)
	if err != nil {
		return r, err
	}
	if !add("ledger record", record.Kind == crtx.TxExecutionRecord && record.Data["execution_id"] == id &&
		record.Data["result_hash"] == *rec.ResultHash && rec.Signature != nil && record.Data["signature"] == *rec.Signature &&
		record.Data["signing_public_key"] == rec.SigningPublicKey && rec.ListingTransaction != nil &&
		record.Data["listing_tx"] == *rec.ListingTransaction,
		"the ExecutionRecord %s commits the result hash, the creator's signature and the key", record.ID) {
		return r, nil
	}
	pub, perr := crtx.ParseAddress("signing_public_key", rec.SigningPublicKey)
	add("creator signature", perr == nil && crtx.VerifyBase58(ed25519.PublicKey(pub), []byte(*rec.ResultHash), *rec.Signature),
		"signature over the result hash by the listing's key %s", rec.SigningPublicKey)
	if mv := rec.Metered; mv != nil {
		add("metered charge", meteredAgrees(rec, record, ed25519.PublicKey(pub)),
			"%s tokens signed by the listing's key; %s + tokens × %s / 1,000, at most %s, is the cost %s, and the ledger record says and moves the same",
			tokens(mv.TokensUsed), mv.Base, mv.Per1k, mv.Held, rec.Cost)
	} else if record.Data["usage_signature"] != "" {
		add("metered charge", false, "the ledger record is of a metered call; the execution record does not say how it was charged")
	}
	wk, err := v.Reads.WellKnown(ctx)
	if err != nil {
		return r, err
	}
	authority, err := crtx.ParseAddress("ledger_authority_public_key", wk.AuthorityPublicKey)
	if err != nil {
		return r, err
	}
	kerr := v.listingKey(ctx, rec, authority, wk.PublicURL)
	add("listing key", kerr == nil, "%s", orOK(kerr, "the creator's wallet (and the key) signed the listing transaction that registered the key"))

	proof, err := v.sealedProof(ctx, rec.Environment, record.ID)
	if err != nil {
		add("sealed in a block", false, "%v", err)
		return r, nil
	}
	if verr := crtx.VerifyProof(proof, record, authority); verr != nil {
		add("sealed in a block", false, "%v", verr)
	} else {
		add("sealed in a block", true, "in block %d, signed by the ledger authority %s", proof.Block.Height, wk.AuthorityPublicKey)
		v.verifyAnchor(ctx, &r, proof.Block, authority, add)
	}
	market, err := crtx.ParseAddress("signing_public_key", wk.SigningPublicKey)
	if err != nil {
		return r, err
	}
	raw, err := v.Reads.Receipt(ctx, id)
	if err != nil {
		return r, err
	}
	rc, verr := Receipt(raw, market)
	if verr == nil && !receiptAgrees(rc, rec) {
		verr = errors.New("the receipt does not state what the record says")
	}
	add("receipt", verr == nil, "%v", orOK(verr, "signed by the marketplace key "+wk.SigningPublicKey))
	return r, nil
}

// listingKey checks that the record's signing key was registered by its
// listing transaction, signed over the listing statement by the creator's
// wallet and, when the transaction carries key_signature, by the key
// itself (docs/verify.md, step 4), for the marketplace at publicURL when the
// statement names one.
func (v Verifier) listingKey(ctx context.Context, rec api.ExecutionRecord, authority ed25519.PublicKey, publicURL string) error {
	if rec.ListingTransaction == nil {
		return errors.New("the record names no listing transaction")
	}
	t, err := v.Reads.Transaction(ctx, crtx.Mainnet, *rec.ListingTransaction)
	if err != nil {
		return err
	}
	if t.Data["agent_id"] != rec.AgentID || t.Data["signing_public_key"] != rec.SigningPublicKey {
		return fmt.Errorf("listing transaction %s registers %q for %s, not the record's key", t.ID, t.Data["signing_public_key"], t.Data["agent_id"])
	}
	// Every statement written since it was required names the marketplace
	// it was signed for: another's is no authority here.
	if m, ok := t.Data["marketplace"]; ok {
		if u, err := url.Parse(publicURL); err != nil || u.Host != m {
			return fmt.Errorf("listing transaction %s was signed for the marketplace %q, not this one (%s)", t.ID, m, publicURL)
		}
	}
	stmt, err := crtx.ListingStatement(t.Kind, t.Data)
	if err != nil {
		return err
	}
	wallet, err := crtx.ParseAddress("creator", t.Data["creator"])
	if err != nil || !crtx.VerifyBase58(wallet, stmt, t.Data["creator_signature"]) {
		return fmt.Errorf("listing transaction %s is not signed by its creator %s", t.ID, t.Data["creator"])
	}
	// The key's own signature, that its holder agreed to this wallet's
	// listing, is in every listing transaction written since it was
	// required; older ones have none, and are checked as before.
	if ks, ok := t.Data["key_signature"]; ok {
		key, err := crtx.ParseAddress("signing_public_key", t.Data["signing_public_key"])
		if err != nil || !crtx.VerifyBase58(key, stmt, ks) {
			return fmt.Errorf("listing transaction %s is not signed by the key %s it registers", t.ID, t.Data["signing_public_key"])
		}
	}
	// An AgentListed's statement leaves the agent out (the creator signs
	// before it is named): the authority's block binds the two.
	p, err := v.sealedProof(ctx, crtx.Mainnet, t.ID)
	if err != nil {
		return err
	}
	return crtx.VerifyProof(p, t, authority)
}

// sealedProof reads a transaction's inclusion proof, waiting up to a minute
// for its block to be sealed.
func (v Verifier) sealedProof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error) {
	for wait := time.Now().Add(time.Minute); ; {
		proof, err := v.Reads.Proof(ctx, env, id)
		if v.Code(err) != crtx.CodeNotSealed || time.Now().After(wait) {
			return proof, err
		}
		select {
		case <-ctx.Done():
			return crtx.Proof{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// receiptAgrees reports whether a receipt states what the record says. A
// disputed execution keeps the receipt it had when it completed; the
// dispute's outcome is its own statement (Ruling).
func receiptAgrees(rc api.Receipt, rec api.ExecutionRecord) bool {
	status := rec.Status
	if status == crtx.ExecDisputed {
		status = crtx.ExecCompleted
	}
	same := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return rc.ExecutionID == rec.ExecutionID && rc.Environment == rec.Environment && rc.AgentID == rec.AgentID &&
		rc.Status == status && rc.Cost == rec.Cost && rc.CreatorAmount == rec.CreatorAmount &&
		rc.PlatformAmount == rec.PlatformAmount && rc.Refunded == rec.Refunded && same(rc.ResultHash, rec.ResultHash) &&
		same(rc.CreatorSignature, rec.Signature) && rc.SigningPublicKey == rec.SigningPublicKey &&
		same(rc.ListingTransaction, rec.ListingTransaction) && same(rc.LedgerTransaction, rec.LedgerTransaction) &&
		reflect.DeepEqual(rc.Metered, rec.Metered)
}

// meteredAgrees reports whether a metered record's charge follows from
// its creator's signed usage: the usage signature verifies under pub, the
// cost is what the prices make of the tokens, the hold is the cost and
// what returned, and the ledger record commits the same and moves it: the
// hold out of the execution's escrow, the fee to the treasury, and the
// creator's share and what returned elsewhere, what returned to the
// caller's wallet (which a creator calling its own agent shares with its
// share).
func meteredAgrees(rec api.ExecutionRecord, record crtx.LedgerTx, pub ed25519.PublicKey) bool {
	mv, data := rec.Metered, record.Data
	if mv.TokensUsed == nil || mv.UsageSignature == nil || rec.ResultHash == nil {
		return false
	}
	treasury, escrow, back := crtx.AccountAddress(crtx.AccountTreasury, crtx.TreasuryID), crtx.AccountAddress(crtx.AccountEscrow, rec.ExecutionID), ""
	if mv.ReturnedTo != nil {
		back = crtx.AccountAddress(crtx.AccountWallet, *mv.ReturnedTo)
	}
	var all, toTreasury, toOthers, toBack crtx.USDC
	for _, p := range record.Postings {
		if p.From != escrow {
			return false
		}
		all += p.Amount
		if p.To == treasury {
			toTreasury += p.Amount
			continue
		}
		toOthers += p.Amount
		if p.To == back {
			toBack += p.Amount
		}
	}
	n := *mv.TokensUsed
	return all == mv.Held && toTreasury == rec.PlatformAmount && toOthers == rec.CreatorAmount+mv.Returned &&
		toBack >= mv.Returned && data["returned_to"] == back &&
		crtx.VerifyUsage(pub, rec.ExecutionID, *rec.ResultHash, n, *mv.UsageSignature) &&
		crtx.Metered{Base: mv.Base, Per1k: mv.Per1k, Max: mv.Held}.Charge(n) == rec.Cost &&
		mv.Held == rec.Cost+mv.Returned && rec.CreatorAmount+rec.PlatformAmount == rec.Cost &&
		data["tokens_used"] == strconv.FormatInt(n, 10) && data["usage_signature"] == *mv.UsageSignature &&
		data["price_per_call_usdc"] == mv.Base.String() && data["price_per_1k_tokens_usdc"] == mv.Per1k.String() &&
		data["held_usdc"] == mv.Held.String()
}

// tokens is a token count as a check's detail says it.
func tokens(n *int64) string {
	if n == nil {
		return "no"
	}
	return strconv.FormatInt(*n, 10)
}

// orOK is err's text, or ok when err is nil.
func orOK(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}
