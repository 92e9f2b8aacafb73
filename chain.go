package crtx

import (
	"context"
	"crypto/ed25519"
	"net"
	"net/url"
	"strconv"
	"time"
)

// Chain is one environment's Solana cluster, as the marketplace uses it: the
// treasury that receives deposits and pays withdrawals, and the memos that
// anchor the ledger's blocks. Package chain implements it over JSON-RPC; an
// environment without one keeps its money on the ledger alone.
type Chain interface {
	// Cluster names the cluster for explorer links: "mainnet-beta",
	// "devnet", "testnet", or "custom" with ExplorerRPC.
	Cluster() string
	// RPC is the JSON-RPC URL the chain was configured with.
	RPC() string
	// Treasury is the treasury wallet's address; TokenAccount its USDC
	// associated token account; Mint the USDC mint.
	Treasury() string
	TokenAccount() string
	Mint() string
	// TokenAccountOf derives wallet's USDC associated token account, where
	// its withdrawals go.
	TokenAccountOf(wallet string) (string, error)
	// HasTokenAccount reports whether wallet's USDC token account exists.
	HasTokenAccount(ctx context.Context, wallet string) (bool, error)
	// Payments reads the transactions that name reference after the
	// signature until (empty: from the first), oldest first, fetching at
	// most budget of them, and returns those that pay the treasury: no
	// error, a TransferChecked of the mint into TokenAccount, the amount
	// read from the token balances. Finalized is read from the signature's
	// status, not from any commitment parameter. The scan's Until is where
	// the next one starts: past every signature it decided.
	Payments(ctx context.Context, reference, until string, budget int) (PaymentScan, error)
	// Recent reads the newest transactions naming reference, at most
	// limit, confirmed or finalized, and returns the payments among them.
	Recent(ctx context.Context, reference string, limit int) ([]ChainPayment, error)
	// Incoming lists the newest transfers of the mint into TokenAccount, at
	// most limit, with every account key each transaction names (References).
	Incoming(ctx context.Context, limit int) ([]ChainPayment, error)
	// NonceAccounts are the treasury's durable nonce accounts: a
	// withdrawal's transfer is signed on one, which it holds until it is
	// final, so at most this many withdrawals are in flight at once.
	NonceAccounts() []string
	// SignTransfer builds and signs a transaction that moves t.Amount from
	// the treasury to t.Wallet's token account on t.NonceAccount's current
	// nonce, with an SPL Memo of t.Memo; it sends nothing. The transaction
	// never expires: it lands once, whenever its bytes reach the cluster,
	// unless another on the same nonce lands first. It creates no token
	// account: the treasury pays no rent that the account's owner could
	// take back.
	SignTransfer(ctx context.Context, t Transfer) (SignedTransfer, error)
	// PaymentTransaction builds, unsigned, the transaction by which payer's
	// wallet pays r from its token account: the answer to a Solana Pay
	// transaction request.
	PaymentTransaction(ctx context.Context, payer string, r TransferRequest) ([]byte, error)
	// Send submits signed bytes; sending the same bytes twice is harmless.
	// A refusal proves nothing (a node may refuse bytes it already holds):
	// only Status says what became of them.
	Send(ctx context.Context, raw []byte) error
	// Status looks a signature up; Found is false when the cluster has not
	// seen it.
	Status(ctx context.Context, signature string) (ChainStatus, error)
	// Anchor writes memo in a transaction signed by authority, the treasury
	// paying the fee, and waits until it is finalized.
	Anchor(ctx context.Context, memo string, authority ed25519.PrivateKey) (Anchor, error)
	// Network is the cluster's CAIP-2 id ("solana:" and the first 32
	// characters of its genesis hash), as x402 names it; FeePayer the
	// wallet that pays x402 payments' fees.
	Network(ctx context.Context) (string, error)
	FeePayer() string
	// CheckPayment checks an x402 exact payment's base64 transaction
	// against the scheme's rules and t without reaching the cluster, and
	// signs it as fee payer; a refusal is a *PaymentError.
	CheckPayment(transaction string, t PaymentTerms) (CheckedPayment, error)
	// SimulatePayment simulates p's signed transaction (a failure is a
	// *PaymentError) and sets p.LastValid.
	SimulatePayment(ctx context.Context, p *CheckedPayment) error
	// SettlePayment sends a payment's signed bytes and waits until they
	// land confirmed (their slot), fail, or can never land.
	SettlePayment(ctx context.Context, signed []byte, lastValid uint64) (uint64, error)
	// BlockTime is how long the cluster takes to make a block, as
	// measured; 0 while unknown. A blockhash lives BlockhashBlocks blocks.
	BlockTime(ctx context.Context) time.Duration
	// RPCCalls is how many JSON-RPC calls the chain made, by method, and
	// how many of them got no answer or an HTTP error (a provider's rate
	// limit, its outage).
	RPCCalls() (calls, failed map[string]uint64)
	// Balance is what TokenAccount holds; FeeBalance the treasury's SOL, in
	// lamports, that pays transaction fees.
	Balance(ctx context.Context) (USDC, error)
	FeeBalance(ctx context.Context) (uint64, error)
}

