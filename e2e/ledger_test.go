package e2e_test

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/merkle"
)

// waitSealed polls until the transaction is in a block.
func waitSealed(t *testing.T, c *client.Client, env crtx.Environment, id string) crtx.Proof {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := c.Proof(ctx, env, id)
		if err == nil {
			return p
		}
		if client.Code(err) != "not_sealed" || time.Now().After(deadline) {
			t.Fatalf("proof of %s: %v", id, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLedgerProofsAndExplorer(t *testing.T) {
	e := start(t)
	w := newWallet(t)
	var ids []string
	for _, a := range []string{"1", "2", "3"} {
		f, err := e.anon.Airdrop(ctx, w.address, usdc(a))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.TransactionID)
	}
	dep, err := e.admin.Deposit(ctx, crtx.Mainnet, w.address, usdc("7.5"))
	if err != nil {
		t.Fatal(err)
	}

	for _, id := range ids {
		waitSealed(t, e.anon, crtx.Devnet, id)
		if err := e.anon.VerifyTransaction(ctx, crtx.Devnet, id); err != nil {
			t.Errorf("proof of %s does not verify: %v", id, err)
		}
	}
	p := waitSealed(t, e.anon, crtx.Mainnet, dep.TransactionID)
	tx, err := e.anon.Transaction(ctx, crtx.Mainnet, dep.TransactionID)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Kind != crtx.TxDeposit || len(tx.Postings) != 1 || tx.Postings[0].Amount != 7_500_000 || tx.Data["wallet"] != w.address {
		t.Errorf("deposit transaction = %+v", tx)
	}
	wk, _ := e.anon.WellKnown(ctx)
	authority, _ := crtx.ParseAddress("key", wk.AuthorityPublicKey)
	if err := crtx.VerifyProof(p, tx, authority); err != nil {
		t.Errorf("mainnet proof: %v", err)
	}
	// The proof binds the transaction: another amount does not verify.
	forged := tx
	forged.Postings = []crtx.Posting{{From: tx.Postings[0].From, To: tx.Postings[0].To, Amount: 75_000_000}}
	if crtx.VerifyProof(p, forged, authority) == nil {
		t.Error("a proof verified a transaction with another amount")
	}

	t.Run("accounts and blocks", func(t *testing.T) {
		addr := crtx.AccountAddress(crtx.AccountWallet, w.address)
		acct, err := e.anon.Account(ctx, crtx.Devnet, addr)
		if err != nil {
			t.Fatal(err)
		}
		if acct.Account.Balance != 6_000_000 || acct.Account.Owner != w.address || len(acct.Transactions) != 3 {
			t.Errorf("devnet account = %+v", acct)
		}
		b, err := e.anon.Block(ctx, crtx.Mainnet, p.Block.Height)
		if err != nil || b.Block.Hash != p.Block.Hash || len(b.Transactions) != b.Block.TxCount {
			t.Errorf("block = %+v, %v", b, err)
		}
		// The block lists its leaves: each transaction's hash, in order,
		// whose Merkle root is the block's.
		leaves := make([]merkle.Hash, len(b.TransactionHashes))
		for i, h := range b.TransactionHashes {
			leaves[i], _ = merkle.ParseHash(h)
			if h != b.Transactions[i].Leaf().String() {
				t.Errorf("transaction_hashes[%d] = %s, the transaction hashes to %s", i, h, b.Transactions[i].Leaf())
			}
		}
		if len(leaves) != b.Block.TxCount || merkle.Root(leaves).String() != b.Block.MerkleRoot {
			t.Errorf("transaction_hashes %v do not give the block's Merkle root", b.TransactionHashes)
		}
		_, err = e.anon.Account(ctx, crtx.Devnet, "nope")
		wantCode(t, err, 404, "account_not_found")
		_, err = e.anon.Transaction(ctx, crtx.Devnet, dep.TransactionID) // a mainnet id on devnet
		wantCode(t, err, 404, "transaction_not_found")
		_, err = e.anon.Block(ctx, crtx.Devnet, 999999)
		wantCode(t, err, 404, "block_not_found")
		wantCode(t, e.anon.Do(ctx, "GET", "/v1/ledger/testnet/blocks/1", "", nil, nil), 400, "invalid_request")
		wantCode(t, e.anon.Do(ctx, "GET", "/v1/ledger/devnet/blocks/0", "", nil, nil), 400, "invalid_request")
		wantCode(t, e.anon.Do(ctx, "GET", "/v1/ledger/devnet/blocks/x", "", nil, nil), 400, "invalid_request")
	})

	t.Run("explorer pages", func(t *testing.T) {
		addr := crtx.AccountAddress(crtx.AccountWallet, w.address)
		pages := map[string]string{
			"/explorer/?cluster=devnet":                              "Latest blocks",
			"/explorer/account/" + addr + "?cluster=devnet":          "6 USDC",
			"/explorer/tx/" + dep.TransactionID:                      "Deposit",
			"/explorer/tx/" + dep.TransactionID + "?cluster=mainnet": p.TransactionHash,
			"/explorer/tx/" + ids[0] + "?cluster=devnet":             "Airdrop",
			"/explorer/block/1?cluster=mainnet":                      p.Block.MerkleRoot,
			"/explorer/?cluster=mainnet":                             p.Block.Hash, // the sealed block is listed
			"/explorer/account/" + addr + "?cluster=mainnet":         "7.5 USDC",
		}
		for path, want := range pages {
			resp, err := e.http.Get(e.d.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), want) {
				t.Errorf("%s: %d %s, want a page with %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
			}
		}
		// The explorer's refusals are pages for people, with where to go on.
		for path, want := range map[string]struct {
			status int
			text   string
		}{"/explorer/tx/unknown": {404, "No such transaction"}, "/explorer/account/" + addr + "?cluster=testnet": {400, "Cluster"}} {
			resp, err := e.http.Get(e.d.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), want.text) {
				t.Errorf("%s: %d %s, want a %d page with %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), want.status, want.text)
			}
		}
	})
}

func TestOperations(t *testing.T) {
	e := start(t)
	var st map[string]string
	for _, p := range []string{"/healthz", "/readyz"} {
		if err := e.anon.Do(ctx, "GET", p, "", nil, &st); err != nil || st["status"] != "ok" {
			t.Errorf("%s = %v, %v", p, st, err)
		}
	}
	wk, err := e.anon.WellKnown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{wk.SigningPublicKey, wk.AuthorityPublicKey} {
		if _, err := crtx.ParseAddress("key", k); err != nil {
			t.Errorf("published key %q: %v", k, err)
		}
	}
	if wk.PublicURL != e.d.URL || wk.PlatformFeeBps != 100 || len(wk.Environments) != 2 || wk.SigningPublicKey == wk.AuthorityPublicKey {
		t.Errorf("well-known = %+v", wk)
	}
	var doc map[string]any
	if err := e.anon.Do(ctx, "GET", "/v1/openapi.json", "", nil, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Errorf("openapi.json: %v", err)
	}

	e.anon.Do(ctx, "GET", "/nope", "", nil, nil)
	resp, err := e.http.Get(e.d.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`crtx_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`,
		`crtx_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`crtx_http_request_duration_seconds_bucket{method="GET",route="GET /readyz",status="200"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestDocsPage(t *testing.T) {
	e := start(t)
	resp, err := e.http.Get(e.d.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"/v1/agents/{agent_id}/execute", "Idempotency-Key", "ExecutionRecord", "apiKey", "/v1/admin/disputes/{dispute_id}/resolve"} {
		if !strings.Contains(page, want) {
			t.Errorf("the docs page lacks %q", want)
		}
	}
	// Its one script, and anything else it loads, is the site's own.
	for _, m := range regexp.MustCompile(`\bsrc="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("the docs page loads %s from elsewhere", m[1])
		}
	}
}
