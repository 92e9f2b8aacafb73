package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/keyfile"
)

// A deposit's solana_pay_url is paid by a wallet written with the official
// Solana Pay library (@solana/pay), not by our own code: it reads the URL
// with parseURL, builds the transfer with createTransfer from what it read,
// signs and sends it, and then finds it by the reference and validates it
// with the library's merchant side (testdata/solanapay-wallet.mjs). crtxd
// credits exactly the amount asked, and the reserves still match the chain
// (startChain checks them at the end). The library comes from npm:
// $CRTX_SOLANA_PAY is a node_modules folder holding @solana/pay and the
// Solana libraries it builds on, which .ci/run installs at pinned versions.
func TestSolanaPayWallet(t *testing.T) {
	ctx := context.Background()
	// Before the network starts, so that a run without the library skips
	// at once.
	cmd := nodeScript(ctx, t, "CRTX_SOLANA_PAY", "@solana/pay", "solanapay-wallet.mjs")
	e := startChain(t)
	w := e.payer(usdc("40"))
	c := e.signIn(w)
	// All six decimals, so that the wallet's decimal arithmetic is shown
	// to land on the micro-USDC asked.
	amount := usdc("12.345678")
	d, err := c.NewDeposit(ctx, crtx.Devnet, amount)
	if err != nil {
		t.Fatal(err)
	}
	// The payer's key in a file of the Solana CLI's format, as a wallet
	// holds one.
	key := filepath.Join(t.TempDir(), "payer.json")
	if err := keyfile.Write(key, w.key); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "CRTX_SOLANA_PAY_URL="+d.SolanaPayURL, "CRTX_RPC="+e.net.RPC, "CRTX_PAYER_KEYFILE="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("%s\n%s%s", d.SolanaPayURL, stdout.Bytes(), stderr.Bytes())
	if err != nil {
		t.Fatalf("the Solana Pay wallet failed: %v", err)
	}

	var read struct {
		Recipient, Amount, SPLToken, Label, Message, Memo, Signature, Found string
		Reference                                                           []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &read); err != nil {
		t.Fatalf("the wallet printed %q: %v", stdout.Bytes(), err)
	}
	readAmount, err := crtx.ParseUSDC(read.Amount)
	if err != nil || read.Recipient != e.treasury || readAmount != amount || read.SPLToken != e.mint ||
		!slices.Equal(read.Reference, []string{d.Reference}) || read.Memo != d.Memo ||
		read.Label != "crtx" || read.Message != "Add funds to your crtx wallet" {
		t.Fatalf("@solana/pay's parseURL read %+v (amount %v) from %s; sent recipient %s, amount %s, mint %s, reference %s, memo %q",
			read, err, d.SolanaPayURL, e.treasury, amount, e.mint, d.Reference, d.Memo)
	}

	got := e.credited(c, d.DepositID, amount)
	if got.Status != crtx.DepositCredited || len(got.Payments) != 1 || got.Payments[0].Signature != read.Signature ||
		read.Found != read.Signature {
		t.Fatalf("credited deposit %+v; the wallet sent %s, findReference found %s", got, read.Signature, read.Found)
	}
	wb, err := c.Wallet(ctx)
	if err != nil || wb.Balances[crtx.Devnet].Available != amount {
		t.Fatalf("balance %+v, %v", wb, err)
	}
}
