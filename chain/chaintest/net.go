// Package chaintest runs a real local Solana network for tests: Surfnet,
// from the npm package @solana/surfpool-linux-x64-gnu, started through node.
// Its helpers fund wallets and create and mint tokens with real transactions
// built with solana-go, never with the network's cheat codes, so what a test
// reads back is what the programs on the chain did.
package chaintest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Decimals is the decimals of the mints NewMint creates: USDC's.
const Decimals = 6

// Env names the node_modules folder that holds the Surfnet package, as
// .ci/run installs it.
const Env = "CRTX_SURFPOOL"

const pkg = "@solana/surfpool-linux-x64-gnu"

//go:embed surfnet.js
var script string

// Net is a running Surfnet.
type Net struct {
	// RPC is its JSON-RPC URL.
	RPC    string
	client *rpc.Client
	stop   func()
}

// Stop stops the network before the test ends: a cluster that went away.
func (n *Net) Stop() { n.stop() }

// Option changes the network Start runs.
type Option func(*options)

type options struct{ slot time.Duration }

// SlotTime sets how long a slot lasts (20 ms unless set): a blockhash
// expires after 150 of them.
func SlotTime(d time.Duration) Option { return func(o *options) { o.slot = d } }

// Start runs a Surfnet for the test and stops it when the test ends. Without
// node or the package it skips the test on a developer's machine, and fails
// it in CI.
func Start(t testing.TB, opts ...Option) *Net {
	t.Helper()
	o := options{slot: 20 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	dir := os.Getenv(Env)
	_, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(dir, pkg)); dir == "" || err != nil || nodeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set to a node_modules folder holding %s, or node is missing; chain tests may not be skipped in CI", Env, pkg)
		}
		t.Skipf("set %s to a node_modules folder holding %s (as .ci/run installs it), and install node, to run this test", Env, pkg)
	}
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), Env+"="+dir, "CRTX_SURFNET_SLOT_MS="+strconv.FormatInt(o.slot.Milliseconds(), 10))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		// Closing stdin asks the script to stop the network; a script that
		// does not is killed.
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	t.Cleanup(stop)
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var started struct {
		RPCURL string `json:"rpcUrl"`
	}
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatal("surfnet exited before printing its RPC URL")
		}
		if err := json.Unmarshal([]byte(l), &started); err != nil || started.RPCURL == "" {
			t.Fatalf("surfnet printed %q, not its RPC URL: %v", l, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("surfnet did not start within a minute")
	}
	n := &Net{RPC: started.RPCURL, client: rpc.New(started.RPCURL), stop: stop}
	// A network whose first block is not yet produced has no blockhash to
	// sign with.
	n.waitFor(t, "the first block", func(ctx context.Context) (bool, error) {
		h, err := n.client.GetBlockHeight(ctx, rpc.CommitmentFinalized)
		return h > 0, err
	})
	return n
}

// Airdrop gives address lamports from the network's faucet and waits until
// the airdrop is finalized.
func (n *Net) Airdrop(t testing.TB, address string, lamports uint64) {
	t.Helper()
	to := pubkey(t, address)
	sig, err := n.client.RequestAirdrop(background(), to, lamports, rpc.CommitmentFinalized)
	if err != nil {
		t.Fatalf("airdrop to %s: %v", address, err)
	}
	n.awaitFinalized(t, sig)
}

