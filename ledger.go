package crtx

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx/merkle"
	"github.com/mr-tron/base58"
)

// AccountKind says what a ledger account holds.
type AccountKind string

const (
	AccountWallet     AccountKind = "wallet"     // a wallet's available funds
	AccountEscrow     AccountKind = "escrow"     // one execution's escrow
	AccountCollateral AccountKind = "collateral" // a listing's CreatorCollateral
	AccountTreasury   AccountKind = "treasury"   // the platform's fees
	AccountIssuance   AccountKind = "issuance"   // where deposits come from; the only account below zero
	AccountListing    AccountKind = "listing"    // an agent's listing (data, no funds)
	// AccountWithdrawals holds what withdrawals in flight take from their
	// wallets until the chain confirms or refuses them.
	AccountWithdrawals AccountKind = "withdrawals"
)

// TxKind names a ledger transaction (CONTRACT §11).
type TxKind string

const (
	TxDeposit            TxKind = "Deposit"
	TxWithdrawal         TxKind = "Withdrawal"
	TxAirdrop            TxKind = "Airdrop"
	TxAgentListed        TxKind = "AgentListed"
	TxListingUpdated     TxKind = "ListingUpdated"
	TxAgentDelisted      TxKind = "AgentDelisted"
	TxCollateralLocked   TxKind = "CollateralLocked"
	TxCollateralSlashed  TxKind = "CollateralSlashed"
	TxCollateralReleased TxKind = "CollateralReleased"
	TxEscrowOpened       TxKind = "EscrowOpened"
	TxExecutionRecord    TxKind = "ExecutionRecord"
	TxEscrowRefunded     TxKind = "EscrowRefunded"
	TxDisputeOpened      TxKind = "DisputeOpened"
	TxDisputeResolved    TxKind = "DisputeResolved"
	// TxWithdrawalPaid moves a withdrawal out of the ledger once the chain
	// finalized its transfer; TxWithdrawalRefunded returns a failed one.
	TxWithdrawalPaid     TxKind = "WithdrawalPaid"
	TxWithdrawalRefunded TxKind = "WithdrawalRefunded"
)

// AccountAddress derives an account's address as base58 of SHA-256 over its
// kind and id, like a program-derived address: anyone can recompute it.
func AccountAddress(kind AccountKind, id string) string {
	sum := sha256.Sum256([]byte("crtx:" + string(kind) + ":" + id))
	return base58.Encode(sum[:])
}

// Well-known ids of the singleton accounts.
const (
	TreasuryID = "platform"
	IssuanceID = "usdc"
	// WithdrawalsID is the one account of withdrawals in flight.
	WithdrawalsID = "in-flight"
)

// Account is one ledger account of one environment.
type Account struct {
	Address     string      `json:"address"`
	Environment Environment `json:"environment"`
	Kind        AccountKind `json:"kind"`
	// Ref is the id the address was derived from (a wallet address, an
	// execution id, an agent id).
	Ref string `json:"ref"`
	// Owner is the wallet the funds belong to, if any.
	Owner     string    `json:"owner,omitempty"`
	Balance   USDC      `json:"balance_usdc"`
	CreatedAt time.Time `json:"created_at"`
}

// NewAccount returns the account of kind and ref, with its derived address.
func NewAccount(env Environment, kind AccountKind, ref, owner string) Account {
	return Account{Address: AccountAddress(kind, ref), Environment: env, Kind: kind, Ref: ref, Owner: owner}
}

// EscrowAccount is an execution's escrow, which is also its record on the
// ledger: EscrowOpened creates it, ExecutionRecord or EscrowRefunded closes
// it, and the dispute transactions reference it.
func EscrowAccount(e Execution) Account {
	return NewAccount(e.Environment, AccountEscrow, e.ID, e.Wallet)
}

// ListingAccount is an agent's listing on the mainnet ledger, which holds
// its collateral.
func ListingAccount(a Agent) Account {
	return NewAccount(Mainnet, AccountListing, a.ID, a.Creator)
}

// MayGoNegative reports whether the database lets this account's balance go
// below zero: issuance, the mirror of all money in circulation, and the
// devnet treasury, which refunds upheld devnet disputes whatever it holds
// (devnet money is not real).
func (a Account) MayGoNegative() bool {
	return a.Kind == AccountIssuance || (a.Kind == AccountTreasury && a.Environment == Devnet)
}

// Posting moves Amount (> 0) from one account to another.
type Posting struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount USDC   `json:"amount_usdc"`
}

