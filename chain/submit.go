package chain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// resendEvery is how often a transaction awaited and not yet seen is sent
// again: a node may drop it, and the same bytes land at most once.
const resendEvery = 2 * time.Second

// attempts is how many blockhashes a submission signs with before it gives
// up: each expires only when the cluster moved past it without the
// transaction.
const attempts = 3

// signed is a signed transaction and the block height past which it can
// never land.
type signed struct {
	sig       solana.Signature
	raw       []byte
	lastValid uint64
}

// sign builds instructions into a transaction on a recent blockhash, the
// first signer paying the fee, and signs it with every signer.
func sign(ctx context.Context, cl *rpc.Client, instructions []solana.Instruction, signers ...solana.PrivateKey) (signed, error) {
	latest, err := cl.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return signed{}, fmt.Errorf("reading a recent blockhash: %w", err)
	}
	tx, err := signOn(latest.Value.Blockhash, instructions, signers...)
	tx.lastValid = latest.Value.LastValidBlockHeight
	return tx, err
}

// signOn builds instructions into a transaction on blockhash (a recent
// one, or a durable nonce), the first signer paying the fee, and signs it
// with every signer.
func signOn(blockhash solana.Hash, instructions []solana.Instruction, signers ...solana.PrivateKey) (signed, error) {
	tx, err := solana.NewTransaction(instructions, blockhash, solana.TransactionPayer(signers[0].PublicKey()))
	if err != nil {
		return signed{}, fmt.Errorf("building the transaction: %w", err)
	}
	sigs, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		for _, s := range signers {
			if s.PublicKey() == k {
				return &s
			}
		}
		return nil
	})
	if err != nil {
		return signed{}, fmt.Errorf("signing the transaction: %w", err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return signed{}, fmt.Errorf("encoding the transaction: %w", err)
	}
	return signed{sig: sigs[0], raw: raw}, nil
}

// submit signs, sends and awaits instructions until they are finalized,
// signing anew on a fresh blockhash when one expires; it returns the
// signature and slot of the transaction that landed.
func submit(ctx context.Context, cl *rpc.Client, poll time.Duration, instructions []solana.Instruction, signers ...solana.PrivateKey) (solana.Signature, uint64, error) {
	var err error
	for range attempts {
		var tx signed
		tx, err = sign(ctx, cl, instructions, signers...)
		if err != nil {
			return solana.Signature{}, 0, err
		}
		// Preflight reports a transaction that cannot succeed before it
		// costs a fee.
		if _, err := cl.SendRawTransactionWithOpts(ctx, tx.raw, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentConfirmed}); err != nil && !alreadyProcessed(err) {
			return solana.Signature{}, 0, fmt.Errorf("sending %s: %w", tx.sig, err)
		}
		var slot uint64
		slot, err = await(ctx, cl, poll, tx, rpc.ConfirmationStatusFinalized)
		if errors.Is(err, ErrExpired) {
			continue
		}
		return tx.sig, slot, err
	}
	return solana.Signature{}, 0, err
}

func (c *Client) submit(ctx context.Context, instructions []solana.Instruction, signers ...solana.PrivateKey) (solana.Signature, uint64, error) {
	return submit(ctx, c.rpc, c.poll, instructions, signers...)
}

// await polls tx's status until it is finalized (or, with enough
// "confirmed", confirmed), resending its bytes while it is unseen. The height is read before the status: a transaction not
// seen after the finalized height passed its last valid one never lands.
func await(ctx context.Context, cl *rpc.Client, poll time.Duration, tx signed, enough rpc.ConfirmationStatusType) (uint64, error) {
	sent := time.Now()
	for {
		height, err := cl.GetBlockHeight(ctx, rpc.CommitmentFinalized)
		if err != nil {
			return 0, fmt.Errorf("reading the block height: %w", err)
		}
		st, err := status(ctx, cl, tx.sig)
		if err != nil {
			return 0, err
		}
		switch {
		case st.Found && st.Err != "" && (st.Finalized || enough == rpc.ConfirmationStatusFinalized):
			// Waiting for confirmed, a failure is final only once
			// finalized: seen earlier it may be a fork's, and the same
			// bytes may land on the one that wins.
			return st.Slot, fmt.Errorf("%w: %s: %s", ErrFailed, tx.sig, st.Err)
		case st.Found && st.Err == "" && (st.Finalized || (enough == rpc.ConfirmationStatusConfirmed && st.Confirmed)):
			return st.Slot, nil
		case !st.Found && height > tx.lastValid:
			return 0, fmt.Errorf("%w: %s, valid until block %d, not seen at %d", ErrExpired, tx.sig, tx.lastValid, height)
		case !st.Found && time.Since(sent) > resendEvery:
			_, _ = cl.SendRawTransactionWithOpts(ctx, tx.raw, rpc.TransactionOpts{SkipPreflight: true})
			sent = time.Now()
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// alreadyProcessed reports a send refused because the cluster already
// holds the transaction: the preflight's structured error, not its message.
func alreadyProcessed(err error) bool {
	var rerr *jsonrpc.RPCError
	if !errors.As(err, &rerr) {
		return false
	}
	data, ok := rerr.Data.(map[string]any)
	if !ok {
		return false
	}
	return data["err"] == "AlreadyProcessed"
}
