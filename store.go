package crtx

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store keeps the marketplace's state. Each engine (SQLite, PostgreSQL)
// implements it and passes the same conformance suite (store/storetest).
//
// Public methods of the market's services own their transaction: they call Update or View
// once and do all their reads and writes through the Tx it hands them, so a
// money movement commits together with the state change that causes it.
type Store interface {
	// Update runs fn in a read-write transaction, committed when fn returns
	// nil and rolled back otherwise.
	Update(ctx context.Context, fn func(Tx) error) error
	// UpdateGuarded is Update at the engine's weakest isolation that still
	// commits all or nothing: READ COMMITTED on PostgreSQL, where two
	// transactions that write one row then wait for each other instead of
	// failing; on an engine with a single writer it is Update. It is for the
	// transactions on every execution's path, whose rules the database holds
	// by guarded writes (a balance CHECK, a conditional UPDATE, a unique
	// key) rather than by anything fn read.
	UpdateGuarded(ctx context.Context, fn func(Tx) error) error
	// OpenExecution writes an execution's first transaction, in as few
	// round trips as the engine allows: the Idempotency-Key claim if any
	// (ErrConflict when the key is taken), the execution row, refused with
	// ErrTermsChanged unless its agent is listed at exactly the terms the
	// row carries, the EscrowOpened transaction that debits the wallet
	// (ErrInsufficientFunds), the key's usage (AddKeyUsage's errors), and
	// last the key's and the wallet's executions in flight, counted with
	// this one under the lock the debit holds on the wallet, so that
	// concurrent openings cannot pass o's limits together
	// (ErrKeyInFlight, ErrWalletInFlight). It sets o.Escrow.Seq.
	OpenExecution(ctx context.Context, o *Opening) error
	// CloseExecution writes an execution's last transaction: its outcome
	// (FinishExecution), its result, its ExecutionRecord or EscrowRefunded
	// and its webhook delivery. It reports false, writing nothing, when the
	// execution was final already.
	CloseExecution(ctx context.Context, c *Closing) (bool, error)
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// Notifier is what a store shared by several processes (PostgreSQL's)
// implements beside Store, to carry word between them that executions
// changed state: so a stream served by one replica hears of a change made
// by another without reading the row over and over. A store that serves
// one process (SQLite) has none.
type Notifier interface {
	// Notify sends msg, at most MaxNotification bytes, to every process
	// listening, the sender included.
	Notify(ctx context.Context, msg string) error
	// Listen calls listening once it hears what Notify sends, then fn with
	// each message, until ctx ends or the connection it listens on fails.
	Listen(ctx context.Context, listening func(), fn func(msg string)) error
}

// MaxNotification is the longest message a Notifier carries.
const MaxNotification = 7900

// Read runs fn in a read-only transaction of s and returns what it read:
// the shape of most reads, which fetch one value.
func Read[T any](ctx context.Context, s Store, fn func(Tx) (T, error)) (T, error) {
	var v T
	err := s.View(ctx, func(tx Tx) (err error) {
		v, err = fn(tx)
		return err
	})
	return v, err
}

// Tx is what a transaction can do: one role per concern, each an interface
// a service asks of the store. Every engine hands one value that is all of
// them. Lookups that find nothing return an error wrapping ErrNotFound.
type Tx struct {
	System     SystemRows
	Access     AccessRows
	Ledger     LedgerRows
	Catalog    CatalogRows
	Executions ExecutionRows
	Disputes   DisputeRows
	Funds      FundsRows
	Deliveries DeliveryRows
}

// SystemRows is the process-wide rows: named locks, settings, replicas' heartbeats.
type SystemRows interface {
	// TryLock takes a lock named name until the transaction ends, or
	// reports false when another transaction holds it.
	TryLock(ctx context.Context, name string) (bool, error)
	Meta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error

	// Heartbeat records that replica, of release, is alive at at, and
	// forgets replicas silent since before forgetBefore.
	Heartbeat(ctx context.Context, replica string, release int, at, forgetBefore time.Time) error
	// ReplicasBelow names the replicas whose release is below release and
	// whose last heartbeat is not before since: those of a release before
	// that wrote no release are at 0.
	ReplicasBelow(ctx context.Context, release int, since time.Time) ([]string, error)

	// Replicas returns each replica's last heartbeat, as it wrote it.
	Replicas(ctx context.Context) (map[string]time.Time, error)
	// Leave forgets replica, which has stopped.
	Leave(ctx context.Context, replica string) error

	// Backlog reads the work waiting: executions in flight, withdrawals
	// not final, and deliveries not made that were created after since
	// (older ones are given up).
	Backlog(ctx context.Context, since time.Time) (Backlog, error)
}

// AccessRows is who may act: sign-in nonces, sessions, sent forms, API keys and their usage, OAuth clients and codes.
type AccessRows interface {
	InsertNonce(ctx context.Context, n Nonce) error

	// NonceExpiry is when wallet's unused nonce expires, ErrNotFound if
	// wallet has no such nonce unused.
	NonceExpiry(ctx context.Context, nonce, wallet string) (time.Time, error)

	// OpenNonce is wallet's newest unused nonce that starts with prefix and
	// expires after after; ErrNotFound when it has none.
	OpenNonce(ctx context.Context, wallet, prefix string, after time.Time) (Nonce, error)
	// UseNonce marks an unexpired, unused nonce of wallet as used and reports
	// whether it was there to use.
	UseNonce(ctx context.Context, nonce, wallet string, now time.Time) (bool, error)
	InsertSession(ctx context.Context, s Session) error
	SessionByHash(ctx context.Context, hash string) (Session, error)
	DeleteSession(ctx context.Context, hash string) error

	// ClaimForm records a sent form, forgetting every form sent before
	// forgetBefore; ErrConflict when it was sent already.
	ClaimForm(ctx context.Context, f SentForm, forgetBefore time.Time) error
	SentForm(ctx context.Context, owner, token string) (SentForm, error)
	SetFormOutcome(ctx context.Context, owner, token string, outcome []byte) error
	InsertKey(ctx context.Context, k APIKey) error
	KeyByHash(ctx context.Context, hash string) (APIKey, error)
	KeyByID(ctx context.Context, id string) (APIKey, error)
	KeysByWallet(ctx context.Context, wallet string) ([]APIKey, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error
	TouchKey(ctx context.Context, id string, at time.Time) error

	// KeyByRefreshHash reads a connector's key by its refresh token's hash.
	KeyByRefreshHash(ctx context.Context, hash string) (APIKey, error)

	// RefreshKey replaces a connector's secret and refresh token, if the
	// key is still unrevoked with the refresh token whose hash is from;
	// ErrConflict otherwise (another refresh, or a revocation, came first).
	// from is remembered as spent at at (SpentRefresh), and the spent
	// refresh tokens of before forgetBefore are forgotten.
	RefreshKey(ctx context.Context, k APIKey, from string, at, forgetBefore time.Time) error

	// SpentRefresh finds a refresh token rotated away: the key it belonged
	// to and when it was spent; ErrNotFound for any other.
	SpentRefresh(ctx context.Context, hash string) (keyID string, at time.Time, err error)

	// InsertOAuthClient stores a registered client, first deleting the
	// registrations never used that were made before forgetBefore.
	InsertOAuthClient(ctx context.Context, c OAuthClient, forgetBefore time.Time) error
	OAuthClient(ctx context.Context, id string) (OAuthClient, error)

	// UseOAuthClient marks a client as having obtained a token, so it does
	// not lapse.
	UseOAuthClient(ctx context.Context, id string, at time.Time) error

	// InsertOAuthCode stores an authorization code, first deleting the
	// codes expired at now.
	InsertOAuthCode(ctx context.Context, c OAuthCode, now time.Time) error

	// OAuthCode reads a code that has not expired yet, or ErrNotFound.
	OAuthCode(ctx context.Context, hash string, now time.Time) (OAuthCode, error)

	// SpendOAuthCode marks a code presented at at, giving key ("" for
	// none); ErrConflict if it was spent already.
	SpendOAuthCode(ctx context.Context, hash, key string, at time.Time) error

	// AddKeyUsage counts one execution and its cost against an API key
	// that is not revoked: ErrNotFound for a revoked or unknown key,
	// ErrSpendLimit if the cost would take it past its spend limit.
	AddKeyUsage(ctx context.Context, keyID string, cost USDC) error

	// RefundKeyUsage takes amount, refunded to the caller, back off the
	// key's total spent (never below zero), revoked or not: a key's spent
	// and its spend limit count what its calls cost in the end. The
	// execution stays counted.
	RefundKeyUsage(ctx context.Context, keyID string, amount USDC) error
}

// LedgerRows is the double-entry ledger: accounts, transactions, blocks and their anchors.
type LedgerRows interface {
	// EnsureAccounts creates the accounts that do not exist yet.
	EnsureAccounts(ctx context.Context, accounts ...Account) error
	Account(ctx context.Context, env Environment, address string) (Account, error)
	Accounts(ctx context.Context, env Environment) ([]Account, error)

	// Escrowed sums what a wallet's escrows hold: the cost of its
	// executions in flight (an escrow holds its execution's cost until the
	// execution ends, nothing after), in time that does not grow with the
	// wallet's history.
	Escrowed(ctx context.Context, env Environment, wallet string) (USDC, error)

	// InsertTransaction stores t with its postings and applies them to the
	// balances; it assigns t.Seq. accounts are those t concerns (every
	// account its postings name, and t.Accounts); those that do not exist
	// yet are created. A posting that would take an account the database
	// keeps non-negative below zero fails with ErrInsufficientFunds.
	InsertTransaction(ctx context.Context, t *LedgerTx, accounts ...Account) error
	Transaction(ctx context.Context, env Environment, id string) (LedgerTx, error)

	// Unposted lists the environment's transactions that the roll-up has
	// not visited yet (those of LedgerTx.RolledUp), oldest first, at most
	// limit. Their deferred credits are not in any balance yet.
	Unposted(ctx context.Context, env Environment, limit int) ([]LedgerTx, error)

	// PostCredits marks the transactions seqs as visited by the roll-up and
	// adds each credit to its account's balance, listing the transaction
	// among the account's (AccountTransactions). ErrConflict unless every
	// one of seqs was unposted.
	PostCredits(ctx context.Context, env Environment, seqs []int64, credits []Credit) error

	// AccountTransactions lists the newest transactions that touch address.
	AccountTransactions(ctx context.Context, env Environment, address string, limit int) ([]LedgerTx, error)

	// Airdrops lists the Airdrop transactions to wallet created at or
	// after since, oldest first.
	Airdrops(ctx context.Context, env Environment, wallet string, since time.Time) ([]LedgerTx, error)

	// Transactions lists the environment's transactions in seq order after
	// afterSeq, at most limit of them.
	Transactions(ctx context.Context, env Environment, afterSeq int64, limit int) ([]LedgerTx, error)

	// UnsealedTransactions lists transactions in no block yet, in seq order.
	UnsealedTransactions(ctx context.Context, env Environment, limit int) ([]LedgerTx, error)

	// LastBlock returns the highest block, or ErrNotFound before the first.
	LastBlock(ctx context.Context, env Environment) (Block, error)
	Block(ctx context.Context, env Environment, height int64) (Block, error)

	// InsertBlock stores b and marks the transactions (by Seq) as sealed
	// in it; ErrConflict unless every one of them was unsealed.
	InsertBlock(ctx context.Context, b Block, seqs []int64) error

	// BlockTransactions lists a block's transactions in seq order.
	BlockTransactions(ctx context.Context, env Environment, height int64) ([]LedgerTx, error)

	// SetBlockAnchor records the Solana transaction that anchors a block.
	SetBlockAnchor(ctx context.Context, env Environment, height int64, a Anchor) error

	// LastAnchoredBlock returns the highest anchored block, or ErrNotFound.
	LastAnchoredBlock(ctx context.Context, env Environment) (Block, error)
}

// CatalogRows is creators and their agents' listings, with the catalog's queries and figures.
type CatalogRows interface {
	// EnsureCreator creates the creator's profile if it does not exist yet.
	EnsureCreator(ctx context.Context, wallet string, at time.Time) error
	Creator(ctx context.Context, wallet string) (Creator, error)
	SetCreatorName(ctx context.Context, wallet, displayName string) error
	SetCreatorVerified(ctx context.Context, wallet string, verified bool) error
	InsertAgent(ctx context.Context, a Agent) error

	// UpdateAgent writes every field of a but its id, creator and created_at.
	UpdateAgent(ctx context.Context, a Agent) error
	Agent(ctx context.Context, id string) (Agent, error)

	// AgentTerms reads only what an execution is charged and dispatched
	// by: ID, Creator, Name, Price, EndpointURL, SigningPublicKey,
	// TimeoutSeconds, Status and SuspendedAt; the other fields are zero.
	AgentTerms(ctx context.Context, id string) (Agent, error)
	AgentsByCreator(ctx context.Context, wallet string) ([]Agent, error)

	// AgentListing returns an agent with its creator and its statistics in env.
	AgentListing(ctx context.Context, id string, env Environment) (AgentListItem, error)

	// ListAgents returns a page of active agents.
	ListAgents(ctx context.Context, q AgentQuery) ([]AgentListItem, error)

	// CountAgents counts the active agents that match q in all.
	CountAgents(ctx context.Context, q AgentQuery) (int, error)

	// TagCounts counts the listed agents (active, not suspended) of each
	// tag that has any, by tag.
	TagCounts(ctx context.Context) (map[string]int, error)

	// ReleasableCollateral lists, oldest delisting first, delisted agents
	// whose mainnet collateral account still holds money and that nothing
	// holds: delisted at or before cutoff, no mainnet execution of theirs
	// ended after it or still in flight, no mainnet dispute open.
	ReleasableCollateral(ctx context.Context, cutoff time.Time, limit int) ([]Agent, error)

	// AddAgentStats adds delta to an agent's statistics in env.
	AddAgentStats(ctx context.Context, id string, env Environment, delta AgentStats) error
}

// ExecutionRows is executions, their leases, results and Idempotency-Keys, and the figures read from them.
type ExecutionRows interface {
	InsertExecution(ctx context.Context, e Execution) error

	// UpdateExecution writes every mutable field of e.
	UpdateExecution(ctx context.Context, e Execution) error

	// FinishExecution writes e's final status and outcome (error, result,
	// tokens, time, completed_at) if the execution is not final yet, and
	// reports whether it was not: false means another process ended it.
	FinishExecution(ctx context.Context, e Execution) (bool, error)
	Execution(ctx context.Context, id string) (Execution, error)

	// ListExecutions returns a page of executions and the number of all
	// that match. The number of all of a wallet's executions, unfiltered,
	// is the sum of its keys' execution counts: an execution is inserted
	// in the transaction that counts it against its key (AddKeyUsage).
	ListExecutions(ctx context.Context, q ExecutionQuery) ([]Execution, int, error)

	// CreatorEarnings sums a creator's share of settled executions per UTC day.
	CreatorEarnings(ctx context.Context, creator string, env Environment) ([]DayEarnings, error)

	// CreatorEarningsByAgent sums a creator's share of settled executions
	// by agent.
	CreatorEarningsByAgent(ctx context.Context, creator string, env Environment) (map[string]USDC, error)

	// AgentRuns counts an agent's runs in env that began since since, per
	// UTC day, oldest first.
	AgentRuns(ctx context.Context, agentID string, env Environment, since time.Time) ([]DayRuns, error)

	// WalletSpending sums what a wallet's calls begun since since cost in
	// the end (refunds left out), per UTC day and agent, oldest day first.
	WalletSpending(ctx context.Context, wallet string, env Environment, since time.Time) ([]DaySpend, error)

	// ClaimExecutions takes for owner up to limit executions that are not
	// final and whose lease ran out before now, or whose owner is one of
	// silent, extending each lease to until and counting an attempt.
	// Concurrent claimers never get the same execution.
	ClaimExecutions(ctx context.Context, owner string, now, until time.Time, silent []string, limit int) ([]Execution, error)

	// RenewLeases extends to until the leases of those of ids that are
	// not final and that owner holds, in one statement per few hundred
	// ids, and returns the ids it renewed: one missing was taken over by
	// another replica, or is final.
	// A row another transaction holds is not waited for: it counts as
	// renewed if what is committed says owner holds it past held.
	RenewLeases(ctx context.Context, owner string, ids []string, held, until time.Time) (renewed []string, err error)

	// InFlight counts a wallet's executions pending or running in env, and
	// those of them opened with the key keyID.
	InFlight(ctx context.Context, wallet string, env Environment, keyID string) (all, key int, err error)

	// PutResult stores content under its CID once; a second put is a no-op.
	PutResult(ctx context.Context, cid, content string, at time.Time) error
	Result(ctx context.Context, cid string) (string, error)

	// ResultStart is the first n characters of a result: a preview that
	// does not read the whole of a large one into the process.
	ResultStart(ctx context.Context, cid string, n int) (string, error)

	// PublishedResult is Result for anyone: content that a public (not
	// private) execution names, else ErrNotFound.
	PublishedResult(ctx context.Context, cid string) (string, error)

	// InsertIdempotency stores a new key; ErrConflict when it exists.
	InsertIdempotency(ctx context.Context, i Idempotency) error
	Idempotency(ctx context.Context, wallet string, env Environment, key string) (Idempotency, error)
	CompleteIdempotency(ctx context.Context, wallet string, env Environment, key string, status int, body []byte) error
	DeleteIdempotency(ctx context.Context, wallet string, env Environment, key string) error
}

// DisputeRows is disputes.
type DisputeRows interface {
	InsertDispute(ctx context.Context, d Dispute) error
	UpdateDispute(ctx context.Context, d Dispute) error
	Dispute(ctx context.Context, id string) (Dispute, error)
	DisputeByExecution(ctx context.Context, executionID string) (Dispute, error)

	// ListDisputes lists disputes, oldest first.
	ListDisputes(ctx context.Context, q DisputeQuery) ([]Dispute, error)
}

// FundsRows is money that touches a chain: deposits, x402 payments, withdrawals and their nonce accounts.
type FundsRows interface {
	InsertDeposit(ctx context.Context, d Deposit) error
	Deposit(ctx context.Context, id string) (Deposit, error)

	// Deposits lists a wallet's deposits in env, newest first, and counts all.
	Deposits(ctx context.Context, wallet string, env Environment, limit, offset int) ([]Deposit, int, error)

	// WatchedDeposits lists the deposits of env whose reference the watcher
	// reads next: those created after since, credited in full or not (a
	// transfer that arrives after the amount was reached is credited too),
	// least recently checked first, at most limit, and at most perWallet of
	// one wallet.
	WatchedDeposits(ctx context.Context, env Environment, since time.Time, limit, perWallet int) ([]Deposit, error)

	// CheckedDeposit records that the watcher read a deposit's payments at
	// at, and decided every transaction up to the signature until.
	CheckedDeposit(ctx context.Context, id string, at time.Time, until string) error

	// DepositCounts counts wallet's deposits of env awaiting payment at now,
	// and those created after since.
	DepositCounts(ctx context.Context, wallet string, env Environment, now, since time.Time) (open, recent int, err error)

	// CreditDeposit claims p.Signature, once in the whole store (ErrConflict
	// when it was claimed already), and adds p.Amount to its deposit's
	// credits, turning it credited once they reach its amount.
	CreditDeposit(ctx context.Context, p DepositPayment) error

	// DepositPayments lists the payments credited to a deposit, oldest first.
	DepositPayments(ctx context.Context, depositID string) ([]DepositPayment, error)

	// DepositPayment finds the payment of a transaction's part, or of the
	// whole transaction, which answers for every part (and any part for
	// the whole, part 0).
	DepositPayment(ctx context.Context, signature string, part int) (DepositPayment, error)

	// DepositByReference finds the deposit of a reference.
	DepositByReference(ctx context.Context, reference string) (Deposit, error)

	// InsertPayment claims an x402 payment's signature for its execution:
	// ErrConflict when it was claimed before.
	InsertPayment(ctx context.Context, p Payment) error

	// UpdatePayment moves p from status from to p.Status (PaymentMove),
	// writing its reply, slot and settled_at; ErrConflict when it is no
	// longer in from (another process moved it first).
	UpdatePayment(ctx context.Context, p Payment, from PaymentStatus) error
	Payment(ctx context.Context, signature string) (Payment, error)

	// PaymentsInFlight sums the x402 payments from a token account that
	// are verified or sent.
	PaymentsInFlight(ctx context.Context, source string) (USDC, error)

	// PaymentOf is the x402 payment of an execution.
	PaymentOf(ctx context.Context, executionID string) (Payment, error)

	// PaidOutcomes counts agent's x402 executions begun at or after since
	// that ended with their payment settled: all of them, and those that
	// failed (paid before they ran, then refunded on the chain).
	PaidOutcomes(ctx context.Context, agentID string, since time.Time) (ended, failed int, err error)
	InsertWithdrawal(ctx context.Context, w Withdrawal) error

	// UpdateWithdrawal writes every mutable field of w (status, signature,
	// raw, nonce account and nonce, slot, reason, completed_at) while owner
	// holds its lease; ErrConflict when it does not, or when another
	// withdrawal not final holds w's nonce account.
	UpdateWithdrawal(ctx context.Context, w Withdrawal, owner string) error
	Withdrawal(ctx context.Context, id string) (Withdrawal, error)

	// Withdrawals lists a wallet's withdrawals in env, newest first, and counts all.
	Withdrawals(ctx context.Context, wallet string, env Environment, limit, offset int) ([]Withdrawal, int, error)

	// HeldNonceAccounts lists the nonce accounts of env that withdrawals
	// not final yet were signed on.
	HeldNonceAccounts(ctx context.Context, env Environment) ([]string, error)

	// NonceSlot is the latest slot where a withdrawal of env signed on the
	// nonce account landed; 0 if none did.
	NonceSlot(ctx context.Context, env Environment, account string) (uint64, error)

	// ClaimWithdrawals takes for owner up to limit withdrawals that are not
	// final and whose lease ran out before now, extending each lease to
	// until and counting an attempt. Concurrent claimers never get the same one.
	ClaimWithdrawals(ctx context.Context, owner string, now, until time.Time, limit int) ([]Withdrawal, error)
}

// DeliveryRows is what is sent to callers: webhooks, their secrets, and A2A push notifications.
type DeliveryRows interface {
	InsertWebhook(ctx context.Context, w Webhook) error

	// ClaimWebhooks takes undelivered webhooks due at now and created after
	// since, counts an attempt and moves next_at to until so that no other
	// claimer takes them meanwhile.
	ClaimWebhooks(ctx context.Context, now, until, since time.Time, limit int) ([]Webhook, error)
	UpdateWebhook(ctx context.Context, w Webhook) error
	Webhook(ctx context.Context, executionID string) (Webhook, error)

	// PutPushConfig stores an A2A push config, replacing the task's config
	// of the same id (and its delivery's progress).
	PutPushConfig(ctx context.Context, p PushConfig) error
	PushConfig(ctx context.Context, taskID, id string) (PushConfig, error)
	PushConfigs(ctx context.Context, taskID string) ([]PushConfig, error)

	// DeletePushConfig deletes one, or answers ErrNotFound.
	DeletePushConfig(ctx context.Context, taskID, id string) error

	// ClaimPushes is ClaimWebhooks for the push configs of ended tasks.
	ClaimPushes(ctx context.Context, now, until, since time.Time, limit int) ([]PushConfig, error)

	// UpdatePush records a delivery's progress, unless the config was
	// replaced since it was claimed (its CreatedAt differs); a delivered
	// config's token and credentials are erased.
	UpdatePush(ctx context.Context, p PushConfig) error

	// InsertWebhookSecret stores a wallet's first webhook secret in an
	// environment, unless it has one (which then stays).
	InsertWebhookSecret(ctx context.Context, s WebhookSecret) error

	// WebhookSecret reads a wallet's webhook secret in env, or ErrNotFound.
	WebhookSecret(ctx context.Context, wallet string, env Environment) (WebhookSecret, error)
	UpdateWebhookSecret(ctx context.Context, s WebhookSecret) error
}

// Opening is what Store.OpenExecution writes.
type Opening struct {
	// Execution carries its agent's terms as they were read: AgentName,
	// Creator, EndpointURL, SigningPublicKey, its prices (Base, Per1k) and
	// what it holds (Held, its Cost until it closes).
	Execution   Execution
	Idempotency *Idempotency // nil without an Idempotency-Key
	Escrow      LedgerTx     // the EscrowOpened transaction
	Accounts    []Account    // the accounts Escrow concerns
	// MaxKeyInFlight and MaxWalletInFlight, when above 0, are how many of
	// its key's, and of its wallet's in its environment, executions may
	// be pending or running at once, this one included.
	MaxKeyInFlight, MaxWalletInFlight int
}

// AtTerms reports whether an execution was priced and addressed by a's
// current terms, and a takes executions.
func (e Execution) AtTerms(a Agent) bool {
	return a.Status == AgentActive && a.SuspendedAt == nil && a.Price == e.Base && a.Per1k == e.Per1k &&
		e.Cost == e.Held && e.Held <= a.Hold() && e.Held >= a.Price && (e.Per1k > 0 || e.Held == a.Price) && a.Creator == e.Creator &&
		a.Name == e.AgentName && a.EndpointURL == e.EndpointURL && a.SigningPublicKey == e.SigningPublicKey
}

// CheckTerms refuses, inside tx, an execution whose agent no longer has
// the terms it is opened at, or takes none (ErrTermsChanged).
func CheckTerms(ctx context.Context, tx Tx, e Execution) error {
	a, err := tx.Catalog.AgentTerms(ctx, e.AgentID)
	if errors.Is(err, ErrNotFound) || (err == nil && !e.AtTerms(a)) {
		return fmt.Errorf("agent %s: %w", e.AgentID, ErrTermsChanged)
	}
	return err
}

// Closing is what Store.CloseExecution writes.
type Closing struct {
	// Execution is final, with its outcome and CompletedAt; when it
	// completed, Execution.Result is published under Execution.ResultCID
	// (an empty result is a result).
	Execution Execution
	Record    LedgerTx  // ExecutionRecord or EscrowRefunded
	Accounts  []Account // the accounts Record concerns
	Webhook   *Webhook  // the delivery to make, if the caller asked for one
}

// Write writes c inside tx, statement by statement: false, and nothing
// written, when the execution was final already. An engine that can do it
// in one round trip does that instead (Store.CloseExecution).
func (c *Closing) Write(ctx context.Context, tx Tx) (bool, error) {
	if ok, err := tx.Executions.FinishExecution(ctx, c.Execution); err != nil || !ok {
		return false, err
	}
	if c.Execution.Status == ExecCompleted {
		if err := tx.Executions.PutResult(ctx, c.Execution.ResultCID, c.Execution.Result, *c.Execution.CompletedAt); err != nil {
			return false, err
		}
	}
	if err := tx.Ledger.InsertTransaction(ctx, &c.Record, c.Accounts...); err != nil {
		return false, err
	}
	// The key's total spent gives back what the escrow returned: a failed
	// call's hold, the unused part of a metered call's.
	back := c.Execution.Returned()
	if c.Execution.Status != ExecCompleted {
		back = c.Execution.Cost
	}
	if back > 0 {
		if err := tx.Access.RefundKeyUsage(ctx, c.Execution.KeyID, back); err != nil {
			return false, err
		}
	}
	if c.Webhook != nil {
		if err := tx.Deliveries.InsertWebhook(ctx, *c.Webhook); err != nil {
			return false, err
		}
	}
	return true, nil
}

// AgentListItem is an agent with what a listing shows beside it.
type AgentListItem struct {
	Agent   Agent
	Creator Creator
	Stats   AgentStats
}

// Sorts of GET /v1/agents (CONTRACT §7); ties break by agent id ascending.
const (
	SortTotalExecutions = "total_executions"
	SortSuccessRate     = "success_rate"
	SortPriceAsc        = "price_asc"
	SortPriceDesc       = "price_desc"
	SortCreatedAt       = "created_at"
	// SortRelevance ranks full-text matches, weighted by reliability; it is
	// what a query with q and no sort gets.
	SortRelevance = "relevance"
)

// AgentQuery selects active agents (CONTRACT §7).
type AgentQuery struct {
	Environment    Environment
	Tags           []string // all of them
	MinSuccessRate *float64
	MinExecutions  *int64
	VerifiedOnly   bool
	Q              string
	Sort           string
	Limit, Offset  int
}