// LedgerTx is one ledger transaction: postings that all apply or none do,
// with data committed alongside (a result hash, a signature, a wallet).
type LedgerTx struct {
	ID          string            `json:"id"`
	Environment Environment       `json:"environment"`
	Seq         int64             `json:"seq"`
	Kind        TxKind            `json:"kind"`
	Data        map[string]string `json:"data"`
	Postings    []Posting         `json:"postings"`
	// Accounts the transaction concerns besides those its postings name,
	// such as the listing an AgentListed creates.
	Accounts  []string  `json:"accounts"`
	CreatedAt time.Time `json:"created_at"`
	// BlockHeight is 0 until the transaction is sealed into a block.
	BlockHeight int64 `json:"block_height"`
	// Version is the encoding Leaf hashes the transaction with.
	Version int `json:"version"`
	// Hash is Leaf in hex, as served (MarshalJSON); it is not stored.
	Hash string `json:"hash"`
}

// RolledUp reports whether the roll-up (market.Market.Rollup) visits t after it
// commits: the transactions that end an execution, from which it counts
// the agent's statistics.
func (t LedgerTx) RolledUp() bool {
	return t.Kind == TxExecutionRecord || t.Kind == TxEscrowRefunded
}

// DefersCredits reports whether t's credits (the accounts its postings
// leave better off) are applied to their balances by the roll-up rather
// than with t itself. An ExecutionRecord credits the creator's wallet and
// the treasury, which every execution of an agent, or of the platform,
// would otherwise write: applied with the settlement, they would queue all
// settlements on their rows. Its debit (the execution's own escrow) is
// applied with it, so nothing is ever spent twice; a credit applied late
// only leaves a balance lower for a moment.
func (t LedgerTx) DefersCredits() bool { return t.Kind == TxExecutionRecord }

// Defers reports whether t's credit to the account at addr waits for the
// roll-up: every credit of an ExecutionRecord (DefersCredits) but the
// return of a metered call's unused hold to its caller's wallet (data
// "returned_to"), which, like a refund, shows in the caller's balance with
// the transaction that returns it: that wallet's row is the call's own.
func (t LedgerTx) Defers(addr string) bool {
	return t.DefersCredits() && addr != t.Data["returned_to"]
}

// NetAmounts is how much each account named by t's postings gains
// (positive) or loses (negative).
func (t LedgerTx) NetAmounts() map[string]USDC {
	net := make(map[string]USDC, 2*len(t.Postings))
	for _, p := range t.Postings {
		net[p.From] -= p.Amount
		net[p.To] += p.Amount
	}
	return net
}

// DeferredCredits are the credits of t that the roll-up applies, in
// address order; none unless t DefersCredits.
func (t LedgerTx) DeferredCredits() []Credit {
	if !t.DefersCredits() {
		return nil
	}
	var out []Credit
	for addr, amount := range t.NetAmounts() {
		if amount > 0 && t.Defers(addr) {
			out = append(out, Credit{Seq: t.Seq, Address: addr, Amount: amount})
		}
	}
	slices.SortFunc(out, func(a, b Credit) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// Credit is an amount the roll-up adds to an account for one transaction.
type Credit struct {
	Seq     int64
	Address string
	Amount  USDC
}

// HashVersion is the encoding new transactions and blocks are hashed with:
// 2, the RFC 8785 canonical JSON of the object as the API serves it, less
// its placement (docs/ledger.md). Version 1, Go's own JSON of a private
// layout, is kept for what was sealed with it.
const HashVersion = 2

// Leaf is the transaction's leaf in its block's Merkle tree: SHA-256 of the
// canonical encoding, under t.Version, of everything the transaction says.
// Seq, BlockHeight and Hash are placement or derived, and are left out.
func (t LedgerTx) Leaf() merkle.Hash {
	t = t.withEmpties()
	if t.Version < 2 {
		return t.leafV1()
	}
	return canonicalHash(struct {
		Version     int               `json:"version"`
		ID          string            `json:"id"`
		Environment Environment       `json:"environment"`
		Kind        TxKind            `json:"kind"`
		Data        map[string]string `json:"data"`
		Postings    []Posting         `json:"postings"`
		Accounts    []string          `json:"accounts"`
		CreatedAt   string            `json:"created_at"`
	}{t.Version, t.ID, t.Environment, t.Kind, t.Data, t.Postings, t.Accounts, canonicalTime(t.CreatedAt)})
}

func (t LedgerTx) leafV1() merkle.Hash {
	type posting struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Amount int64  `json:"amount"`
	}
	ps := make([]posting, len(t.Postings))
	for i, p := range t.Postings {
		ps[i] = posting{p.From, p.To, int64(p.Amount)}
	}
	b, _ := json.Marshal(struct {
		ID          string            `json:"id"`
		Environment Environment       `json:"environment"`
		Kind        TxKind            `json:"kind"`
		Data        map[string]string `json:"data"` // maps marshal with sorted keys
		Postings    []posting         `json:"postings"`
		Accounts    []string          `json:"accounts"`
		CreatedAt   int64             `json:"created_at_us"`
	}{t.ID, t.Environment, t.Kind, t.Data, ps, t.Accounts, t.CreatedAt.UnixMicro()})
	return sha256.Sum256(b)
}

// MarshalJSON writes the transaction with its hash, and its time as it is
// hashed (UTC, to the microsecond), so that what is served is what a
// verifier hashes.
func (t LedgerTx) MarshalJSON() ([]byte, error) {
	type plain LedgerTx
	t.Hash = t.Leaf().String()
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Microsecond)
	return json.Marshal(plain(t.withEmpties()))
}

