package market

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
	"github.com/crtx-market/crtx/x402"
)

// metered stands for a scheme added later (x402's upto, say): the
// payment folder's interface, and one line in the list of schemes.
type metered struct{ payment.X402 }

func (metered) Name() string { return "metered" }
func (metered) Requirements(ctx context.Context, c crtx.Chain, a crtx.Agent) (x402.PaymentRequirements, error) {
	return x402.PaymentRequirements{Scheme: "metered", Amount: "1", PayTo: c.Treasury()}, nil
}

type fixedChain struct{ crtx.Chain }

func (fixedChain) Network(context.Context) (string, error) { return "solana:local", nil }
func (fixedChain) Mint() string                            { return "mint" }
func (fixedChain) Treasury() string                        { return "treasury" }
func (fixedChain) FeePayer() string                        { return "feepayer" }

func schemeMarket(t *testing.T, news ...payment.New) (*Market, error) {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	return New(testdb.SQLite(t), Config{Schemes: news, PublicURL: "http://127.0.0.1:8080", Authority: key, Signer: key})
}

// A scheme wired in the list is offered beside exact, found for the
// executions its payments pay, and filtered by in discovery; the ledger's
// is required and none is wired twice.
func TestSchemesAreWiredByList(t *testing.T) {
	ctx := context.Background()
	if _, err := schemeMarket(t, exact.New); err == nil || !strings.Contains(err.Error(), `"ledger"`) {
		t.Fatalf("without the ledger's scheme: %v", err)
	}
	if _, err := schemeMarket(t, ledger.New, exact.New, exact.New); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("exact twice: %v", err)
	}
	m, err := schemeMarket(t, ledger.New, exact.New, func(payment.Host) payment.Scheme { return metered{} })
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := m.requirements(ctx, fixedChain{}, crtx.Agent{ID: "agt_1", Price: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Scheme != x402.SchemeExact || reqs[1].Scheme != "metered" || reqs[1].PayTo != "treasury" {
		t.Fatalf("requirements %+v", reqs)
	}
	if m.schemes.x402Named("metered") == nil || m.schemes.x402Named("upto") != nil || m.schemes.x402Named(ledger.Name) != nil {
		t.Fatal("x402 schemes by name")
	}
	// An execution is closed by the scheme its payment names.
	e := crtx.Execution{ID: "exe_1", KeyID: crtx.X402Key, Environment: crtx.Devnet}
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Funds.InsertPayment(ctx, crtx.Payment{Scheme: "metered", Signature: "sig", Environment: crtx.Devnet, ExecutionID: e.ID,
			Payer: "payer", Source: "src", Amount: 1, Network: "solana:local", Raw: []byte{1}, Status: crtx.PaymentVerified, CreatedAt: m.now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		e    crtx.Execution
		want string
	}{{e, "metered"}, {crtx.Execution{ID: "exe_2", KeyID: "key_1"}, ledger.Name}} {
		s, err := m.schemeOf(ctx, c.e)
		if err != nil || s.Name() != c.want {
			t.Fatalf("scheme of %s: %v, %v; want %s", c.e.ID, s, err, c.want)
		}
	}
	if _, err := m.schemeOf(ctx, crtx.Execution{ID: "exe_3", KeyID: crtx.X402Key}); err == nil {
		t.Fatal("an x402 execution without a payment has a scheme")
	}
}
