package surfnet

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Decimals is the decimals of the mints NewMint creates: USDC's.
const Decimals = 6

// Airdrop gives address lamports from the network's faucet and waits until
// the airdrop is finalized (n.Await).
func (n *Net) Airdrop(ctx context.Context, address string, lamports uint64) error {
	to, err := solana.PublicKeyFromBase58(address)
	if err != nil {
		return fmt.Errorf("address %q: %w", address, err)
	}
	sig, err := n.client.RequestAirdrop(ctx, to, lamports, rpc.CommitmentFinalized)
	if err != nil {
		return fmt.Errorf("airdrop to %s: %w", address, err)
	}
	return n.AwaitFinalized(ctx, sig.String())
}

// NewMint creates an SPL token mint of 6 decimals, as USDC's, of which
// authority, which pays for it and must hold SOL, is the mint authority.
func (n *Net) NewMint(ctx context.Context, authority ed25519.PrivateKey) (string, error) {
	_, mintKey, err := ed25519.GenerateKey(nil)
	if err != nil {
		return "", err
	}
	space := uint64(token.MINT_SIZE)
	rent, err := n.client.GetMinimumBalanceForRentExemption(ctx, space, rpc.CommitmentConfirmed)
	if err != nil {
		return "", err
	}
	payer := solana.PrivateKey(authority).PublicKey()
	mint := solana.PrivateKey(mintKey).PublicKey()
	if _, err := n.Send(ctx, []solana.Instruction{
		system.NewCreateAccountInstruction(rent, space, solana.TokenProgramID, payer, mint).Build(),
		token.NewInitializeMint2Instruction(Decimals, payer, solana.PublicKey{}, mint).Build(),
	}, authority, mintKey); err != nil {
		return "", fmt.Errorf("creating a mint: %w", err)
	}
	return mint.String(), nil
}

// SetMint makes the account at address an SPL Token mint of Decimals with
// authority as its mint authority (and no freeze authority), as Surfnet's
// surfnet_setAccount cheatcode writes any account: a local network's test
// USDC at the address USDC has on a public cluster, which x402's clients
// know.
func (n *Net) SetMint(ctx context.Context, address string, authority ed25519.PrivateKey) error {
	var mint [token.MINT_SIZE]byte             // the Mint layout, little-endian
	binary.LittleEndian.PutUint32(mint[0:], 1) // mint_authority: Some
	copy(mint[4:36], authority.Public().(ed25519.PublicKey))
	mint[44], mint[45] = Decimals, 1 // decimals, is_initialized
	rent, err := n.client.GetMinimumBalanceForRentExemption(ctx, token.MINT_SIZE, rpc.CommitmentConfirmed)
	if err != nil {
		return err
	}
	var ignored any
	if err := n.client.RPCCallForInto(ctx, &ignored, "surfnet_setAccount", []any{address, map[string]any{
		"lamports": rent, "data": hex.EncodeToString(mint[:]), "owner": solana.TokenProgramID.String()}}); err != nil {
		return fmt.Errorf("setting the mint at %s: %w", address, err)
	}
	return nil
}

// MintTo mints amount of mint into wallet's associated token account,
// creating the account if it is missing; the authority pays. It returns
// the transaction's signature.
func (n *Net) MintTo(ctx context.Context, mint string, authority ed25519.PrivateKey, wallet string, amount crtx.USDC) (string, error) {
	m, err1 := solana.PublicKeyFromBase58(mint)
	w, err2 := solana.PublicKeyFromBase58(wallet)
	if err := errors.Join(err1, err2); err != nil {
		return "", fmt.Errorf("mint %q or wallet %q: %w", mint, wallet, err)
	}
	payer := solana.PrivateKey(authority).PublicKey()
	account, _, err := solana.FindAssociatedTokenAddress(w, m)
	if err != nil {
		return "", err
	}
	sig, err := n.Send(ctx, []solana.Instruction{
		ata.NewCreateIdempotentInstruction(payer, w, m).Build(),
		token.NewMintToCheckedInstruction(uint64(amount), Decimals, m, account, payer, nil).Build(),
	}, authority)
	if err != nil {
		return "", fmt.Errorf("minting to %s: %w", wallet, err)
	}
	return sig, nil
}

