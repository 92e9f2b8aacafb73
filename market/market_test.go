package market_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

func newMarket(t *testing.T) *market.Market {
	m, _ := newMarketOn(t)
	return m
}

// newMarketOn returns a market and the store it runs on.
func newMarketOn(t *testing.T) (*market.Market, crtx.Store) {
	t.Helper()
	store := testdb.SQLite(t)
	_, authority, _ := ed25519.GenerateKey(nil)
	_, signer, _ := ed25519.GenerateKey(nil)
	m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer, AirdropsPerHour: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, env := range crtx.Environments {
			r, err := market.VerifyLedger(context.Background(), store, env, m.AuthorityPublicKey())
			if err != nil || !r.OK() || r.Sum != 0 {
				t.Errorf("%s ledger: %+v, %v", env, r, err)
			}
		}
	})
	return m, store
}

func address(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return crtx.Address(pub)
}

// Twenty concurrent withdrawals of 1 USDC from a wallet holding 7: exactly
// seven succeed and the wallet ends at zero, never below.
func TestConcurrentWithdrawalsNeverOverdraw(t *testing.T) {
	ctx := context.Background()
	m := newMarket(t)
	w := address(t)
	if _, err := m.Funds.OperatorDeposit(ctx, crtx.Mainnet, w, 7*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 20 {
		wg.Go(func() {
			_, err := m.Funds.OperatorWithdraw(ctx, crtx.Mainnet, w, crtx.MicroPerUSDC)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case crtx.ErrorCode(err) == crtx.CodeInsufficientBalance:
				refused++
			default:
				t.Errorf("withdraw: %v", err)
			}
		})
	}
	wg.Wait()
	b, err := m.Funds.Balances(ctx, w, crtx.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 7 || refused != 13 || b[crtx.Mainnet].Available != 0 {
		t.Fatalf("ok=%d refused=%d balance=%s", ok, refused, b[crtx.Mainnet].Available)
	}
}

// Concurrent airdrops to one wallet stay within its hourly limit.
func TestConcurrentAirdropsRespectTheLimit(t *testing.T) {
	ctx := context.Background()
	m := newMarket(t)
	w := address(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 10 {
		wg.Go(func() {
			_, err := m.Funds.Airdrop(ctx, w, crtx.MicroPerUSDC)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				granted++
			} else if crtx.ErrorCode(err) != crtx.CodeRateLimited {
				t.Errorf("airdrop: %v", err)
			}
		})
	}
	wg.Wait()
	if granted != 3 {
		t.Fatalf("%d airdrops granted, limit 3", granted)
	}
}

func TestProofsRejectTampering(t *testing.T) {
	ctx := context.Background()
	m := newMarket(t)
	var last crtx.Funding
	for range 5 {
		f, err := m.Funds.Airdrop(ctx, address(t), 1)
		if err != nil {
			t.Fatal(err)
		}
		last = f
	}
	if _, err := m.Ledger.Proof(ctx, crtx.Devnet, last.Transaction.ID); crtx.ErrorCode(err) != crtx.CodeNotSealed {
		t.Fatalf("proof before sealing: %v", err)
	}
	if _, sealed, err := m.Ledger.Seal(ctx, crtx.Devnet); err != nil || !sealed {
		t.Fatalf("seal: %v %v", sealed, err)
	}
	if _, sealed, _ := m.Ledger.Seal(ctx, crtx.Devnet); sealed {
		t.Fatal("a second seal found work")
	}
	p, err := m.Ledger.Proof(ctx, crtx.Devnet, last.Transaction.ID)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := m.Ledger.Transaction(ctx, crtx.Devnet, last.Transaction.ID)
	key := m.AuthorityPublicKey()
	if err := crtx.VerifyProof(p, tx, key); err != nil {
		t.Fatalf("good proof: %v", err)
	}
	if len(p.Path) == 0 {
		t.Fatal("a block of 5 gave an empty path")
	}
	mutations := map[string]func(*crtx.Proof){
		"path hash": func(p *crtx.Proof) { p.Path[0].Hash = p.TransactionHash },
		"path side": func(p *crtx.Proof) {
			p.Path[0].Position = map[string]string{"left": "right", "right": "left"}[p.Path[0].Position]
		},
		"root":   func(p *crtx.Proof) { p.Block.MerkleRoot = p.TransactionHash },
		"height": func(p *crtx.Proof) { p.Block.Height++ },
		"signature": func(p *crtx.Proof) {
			p.Block.Signature = crtx.SignBase58(ed25519.NewKeyFromSeed(make([]byte, 32)), []byte("x"))
		},
		"leaf":         func(p *crtx.Proof) { p.TransactionHash = p.Block.MerkleRoot },
		"short path":   func(p *crtx.Proof) { p.Path = p.Path[1:] },
		"bad hex":      func(p *crtx.Proof) { p.Path[0].Hash = "zz" },
		"bad position": func(p *crtx.Proof) { p.Path[0].Position = "up" },
	}
	for name, mutate := range mutations {
		q := p
		q.Path = append([]crtx.ProofStep{}, p.Path...)
		mutate(&q)
		if crtx.VerifyProof(q, tx, key) == nil {
			t.Errorf("%s: tampered proof verified", name)
		}
	}
	other, _, _ := ed25519.GenerateKey(nil)
	if crtx.VerifyProof(p, tx, other) == nil {
		t.Error("proof verified against another authority")
	}
}

// busyStore refuses every read-write transaction as PostgreSQL does a
// serialization failure past the store's retry budget.
type busyStore struct{ crtx.Store }

func (busyStore) Update(context.Context, func(crtx.Tx) error) error {
	return fmt.Errorf("refused 9 times: %w", crtx.ErrBusy)
}

// A transaction the database keeps refusing is a 503 the caller may retry,
// never an internal error, and moves nothing.
func TestBusyIsUnavailable(t *testing.T) {
	ctx := context.Background()
	m, store := newMarketOn(t)
	busy, err := market.New(busyStore{store}, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: ed25519.NewKeyFromSeed(make([]byte, 32)),
		Signer: ed25519.NewKeyFromSeed(make([]byte, 32)), AirdropsPerHour: 3})
	if err != nil {
		t.Fatal(err)
	}
	w := address(t)
	_, err = busy.Funds.Airdrop(ctx, w, crtx.MicroPerUSDC)
	var ce *crtx.Error
	if !errors.As(err, &ce) || ce.Code != crtx.CodeUnavailable || ce.RetryAfter < 1 {
		t.Fatalf("airdrop on a busy database: %v, want unavailable with a Retry-After", err)
	}
	if b, err := m.Funds.Balances(ctx, w, crtx.Devnet); err != nil || b[crtx.Devnet].Available != 0 {
		t.Errorf("balance %+v, %v; want nothing moved", b, err)
	}
}
