package e2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/crtx-market/crtx/internal/nodetest"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
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
	cmd := nodetest.Script(ctx, t, "CRTX_SOLANA_PAY", "@solana/pay", "solanapay-wallet.mjs")
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
	read := payWithSolanaPay(t, cmd, e, w, d)
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

// walletRead is what testdata/solanapay-wallet.mjs prints: what
// @solana/pay read of the request, the signature it sent, the one
// findReference found, and (for a transaction request) what the link's GET
// answered.
type walletRead struct {
	Recipient, Amount, SPLToken, Label, Message, Memo, Signature, Found string
	Reference                                                           []string
	Shown                                                               struct{ Label, Icon string }
}

// payWithSolanaPay runs the wallet script cmd as w to pay d and returns
// what it read.
func payWithSolanaPay(t *testing.T, cmd *exec.Cmd, e *chainEnv, w wallet, d api.Deposit) walletRead {
	t.Helper()
	// The payer's key in a file of the Solana CLI's format, as a wallet
	// holds one.
	key := filepath.Join(t.TempDir(), "payer.json")
	if err := keyfile.Write(key, w.key); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "CRTX_SOLANA_PAY_URL="+d.SolanaPayURL, "CRTX_RPC="+e.net.RPC, "CRTX_PAYER_KEYFILE="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("%s\n%s%s", d.SolanaPayURL, stdout.Bytes(), stderr.Bytes())
	if err != nil {
		t.Fatalf("the Solana Pay wallet failed: %v", err)
	}
	var read walletRead
	if err := json.Unmarshal(stdout.Bytes(), &read); err != nil {
		t.Fatalf("the wallet printed %q: %v", stdout.Bytes(), err)
	}
	return read
}

// A deposit's transaction_request_url is a Solana Pay transaction request
// that the official library's wallet side follows (testdata/
// solanapay-wallet.mjs with CRTX_TRANSACTION_REQUEST_URL): the link's GET
// gives the label and icon, fetchTransaction gets the transaction for the
// payer's account, and the payer signs and sends it. It pays what the
// deposit asks, with its memo and reference (validateTransfer checks them
// against the transfer request), and crtxd credits it. A closed deposit,
// an unknown one and an account that is no address are refused in words,
// and any origin may ask, as wallets run anywhere.
func TestSolanaPayTransactionRequest(t *testing.T) {
	ctx := context.Background()
	cmd := nodetest.Script(ctx, t, "CRTX_SOLANA_PAY", "@solana/pay", "solanapay-wallet.mjs")
	e := startChain(t)
	w := e.payer(usdc("10"))
	c := e.signIn(w)
	amount := usdc("7.25")
	d, err := c.NewDeposit(ctx, crtx.Devnet, amount)
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(d.TransactionRequestURL, "solana:")
	if link != e.d.URL+"/v1/solana-pay/deposits/"+d.DepositID {
		t.Fatalf("transaction_request_url %q", d.TransactionRequestURL)
	}
	cmd.Env = append(cmd.Env, "CRTX_TRANSACTION_REQUEST_URL="+d.TransactionRequestURL)
	read := payWithSolanaPay(t, cmd, e, w, d)
	if read.Shown.Label != "crtx" || read.Shown.Icon != e.d.URL+"/static/favicon.svg" {
		t.Errorf("the link's GET showed %+v", read.Shown)
	}
	got := e.credited(c, d.DepositID, amount)
	if len(got.Payments) != 1 || got.Payments[0].Signature != read.Signature || read.Found != read.Signature {
		t.Fatalf("credited deposit %+v; the wallet sent %s", got, read.Signature)
	}

	ask := func(method, path, body string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, e.d.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://wallet.example")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		return res.StatusCode, b.String(), res.Header
	}
	account := `{"account":"` + w.address + `"}`
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/solana-pay/deposits/" + d.DepositID, account, 409, `"deposit_closed"`},
		{"GET", "/v1/solana-pay/deposits/" + d.DepositID, "", 409, "is credited: ask for a new one"},
		{"POST", "/v1/solana-pay/deposits/dep_nothing", account, 404, `"deposit_not_found"`},
		{"OPTIONS", "/v1/solana-pay/deposits/" + d.DepositID, "", 204, ""},
	} {
		status, body, h := ask(c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, c.want) || h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: %d %s %v", c.method, c.path, status, body, h)
		}
		// A refusal says its message at the top too, where wallets read it.
		var refusal struct {
			Message string
			Error   struct{ Message string }
		}
		if status >= 400 && (json.Unmarshal([]byte(body), &refusal) != nil || refusal.Message == "" || refusal.Message != refusal.Error.Message) {
			t.Errorf("%s %s: the refusal %s has no top-level message", c.method, c.path, body)
		}
	}
	open, err := c.NewDeposit(ctx, crtx.Devnet, amount)
	if err != nil {
		t.Fatal(err)
	}
	if status, body, _ := ask("POST", "/v1/solana-pay/deposits/"+open.DepositID, `{"account":"not-an-address"}`); status != 400 || !strings.Contains(body, "account") {
		t.Errorf("a bad account: %d %s", status, body)
	}
	// Anyone may pay a deposit: the transaction a third party is handed has
	// that party alone sign, pay the fee and move the USDC, to the
	// treasury; the deposit's own wallet is credited.
	other := e.payer(usdc("8"))
	status, body, _ := ask("POST", "/v1/solana-pay/deposits/"+open.DepositID, `{"account":"`+other.address+`"}`)
	var answer api.SolanaPayTransaction
	if err := json.Unmarshal([]byte(body), &answer); status != 200 || err != nil || answer.Message != "Add 7.25 USDC to your crtx wallet" {
		t.Fatalf("an open deposit: %d %s", status, body)
	}
	raw, err := base64.StdEncoding.DecodeString(answer.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	signers := tx.Message.Signers()
	if len(signers) != 1 || signers[0].String() != other.address || len(tx.Signatures) != 1 || !tx.Signatures[0].IsZero() {
		t.Fatalf("the transaction is signed by %v (signatures %v); want the paying account alone, unsigned", signers, tx.Signatures)
	}
	e.net.SignAndSend(t, raw, other.key)
	e.credited(c, open.DepositID, amount)
	wb, err := c.Wallet(ctx)
	if err != nil || wb.Balances[crtx.Devnet].Available != 2*amount {
		t.Errorf("the deposit's wallet holds %+v (%v), want both payments", wb, err)
	}
	ob, err := e.signIn(other).Wallet(ctx)
	if err != nil || ob.Balances[crtx.Devnet].Available != 0 {
		t.Errorf("the third party holds %+v (%v), want nothing", ob, err)
	}
}