// TokenBalance is what a token account holds; an account that does not
// exist holds nothing.
func (n *Net) TokenBalance(ctx context.Context, tokenAccount string) (crtx.USDC, error) {
	a, err := solana.PublicKeyFromBase58(tokenAccount)
	if err != nil {
		return 0, fmt.Errorf("token account %q: %w", tokenAccount, err)
	}
	info, err := n.client.GetAccountInfoWithOpts(ctx, a, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	if errors.Is(err, rpc.ErrNotFound) || (err == nil && info.Value == nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("token account %s: %w", tokenAccount, err)
	}
	b, err := n.client.GetTokenAccountBalance(ctx, a, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, fmt.Errorf("balance of %s: %w", tokenAccount, err)
	}
	v, err := strconv.ParseInt(b.Value.Amount, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("balance of %s: %w", tokenAccount, err)
	}
	return crtx.USDC(v), nil
}

// BlockHeight is the network's finalized block height.
func (n *Net) BlockHeight(ctx context.Context) (uint64, error) {
	return n.client.GetBlockHeight(ctx, rpc.CommitmentFinalized)
}

// Balance is the lamports address holds.
func (n *Net) Balance(ctx context.Context, address string) (uint64, error) {
	a, err := solana.PublicKeyFromBase58(address)
	if err != nil {
		return 0, fmt.Errorf("address %q: %w", address, err)
	}
	b, err := n.client.GetBalance(ctx, a, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, err
	}
	return b.Value, nil
}

// Send signs instructions with signers, the first paying the fee, sends
// them and waits until they are finalized (n.Await); it returns the
// signature.
func (n *Net) Send(ctx context.Context, instructions []solana.Instruction, signers ...ed25519.PrivateKey) (string, error) {
	latest, err := n.client.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return "", err
	}
	payer := solana.PrivateKey(signers[0]).PublicKey()
	tx, err := solana.NewTransaction(instructions, latest.Value.Blockhash, solana.TransactionPayer(payer))
	if err != nil {
		return "", err
	}
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		for _, s := range signers {
			if p := solana.PrivateKey(s); p.PublicKey() == k {
				return &p
			}
		}
		return nil
	}); err != nil {
		return "", err
	}
	return n.SendSigned(ctx, tx)
}

// SendSigned sends a signed transaction and waits until it is finalized.
func (n *Net) SendSigned(ctx context.Context, tx *solana.Transaction) (string, error) {
	sig, err := n.client.SendTransaction(ctx, tx)
	if err != nil {
		return "", fmt.Errorf("send: %w", err)
	}
	return sig.String(), n.AwaitFinalized(ctx, sig.String())
}

// ErrFailed is returned for a transaction the chain ran and refused.
var ErrFailed = errors.New("transaction failed")

// AwaitFinalized polls the signature's status, as the network ignores the
// commitment parameter, until it is finalized (or reaches n.Await); a
// transaction that failed is ErrFailed.
func (n *Net) AwaitFinalized(ctx context.Context, signature string) error {
	sig, err := solana.SignatureFromBase58(signature)
	if err != nil {
		return fmt.Errorf("signature %q: %w", signature, err)
	}
	var failed error
	if err := n.waitFor(ctx, "transaction "+signature+" to be finalized", func(ctx context.Context) (bool, error) {
		st, err := n.client.GetSignatureStatuses(ctx, true, sig)
		if err != nil || len(st.Value) == 0 || st.Value[0] == nil {
			return false, err
		}
		if st.Value[0].Err != nil {
			failed = fmt.Errorf("%w: %s: %v", ErrFailed, signature, st.Value[0].Err)
			return true, nil
		}
		switch st.Value[0].ConfirmationStatus {
		case rpc.ConfirmationStatusFinalized:
			return true, nil
		case rpc.ConfirmationStatusConfirmed:
			return n.Await == rpc.ConfirmationStatusConfirmed, nil
		}
		return false, nil
	}); err != nil {
		return err
	}
	return failed
}