// withEmpties is t with nil data, postings and accounts made empty: nil
// and empty hash alike, so a transaction hashes the same before it is
// stored and after it is read back, and it is served as hashed, never null.
func (t LedgerTx) withEmpties() LedgerTx {
	if t.Data == nil {
		t.Data = map[string]string{}
	}
	if t.Postings == nil {
		t.Postings = []Posting{}
	}
	if t.Accounts == nil {
		t.Accounts = []string{}
	}
	return t
}

// canonicalTime is a time as hashed objects of version 2 hold it: RFC 3339
// in UTC, to the microsecond, without trailing zeros (as Go writes times in
// JSON).
func canonicalTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

// canonicalHash is SHA-256 of v's RFC 8785 form. v is one of this
// package's hashed layouts, which always canonicalize: strings, whole
// numbers and amounts far inside a double's exact range.
func canonicalHash(v any) merkle.Hash {
	b, err := Canonical(v)
	if err != nil {
		panic("crtx: a hashed layout failed to canonicalize: " + err.Error())
	}
	return sha256.Sum256(b)
}

// Block seals transactions: their Merkle root, the previous block's hash and
// the ledger authority's signature over the block's own hash.
type Block struct {
	Environment Environment `json:"environment"`
	Height      int64       `json:"height"`
	PrevHash    string      `json:"prev_hash"`
	MerkleRoot  string      `json:"merkle_root"`
	TxCount     int         `json:"tx_count"`
	SealedAt    time.Time   `json:"sealed_at"`
	// Version is the encoding of the block's own hash (ComputeHash).
	Version   int    `json:"version"`
	Hash      string `json:"hash"`
	Signature string `json:"signature"`
	// Anchor is the Solana transaction whose memo names this block, once
	// written; earlier blocks are bound to it through PrevHash. It is not
	// part of the block's hash.
	Anchor *Anchor `json:"anchor,omitempty"`
}

// GenesisPrevHash is the PrevHash of block 1.
var GenesisPrevHash = merkle.Hash{}.String()

// ComputeHash is SHA-256 over the block's header fields, encoded as
// b.Version says.
func (b Block) ComputeHash() merkle.Hash {
	if b.Version < 2 {
		h, _ := json.Marshal(struct {
			Environment Environment `json:"environment"`
			Height      int64       `json:"height"`
			PrevHash    string      `json:"prev_hash"`
			MerkleRoot  string      `json:"merkle_root"`
			TxCount     int         `json:"tx_count"`
			SealedAt    int64       `json:"sealed_at_us"`
		}{b.Environment, b.Height, b.PrevHash, b.MerkleRoot, b.TxCount, b.SealedAt.UnixMicro()})
		return sha256.Sum256(h)
	}
	return canonicalHash(struct {
		Version     int         `json:"version"`
		Environment Environment `json:"environment"`
		Height      int64       `json:"height"`
		PrevHash    string      `json:"prev_hash"`
		MerkleRoot  string      `json:"merkle_root"`
		TxCount     int         `json:"tx_count"`
		SealedAt    string      `json:"sealed_at"`
	}{b.Version, b.Environment, b.Height, b.PrevHash, b.MerkleRoot, b.TxCount, canonicalTime(b.SealedAt)})
}

// TxLeaves returns the Merkle leaves of txs in order.
func TxLeaves(txs []LedgerTx) []merkle.Hash {
	out := make([]merkle.Hash, len(txs))
	for i, t := range txs {
		out[i] = t.Leaf()
	}
	return out
}

// ParseHeight reads a block height: a whole number from 1.
func ParseHeight(s string) (int64, error) {
	h, err := strconv.ParseInt(s, 10, 64)
	if err != nil || h < 1 {
		return 0, Errorf(CodeInvalidRequest, "height must be a block height, a whole number from 1")
	}
	return h, nil
}

// AccountHistory is an account with its newest transactions.
type AccountHistory struct {
	Account      Account
	Transactions []LedgerTx
}

// SealedBlock is a sealed block with its transactions, in order.
type SealedBlock struct {
	Block        Block
	Transactions []LedgerTx
}
