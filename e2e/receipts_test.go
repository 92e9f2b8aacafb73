package e2e_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A completed execution's record carries what binds it to the ledger (the
// creator's signature, the key and the listing transaction that registered
// it, the transaction that closed the escrow), and its receipt verifies
// against the marketplace key and fails once changed. A failed execution
// says that nobody was paid and the cost came back.
func TestReceiptsAndRecordLinks(t *testing.T) {
	m := newMarket(t, "10")
	release := make(chan struct{})
	svc := newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Task == "wait" {
			<-release
		}
		return "ok " + r.Task, 0, nil
	})
	agent := m.list(svc, "0.05")
	rec := m.ran(t, m.key, agent)
	pub, _ := crtx.ParseAddress("key", svc.PubKey)
	if rec.Signature == nil || !crtx.VerifyBase58(pub, []byte(*rec.ResultHash), *rec.Signature) || rec.SigningPublicKey != svc.PubKey ||
		rec.Refunded != 0 || rec.CreatorAmount+rec.PlatformAmount != rec.Cost || rec.LedgerTransaction == nil || rec.ListingTransaction == nil {
		t.Fatalf("completed record = %+v", rec)
	}
	settled, err := m.anon.Transaction(ctx, crtx.Devnet, *rec.LedgerTransaction)
	if err != nil || settled.Kind != crtx.TxExecutionRecord || settled.Data["execution_id"] != rec.ExecutionID ||
		settled.Data["signature"] != *rec.Signature || settled.Data["listing_tx"] != *rec.ListingTransaction {
		t.Errorf("ledger_transaction = %+v, %v", settled, err)
	}
	// The served hash is SHA-256 of the served transaction's RFC 8785 form
	// without its placement (docs/ledger.md), whatever decodes it.
	var served map[string]any
	if err := m.anon.Do(ctx, "GET", "/v1/ledger/devnet/transactions/"+settled.ID, "", nil, &served); err != nil {
		t.Fatal(err)
	}
	hash := served["hash"]
	for _, k := range []string{"seq", "block_height", "hash"} {
		delete(served, k)
	}
	canonical, err := crtx.Canonical(served)
	if sum := sha256.Sum256(canonical); err != nil || hex.EncodeToString(sum[:]) != hash || hash != settled.Leaf().String() {
		t.Errorf("served hash %v; the canonical form %s hashes otherwise (%v)", hash, canonical, err)
	}
	listed, err := m.anon.Transaction(ctx, crtx.Mainnet, *rec.ListingTransaction)
	if err != nil || listed.Kind != crtx.TxAgentListed || listed.Data["agent_id"] != agent || listed.Data["signing_public_key"] != svc.PubKey {
		t.Errorf("listing_transaction = %+v, %v", listed, err)
	}

	wk, err := m.anon.WellKnown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	marketKey, _ := crtx.ParseAddress("key", wk.SigningPublicKey)
	raw, err := m.key.Receipt(ctx, rec.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := client.VerifyReceipt(raw, marketKey)
	if err != nil {
		t.Errorf("receipt: %v", err)
	}
	if rc.ExecutionID != rec.ExecutionID || rc.Wallet != m.callerW.address || rc.Status != crtx.ExecCompleted || rc.Cost != rec.Cost ||
		rc.CreatorAmount != rec.CreatorAmount || *rc.ResultHash != *rec.ResultHash || *rc.CreatorSignature != *rec.Signature ||
		*rc.LedgerTransaction != *rec.LedgerTransaction || rc.Issuer != m.d.URL {
		t.Errorf("receipt = %+v for record %+v", rc, rec)
	}
	// The signature is checked over exactly the bytes received: a changed
	// amount, a member added, or a name given twice (in another case,
	// which encoding/json would read as the same field) is refused.
	for name, change := range map[string]func(string) string{
		"another refund": func(s string) string {
			return strings.Replace(s, `"refunded_usdc":0`, `"refunded_usdc":`+rec.Cost.String(), 1)
		},
		"a member added":            func(s string) string { return `{"note":"paid in full",` + s[1:] },
		"a name twice, in capitals": func(s string) string { return `{"COST_USDC":50,` + s[1:] },
		"a name twice":              func(s string) string { return `{"cost_usdc":50,` + s[1:] },
		"a member left out":         func(s string) string { return strings.Replace(s, `"completed_at":`, `"completed":`, 1) },
	} {
		forged := change(string(raw))
		if forged == string(raw) {
			t.Fatalf("%s: the receipt %s was not changed", name, raw)
		}
		if _, err := client.VerifyReceipt([]byte(forged), marketKey); err == nil {
			t.Errorf("a receipt with %s verified: %s", name, forged)
		}
	}
	// The signature holds over the receipt as served, whatever decodes it:
	// its RFC 8785 form without the signature.
	var asServed map[string]any
	if err := json.Unmarshal(raw, &asServed); err != nil {
		t.Fatal(err)
	}
	sig, _ := asServed["signature"].(string)
	delete(asServed, "signature")
	signed, err := crtx.Canonical(asServed)
	if err != nil || !crtx.VerifyBase58(marketKey, signed, strings.TrimPrefix(sig, "ed25519:")) {
		t.Errorf("the served receipt's signature does not verify over its canonical form (%v)", err)
	}

	stranger, err := m.signIn(newWallet(t)).CreateKey(ctx, client.KeyParams{Name: "stranger", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.anon.WithToken(stranger.Key).Receipt(ctx, rec.ExecutionID)
	wantCode(t, err, 404, "execution_not_found")
	pending, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "wait", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.key.Receipt(ctx, pending.ExecutionID)
	wantCode(t, err, 409, "not_final")
	close(release)

	failing := fault(t, func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
		msg := "model overloaded"
		replyJSON(w, crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg})
	})
	_, err = m.key.Execute(ctx, m.list(failing, "0.07"), run("x"), client.ExecuteOptions{})
	ce := wantCode(t, err, 500, "execution_failed")
	failed, err := m.key.Execution(ctx, *ce.ExecutionID)
	if err != nil || failed.CreatorAmount != 0 || failed.PlatformAmount != 0 || failed.Refunded != usdc("0.07") ||
		failed.Signature != nil || failed.LedgerTransaction == nil {
		t.Fatalf("failed record = %+v, %v", failed, err)
	}
	refund, err := m.anon.Transaction(ctx, crtx.Devnet, *failed.LedgerTransaction)
	if err != nil || refund.Kind != crtx.TxEscrowRefunded || len(refund.Postings) != 1 || refund.Postings[0].Amount != failed.Refunded ||
		refund.Postings[0].To != crtx.AccountAddress(crtx.AccountWallet, m.callerW.address) {
		t.Errorf("refund transaction = %+v, %v", refund, err)
	}
	fraw, err := m.key.Receipt(ctx, failed.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	frc, err := client.VerifyReceipt(fraw, marketKey)
	if err != nil || frc.Status != crtx.ExecFailed || frc.Refunded != usdc("0.07") ||
		frc.CreatorAmount != 0 || frc.ResultHash != nil {
		t.Errorf("failed receipt = %+v, %v", frc, err)
	}
	m.rollup()
	m.checkLedger()
}
