package verify

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/mr-tron/base58"
)

func rpcCall(t *testing.T, url string, out any, method string, params ...any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Error != nil {
		t.Fatalf("%s: %v %+v", method, err, answer.Error)
	}
	if out != nil {
		if err := json.Unmarshal(answer.Result, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
}

// An anchor written to a real Solana network, legacy and v0, as the
// marketplace writes it (the treasury pays, the ledger authority signs the
// memo), is read back by getTransaction and holds; a memo transaction that
// failed on the chain (its data not UTF-8, sent without preflight) is
// refused for its error.
func TestAnchorOnSurfnet(t *testing.T) {
	rpc := chaintest.Start(t).RPC
	treasury, authority := testKey(11), testKey(12)
	tpub, apub := treasury.Public().(ed25519.PublicKey), authority.Public().(ed25519.PublicKey)
	var airdrop string
	rpcCall(t, rpc, &airdrop, "requestAirdrop", base58.Encode(tpub), 1_000_000_000)
	for deadline := time.Now().Add(30 * time.Second); ; {
		var bal struct{ Value uint64 }
		rpcCall(t, rpc, &bal, "getBalance", base58.Encode(tpub))
		if bal.Value > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the airdrop never arrived")
		}
		time.Sleep(50 * time.Millisecond)
	}
	memoKey, _ := base58.Decode(MemoProgram)
	c := Verifier{Solana: http.DefaultClient}
	// send writes a memo transaction and reads it back from the network.
	send := func(v0 bool, data []byte, skipPreflight bool) solanaGot {
		t.Helper()
		var bh struct{ Value struct{ Blockhash string } }
		rpcCall(t, rpc, &bh, "getLatestBlockhash")
		hash, _ := base58.Decode(bh.Value.Blockhash)
		raw := signed(encodeMessage(v0, [3]byte{2, 1, 1}, [][]byte{tpub, apub, memoKey}, hash,
			[]testInstruction{{program: 2, accounts: []int{1}, data: data}}, 0), treasury, authority)
		var sig string
		rpcCall(t, rpc, &sig, "sendTransaction", base64.StdEncoding.EncodeToString(raw),
			map[string]any{"encoding": "base64", "skipPreflight": skipPreflight})
		if sig != base58.Encode(raw[1:65]) {
			t.Fatalf("the network names the transaction %s, its first signature is %s", sig, base58.Encode(raw[1:65]))
		}
		for deadline := time.Now().Add(30 * time.Second); ; {
			got, err := c.solanaTransaction(context.Background(), rpc, sig)
			if err == nil {
				return got
			}
			if !errors.Is(err, errAnchor) || time.Now().After(deadline) {
				t.Fatalf("getTransaction %s: %v", sig, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i, v0 := range []bool{false, true} {
		b := crtx.Block{Environment: crtx.Devnet, Height: int64(40 + i), PrevHash: crtx.GenesisPrevHash, MerkleRoot: crtx.GenesisPrevHash,
			TxCount: 1, SealedAt: time.Date(2026, 11, 25, 12, 0, i, 0, time.UTC), Version: 2}
		b.Hash = b.ComputeHash().String()
		got := send(v0, []byte(crtx.AnchorMemo(b)), false)
		tx, err := parseSolanaTransaction(got.Raw)
		if err != nil || tx.Message.Version != map[bool]int{false: -1, true: 0}[v0] {
			t.Fatalf("v0 %v: the network's bytes parse as %+v, %v", v0, tx.Message, err)
		}
		b.Anchor = &crtx.Anchor{Signature: base58.Encode(tx.Signatures[0]), Slot: got.Slot, Cluster: "custom"}
		if err := checkAnchorTransaction(got, b, apub); err != nil {
			t.Errorf("v0 %v: the anchor as written: %v", v0, err)
		}
		if err := checkAnchorTransaction(got, b, tpub); !errors.Is(err, errAnchor) {
			t.Errorf("v0 %v: the treasury, a signer but not the memo's, taken for the authority: %v", v0, err)
		}
	}
	failed := send(false, []byte{0xff, 0xfe}, true)
	if string(failed.Err) == "null" {
		t.Fatalf("a memo that is not UTF-8 succeeded: %s", failed.Err)
	}
	b := crtx.Block{Environment: crtx.Devnet, Height: 1, Hash: "x"}
	tx, _ := parseSolanaTransaction(failed.Raw)
	b.Anchor = &crtx.Anchor{Signature: base58.Encode(tx.Signatures[0]), Slot: failed.Slot, Cluster: "custom"}
	if err := checkAnchorTransaction(failed, b, apub); !errors.Is(err, errAnchor) || !strings.Contains(err.Error(), "failed on the chain") {
		t.Errorf("a failed transaction: %v", err)
	}
}

// ledger serves blocks of devnet and the reserves as a marketplace does;
// reserves nil refuses them as unavailable.
type ledger struct {
	Reads
	blocks   []crtx.Block
	reserves *api.Reserves
}

func (l ledger) Reserves(context.Context) (api.Reserves, error) {
	if l.reserves == nil {
		return api.Reserves{}, crtx.Errorf(crtx.CodeUnavailable, "x")
	}
	return *l.reserves, nil
}

func (l ledger) Block(_ context.Context, env crtx.Environment, h int64) (api.BlockView, error) {
	if env != crtx.Devnet || h < 1 || h > int64(len(l.blocks)) {
		return api.BlockView{}, crtx.Errorf(crtx.CodeBlockNotFound, "x")
	}
	return api.BlockView{Block: l.blocks[h-1]}, nil
}

// signedChain is n blocks of devnet, each naming the one before and
// signed by authority.
func signedChain(n int, authority ed25519.PrivateKey) []crtx.Block {
	var out []crtx.Block
	prev := crtx.GenesisPrevHash
	for h := 1; h <= n; h++ {
		root := sha256.Sum256([]byte{byte(h)})
		b := crtx.Block{Environment: crtx.Devnet, Height: int64(h), PrevHash: prev, MerkleRoot: fmt.Sprintf("%x", root),
			TxCount: 1, SealedAt: time.Date(2026, 11, 25, 12, 0, h, 0, time.UTC), Version: 2}
		sign(&b, authority)
		out = append(out, b)
		prev = b.Hash
	}
	return out
}

func sign(b *crtx.Block, authority ed25519.PrivateKey) {
	h := b.ComputeHash()
	b.Hash, b.Signature = h.String(), base58.Encode(ed25519.Sign(authority, h[:]))
}

// From an execution's block, the hash chain is followed forward to the
// first anchored block, each link and signature checked; with no anchored
// block yet, the report says so and fails nothing; a broken link or a
// block another key signed fails the chain.
func TestAnchorWalk(t *testing.T) {
	authority := testKey(21)
	apub := authority.Public().(ed25519.PublicKey)
	anchor := &crtx.Anchor{Signature: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", Slot: 9, Cluster: "custom"}
	walk := func(l ledger, blocks []crtx.Block, from int) Report {
		t.Helper()
		r := Report{}
		add := func(name string, ok bool, format string, args ...any) bool {
			r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
			return ok
		}
		Verifier{Reads: l, Code: crtx.ErrorCode}.verifyAnchor(context.Background(), &r, blocks[from-1], apub, add)
		return r
	}
	reserves := func(anchored int64) *api.Reserves {
		return &api.Reserves{Reserves: []crtx.Reserve{{Environment: crtx.Devnet, AnchoredBlock: anchored}}}
	}

	// Block 4 is anchored on a custom cluster, and no RPC URL is given:
	// the chain from 2 to 4 holds, and the anchor cannot be read.
	blocks := signedChain(5, authority)
	blocks[3].Anchor = anchor
	for _, rs := range []*api.Reserves{reserves(4), nil} {
		r := walk(ledger{blocks: blocks, reserves: rs}, blocks, 2)
		if len(r.Checks) != 1 || !r.Checks[0].OK || r.Checks[0].Name != "hash chain" || !strings.Contains(r.Checks[0].Detail, "blocks 2 to 4") ||
			r.Anchor != AnchorNotChecked || r.AnchoredBlock != 4 || !strings.Contains(r.AnchorDetail, "no Solana RPC URL for the anchor's cluster: give it") {
			t.Errorf("reserves %v: %+v", rs, r)
		}
	}
	// No block anchored from 5 on: the marketplace says so, or the walk
	// finds the end of the chain.
	for _, rs := range []*api.Reserves{reserves(4), nil, {}} {
		r := walk(ledger{blocks: blocks, reserves: rs}, blocks, 5)
		if len(r.Checks) != 0 || r.Anchor != NotAnchoredYet {
			t.Errorf("reserves %v, from block 5: %+v", rs, r)
		}
	}
	// The marketplace names an anchored block that serves no anchor.
	if r := walk(ledger{blocks: blocks, reserves: reserves(5)}, blocks, 5); len(r.Checks) != 1 || r.Checks[0].OK || r.Anchor != "" {
		t.Errorf("an anchored block with no anchor: %+v", r)
	}
	// Block 3 names another block before it, or is signed by another key.
	broken := signedChain(5, authority)
	broken[3].Anchor = anchor
	broken[2].PrevHash = broken[0].Hash
	sign(&broken[2], authority)
	other := signedChain(5, authority)
	other[3].Anchor = anchor
	sign(&other[2], testKey(22))
	for name, bs := range map[string][]crtx.Block{"a broken link": broken, "another key": other} {
		r := walk(ledger{blocks: bs, reserves: reserves(4)}, bs, 2)
		if len(r.Checks) != 1 || r.Checks[0].OK || r.Checks[0].Name != "hash chain" || !strings.Contains(r.Checks[0].Detail, "block 3") || r.Anchor != "" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// A mainnet block's anchor counts only on Solana mainnet, known by its
// genesis hash, whatever cluster the marketplace names: an anchor on devnet
// is refused before its transaction is read.
func TestMainnetAnchorOnlyOnMainnet(t *testing.T) {
	for _, tc := range []struct {
		env     crtx.Environment
		genesis string
		read    bool
	}{
		{crtx.Mainnet, "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG", false},
		{crtx.Mainnet, MainnetGenesisHash, true},
		{crtx.Devnet, "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG", true},
	} {
		read := false
		rpc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var call struct {
				Method string `json:"method"`
			}
			json.NewDecoder(r.Body).Decode(&call)
			result := any(nil)
			switch call.Method {
			case "getGenesisHash":
				result = tc.genesis
			case "getTransaction":
				read = true
			}
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
		}))
		c := Verifier{Solana: http.DefaultClient, SolanaRPC: rpc.URL}
		b := crtx.Block{Environment: tc.env, Height: 1, Hash: "00", Anchor: &crtx.Anchor{Signature: "sig", Slot: 1, Cluster: "mainnet-beta"}}
		err := c.checkAnchor(t.Context(), b, nil)
		rpc.Close()
		if !errors.Is(err, errAnchor) || read != tc.read {
			t.Errorf("%s block, cluster of genesis %s: %v, transaction read: %v; want it read: %v", tc.env, tc.genesis, err, read, tc.read)
		}
	}
}