// BlockhashBlocks is how many blocks a Solana blockhash lives: a
// transaction made on it lands before the chain passes the height it was
// made at plus this, or never.
const BlockhashBlocks = 150

// ChainPayment is one transfer into the treasury's token account: one
// transfer instruction that names its own references (Part, from 1), or a
// transaction's whole (Part 0) when its instructions do not say which
// reference each pays.
type ChainPayment struct {
	Signature string
	Part      int
	Slot      uint64
	Amount    USDC
	// From is the wallet that signed the transfer.
	From      string
	Finalized bool
	// References are the keys that may be a deposit's reference: the
	// instruction's own accounts past the transfer's (where Solana Pay puts
	// them), or, for a whole transaction, every account key it names.
	References []string
}

// Transfer is what a withdrawal's transaction pays: Amount to Wallet's
// token account, signed on NonceAccount's nonce as read from a node that
// has seen slot After (where the nonce's last transaction landed).
type Transfer struct {
	Wallet       string
	Amount       USDC
	Memo         string
	NonceAccount string
	After        uint64
}

// PaymentScan is what one read of a reference's transactions found.
type PaymentScan struct {
	// Payments are the transfers to the treasury that name the reference,
	// finalized or not.
	Payments []ChainPayment
	// Until is the newest signature up to which every one was decided:
	// failed, not a payment of the reference, or a finalized payment.
	Until string
	// Fetched is how many transactions the scan fetched.
	Fetched int
}

// SignedTransfer is a withdrawal's transaction, signed and not sent.
type SignedTransfer struct {
	Signature string
	Raw       []byte
	// Nonce is the nonce value it was signed on.
	Nonce string
}

// ChainStatus is what the cluster knows of a signature.
type ChainStatus struct {
	Found     bool
	Finalized bool
	// Confirmed: a supermajority voted for it (finalized included).
	Confirmed bool
	Slot      uint64
	// Err is the transaction's error, if it failed on the chain.
	Err string
}

// Anchor binds a block to a Solana transaction whose memo names it.
type Anchor struct {
	Signature string `json:"signature"`
	Slot      uint64 `json:"slot"`
	Cluster   string `json:"cluster"`
}

// AnchorMemo is the memo that anchors block b: crtx:<environment>:<height>:<hash>.
func AnchorMemo(b Block) string {
	return "crtx:" + string(b.Environment) + ":" + strconv.FormatInt(b.Height, 10) + ":" + b.Hash
}

// DepositStatus is where a deposit request stands.
type DepositStatus string

const (
	DepositAwaitingPayment DepositStatus = "awaiting_payment"
	DepositCredited        DepositStatus = "credited"
	DepositExpired         DepositStatus = "expired"
)

// DepositTTL is how long a deposit request waits for its payment; a payment
// that arrives later is still credited.
const DepositTTL = 24 * time.Hour

// Deposit is a Solana Pay transfer request: a wallet asks to pay Amount into
// the treasury, and every transfer that carries Reference is credited to it.
type Deposit struct {
	ID          string        `json:"deposit_id"`
	Wallet      string        `json:"wallet"`
	Environment Environment   `json:"environment"`
	Amount      USDC          `json:"amount_usdc"`
	Reference   string        `json:"reference"`
	Memo        string        `json:"memo"`
	Status      DepositStatus `json:"status"`
	Credited    USDC          `json:"credited_usdc"`
	CreatedAt   time.Time     `json:"created_at"`
	ExpiresAt   time.Time     `json:"expires_at"`
	// CheckedAt is when the watcher last read the reference's payments;
	// ScannedUntil the signature its next read starts after.
	CheckedAt    time.Time `json:"-"`
	ScannedUntil string    `json:"-"`
}

// StatusAt is the deposit's status at now: awaiting payment turns expired
// after ExpiresAt.
func (d Deposit) StatusAt(now time.Time) DepositStatus {
	if d.Status == DepositAwaitingPayment && !now.Before(d.ExpiresAt) {
		return DepositExpired
	}
	return d.Status
}