// Drain sends all of key's SOL but keep (and the fee) to a new address:
// a wallet running out of SOL, as a treasury does when nobody tops it up.
func (n *Net) Drain(t testing.TB, key ed25519.PrivateKey, keep uint64) {
	t.Helper()
	from := solana.PrivateKey(key).PublicKey()
	bal, err := n.client.GetBalance(background(), from, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	const fee = 5000
	if bal.Value <= keep+fee {
		return
	}
	to := pubkey(t, Address(NewKey(t)))
	n.Send(t, []solana.Instruction{system.NewTransferInstruction(bal.Value-keep-fee, from, to).Build()}, key)
}

// BlockHeight is the network's finalized block height.
func (n *Net) BlockHeight(t testing.TB) uint64 {
	t.Helper()
	h, err := n.client.GetBlockHeight(background(), rpc.CommitmentFinalized)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// NewMint creates an SPL token mint of 6 decimals, as USDC's, and returns
// its address and its mint authority, which also paid for it.
func (n *Net) NewMint(t testing.TB) (mint string, authority ed25519.PrivateKey) {
	t.Helper()
	authority = NewKey(t)
	mintKey := NewKey(t)
	n.Airdrop(t, Address(authority), solana.LAMPORTS_PER_SOL)
	space := uint64(token.MINT_SIZE)
	rent, err := n.client.GetMinimumBalanceForRentExemption(background(), space, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	payer := solana.PrivateKey(authority).PublicKey()
	mintAddress := solana.PrivateKey(mintKey).PublicKey()
	n.Send(t, []solana.Instruction{
		system.NewCreateAccountInstruction(rent, space, solana.TokenProgramID, payer, mintAddress).Build(),
		token.NewInitializeMint2Instruction(Decimals, payer, solana.PublicKey{}, mintAddress).Build(),
	}, authority, mintKey)
	return mintAddress.String(), authority
}

// MintTo mints amount of mint into wallet's associated token account,
// creating the account if it is missing; the authority pays.
func (n *Net) MintTo(t testing.TB, mint string, authority ed25519.PrivateKey, wallet string, amount crtx.USDC) {
	t.Helper()
	m, w := pubkey(t, mint), pubkey(t, wallet)
	payer := solana.PrivateKey(authority).PublicKey()
	account, _, err := solana.FindAssociatedTokenAddress(w, m)
	if err != nil {
		t.Fatal(err)
	}
	n.Send(t, []solana.Instruction{
		ata.NewCreateIdempotentInstruction(payer, w, m).Build(),
		token.NewMintToCheckedInstruction(uint64(amount), Decimals, m, account, payer, nil).Build(),
	}, authority)
}

// TokenBalance is what a token account holds; an account that does not
// exist holds nothing.
func (n *Net) TokenBalance(t testing.TB, tokenAccount string) crtx.USDC {
	t.Helper()
	info, err := n.client.GetAccountInfoWithOpts(background(), pubkey(t, tokenAccount), &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	if errors.Is(err, rpc.ErrNotFound) || (err == nil && info.Value == nil) {
		return 0
	}
	if err != nil {
		t.Fatalf("token account %s: %v", tokenAccount, err)
	}
	b, err := n.client.GetTokenAccountBalance(background(), pubkey(t, tokenAccount), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatalf("balance of %s: %v", tokenAccount, err)
	}
	v, err := strconv.ParseInt(b.Value.Amount, 10, 64)
	if err != nil {
		t.Fatalf("balance of %s: %v", tokenAccount, err)
	}
	return crtx.USDC(v)
}

// Send signs instructions with signers, the first paying the fee, sends
// them and waits until they are finalized; it returns the signature.
func (n *Net) Send(t testing.TB, instructions []solana.Instruction, signers ...ed25519.PrivateKey) string {
	t.Helper()
	latest, err := n.client.GetLatestBlockhash(background(), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	payer := solana.PrivateKey(signers[0]).PublicKey()
	tx, err := solana.NewTransaction(instructions, latest.Value.Blockhash, solana.TransactionPayer(payer))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		for _, s := range signers {
			if p := solana.PrivateKey(s); p.PublicKey() == k {
				return &p
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sig, err := n.client.SendTransaction(background(), tx)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	n.awaitFinalized(t, sig)
	return sig.String()
}

// SignAndSend does what a wallet does with a transaction it was handed
// (a Solana Pay transaction request's): it signs it as signer, sends it,
// and waits until it is finalized.
func (n *Net) SignAndSend(t testing.TB, raw []byte, signer ed25519.PrivateKey) string {
	t.Helper()
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	partialSign(t, tx, signer)
	sig, err := n.client.SendTransaction(background(), tx)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	n.awaitFinalized(t, sig)
	return sig.String()
}

// partialSign signs tx as key alone, leaving the other signatures as they
// are: what a wallet does with a transaction someone else pays for.
func partialSign(t testing.TB, tx *solana.Transaction, key ed25519.PrivateKey) {
	t.Helper()
	k := solana.PrivateKey(key)
	if _, err := tx.PartialSign(func(pub solana.PublicKey) *solana.PrivateKey {
		if pub == k.PublicKey() {
			return &k
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// AwaitFinalized waits until the transaction of signature is finalized; a
// transaction that failed fails the test.
func (n *Net) AwaitFinalized(t testing.TB, signature string) {
	t.Helper()
	sig, err := solana.SignatureFromBase58(signature)
	if err != nil {
		t.Fatal(err)
	}
	n.awaitFinalized(t, sig)
}

// awaitFinalized polls the signature's status, as the network ignores the
// commitment parameter, until it is finalized; a transaction that failed
// fails the test.
func (n *Net) awaitFinalized(t testing.TB, sig solana.Signature) {
	t.Helper()
	n.waitFor(t, "transaction "+sig.String()+" to be finalized", func(ctx context.Context) (bool, error) {
		st, err := n.client.GetSignatureStatuses(ctx, true, sig)
		if err != nil || len(st.Value) == 0 || st.Value[0] == nil {
			return false, err
		}
		if st.Value[0].Err != nil {
			t.Fatalf("transaction %s failed: %v", sig, st.Value[0].Err)
		}
		return st.Value[0].ConfirmationStatus == rpc.ConfirmationStatusFinalized, nil
	})
}

// waitFor polls done until it reports true, for at most 30 s.
func (n *Net) waitFor(t testing.TB, what string, done func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last error
	for {
		ok, err := done(ctx)
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error: %v)", what, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// NewKey is a new Ed25519 key, a Solana wallet.
func NewKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// Address is the wallet address of key.
func Address(key ed25519.PrivateKey) string {
	return solana.PrivateKey(key).PublicKey().String()
}

func pubkey(t testing.TB, address string) solana.PublicKey {
	t.Helper()
	k, err := solana.PublicKeyFromBase58(address)
	if err != nil {
		t.Fatalf("address %q: %v", address, err)
	}
	return k
}

// background is the context of the helpers' calls: not the test's, which
// ends before its cleanups run, and they check the chain too.
func background() context.Context { return context.Background() }
