package client

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/ipfs"
)

// Check is one step of a verification.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	ExecutionID string  `json:"execution_id"`
	Checks      []Check `json:"checks"`
}

// OK reports whether every check held.
func (r VerifyReport) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Verify checks an execution the way a careful caller would, trusting only
// the ledger authority key: the seed's procedure (the content at ipfs_url
// hashes to result_hash), the ExecutionRecord on the ledger committing that
// hash, the creator's signature against the signing key of the on-chain
// listing, and the record's inclusion in a block signed by the authority.
// It waits up to a minute for the record's block to be sealed.
func (c *Client) Verify(ctx context.Context, id string) (VerifyReport, error) {
	r := VerifyReport{ExecutionID: id}
	add := func(name string, ok bool, format string, args ...any) bool {
		r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
		return ok
	}
	rec, err := c.Execution(ctx, id)
	if err != nil {
		return r, err
	}
	if !add("completed", (rec.Status == crtx.ExecCompleted || rec.Status == crtx.ExecDisputed) && rec.ResultHash != nil && rec.IPFSURL != nil,
		"status %s", rec.Status) {
		return r, nil
	}
	content, err := c.Content(ctx, *rec.IPFSURL)
	if err != nil {
		add("published result", false, "%v", err)
		return r, nil
	}
	got := crtx.ResultHash(string(content))
	add("result hash", got == *rec.ResultHash, "sha256 of the %d bytes at ipfs_url is %s; the record says %s", len(content), got, *rec.ResultHash)
	cid := ipfs.CID(string(content))
	add("content id", path.Base(*rec.IPFSURL) == cid, "the content's CID is %s", cid)

	acct, err := c.Account(ctx, rec.Environment, crtx.AccountAddress(crtx.AccountEscrow, id))
	if err != nil {
		return r, err
	}
	var record *crtx.LedgerTx
	for i := range acct.Transactions {
		if acct.Transactions[i].Kind == crtx.TxExecutionRecord {
			record = &acct.Transactions[i]
		}
	}
	if !add("ledger record", record != nil && record.Data["result_hash"] == *rec.ResultHash,
		"the ExecutionRecord transaction commits the result hash") {
		return r, nil
	}

	// The key is the one the listing carried on the ledger when the record
	// was written: the newest AgentListed or ListingUpdated before it.
	listing, err := c.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountListing, rec.AgentID))
	if err != nil {
		return r, err
	}
	key := ""
	var keyAt time.Time
	for _, t := range listing.Transactions {
		if (t.Kind == crtx.TxAgentListed || t.Kind == crtx.TxListingUpdated) && !t.CreatedAt.After(record.CreatedAt) && t.CreatedAt.After(keyAt) {
			key, keyAt = t.Data["signing_public_key"], t.CreatedAt
		}
	}
	pub, perr := crtx.ParseAddress("signing_public_key", key)
	add("creator signature", perr == nil && crtx.VerifyBase58(ed25519.PublicKey(pub), []byte(*rec.ResultHash), record.Data["signature"]),
		"signature over the result hash by the listing's key %s", key)

	wk, err := c.WellKnown(ctx)
	if err != nil {
		return r, err
	}
	authority, err := crtx.ParseAddress("ledger_authority_public_key", wk.AuthorityPublicKey)
	if err != nil {
		return r, err
	}
	var proof crtx.Proof
	for wait := time.Now().Add(time.Minute); ; {
		proof, err = c.Proof(ctx, rec.Environment, record.ID)
		if Code(err) != crtx.CodeNotSealed || time.Now().After(wait) {
			break
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		add("sealed in a block", false, "%v", err)
		return r, nil
	}
	if verr := crtx.VerifyProof(proof, *record, authority); verr != nil {
		add("sealed in a block", false, "%v", verr)
	} else {
		add("sealed in a block", true, "in block %d, signed by the ledger authority %s", proof.Block.Height, wk.AuthorityPublicKey)
	}
	return r, nil
}