// Request is the Solana Pay transfer request that pays d into c's
// treasury; without a chain it names no recipient.
func (d Deposit) Request(c Chain) TransferRequest {
	r := TransferRequest{Amount: d.Amount, References: []string{d.Reference}, Label: "crtx", Message: "Add funds to your crtx wallet", Memo: d.Memo}
	if c != nil {
		r.Recipient, r.SPLToken = c.Treasury(), c.Mint()
	}
	return r
}

// DepositPayment is one transfer credited to a deposit: its signature and
// part are claimed once, in the transaction that credits it.
type DepositPayment struct {
	Signature string `json:"signature"`
	// Part is which transfer instruction of the transaction it was, from
	// 1; 0 when the transaction was credited whole.
	Part        int         `json:"part"`
	DepositID   string      `json:"deposit_id"`
	Environment Environment `json:"environment"`
	Amount      USDC        `json:"amount_usdc"`
	Slot        uint64      `json:"slot"`
	// TxID is the Deposit ledger transaction that credited it.
	TxID       string    `json:"transaction_id"`
	CreditedAt time.Time `json:"credited_at"`
}

// WithdrawalStatus is where a withdrawal stands.
type WithdrawalStatus string

const (
	WithdrawalPending   WithdrawalStatus = "pending"
	WithdrawalSent      WithdrawalStatus = "sent"
	WithdrawalConfirmed WithdrawalStatus = "confirmed"
	WithdrawalFailed    WithdrawalStatus = "failed"
)

// Final reports whether the withdrawal has ended.
func (s WithdrawalStatus) Final() bool { return s == WithdrawalConfirmed || s == WithdrawalFailed }

// Withdrawal pays a wallet's balance out to its own token account. Its row
// is its durable work: the signed bytes are stored before they are sent, so
// whichever process takes the lease next sends those bytes. They are signed
// on a durable nonce and never expire, so a withdrawal is signed once and
// never refunded unless the chain shows its transfer landed and failed.
type Withdrawal struct {
	ID          string           `json:"withdrawal_id"`
	Wallet      string           `json:"wallet"`
	Environment Environment      `json:"environment"`
	Amount      USDC             `json:"amount_usdc"`
	Destination string           `json:"destination"`
	Status      WithdrawalStatus `json:"status"`
	Signature   string           `json:"signature,omitempty"`
	Slot        uint64           `json:"slot,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
	CompletedAt *time.Time       `json:"completed_at"`

	Raw []byte `json:"-"`
	// NonceAccount is the treasury's nonce account the transfer was
	// signed on, held from its signing until the withdrawal is final;
	// Nonce the value signed on.
	NonceAccount string    `json:"-"`
	Nonce        string    `json:"-"`
	Attempts     int       `json:"-"`
	LeaseOwner   string    `json:"-"`
	LeaseUntil   time.Time `json:"-"`
}

// Reserve compares what the treasury holds on the chain with what the
// ledger owes in one environment.
type Reserve struct {
	Environment   Environment `json:"environment"`
	Treasury      string      `json:"treasury"`
	TokenAccount  string      `json:"token_account"`
	OnChain       USDC        `json:"on_chain_usdc"`
	Liabilities   USDC        `json:"liabilities_usdc"`
	Surplus       USDC        `json:"surplus_usdc"`
	AnchoredBlock int64       `json:"anchored_block"`
	Cluster       string      `json:"cluster"`
	CheckedAt     time.Time   `json:"checked_at"`
}

// WalletChain is the Wallet Standard's chain id of c's cluster, which a
// browser wallet is asked to send a transaction on.
func WalletChain(c Chain) string {
	switch c.Cluster() {
	case "mainnet-beta":
		return "solana:mainnet"
	case "devnet", "testnet":
		return "solana:" + c.Cluster()
	default:
		return "solana:localnet"
	}
}

// SolanaExplorerURL is the Solana explorer's page of a transaction ("tx")
// or an address ("address") on c's cluster.
func SolanaExplorerURL(c Chain, kind, id string) string {
	u := "https://explorer.solana.com/" + kind + "/" + id
	switch c.Cluster() {
	case "mainnet-beta":
		return u
	case "devnet", "testnet":
		return u + "?cluster=" + c.Cluster()
	default:
		// The explorer reads a custom cluster from the URL given, which is
		// written into the link only for a validator on this machine: a
		// provider's URL often holds its API key.
		if rpc, err := url.Parse(c.RPC()); err == nil && isLoopback(rpc.Hostname()) {
			return u + "?cluster=custom&customUrl=" + url.QueryEscape(c.RPC())
		}
		return u + "?cluster=custom"
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
