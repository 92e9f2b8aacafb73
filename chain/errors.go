package chain

import (
	"errors"

	"github.com/gagliardetto/solana-go/rpc"
)

var (
	// ErrConfig is wrapped by a configuration the cluster cannot work
	// with: a missing URL, a malformed key, a mint that is not USDC-like.
	ErrConfig = errors.New("chain configuration")
	// ErrAddress is wrapped by an address that is not a base58 public key.
	ErrAddress = errors.New("invalid Solana address")
	// ErrAmount is wrapped by an amount a transfer cannot carry.
	ErrAmount = errors.New("invalid transfer amount")
	// ErrNotSigned is wrapped by bytes that are not a signed transaction.
	ErrNotSigned = errors.New("not a signed transaction")
	// ErrFailed is wrapped when a transaction landed and failed.
	ErrFailed = errors.New("transaction failed on chain")
	// ErrBehind is wrapped when a node answered from before a slot the
	// answer must include: it lags, and the read is tried again later.
	ErrBehind = errors.New("the node is behind")
	// ErrExpired is wrapped when a transaction's blockhash expired before
	// it landed: it never will.
	ErrExpired = errors.New("transaction expired unsent")
)

func isNotFound(err error) bool { return errors.Is(err, rpc.ErrNotFound) }
