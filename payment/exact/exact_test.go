package exact_test

import (
	"context"
	"errors"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/x402"
)

// chain is a cluster with fixed keys whose transaction check only records
// what it was asked; the methods the scheme does not call are nil.
type chain struct {
	crtx.Chain
	checked []crtx.PaymentTerms
}

func (*chain) Network(context.Context) (string, error) { return "solana:local", nil }
func (*chain) Mint() string                            { return "mint" }
func (*chain) Treasury() string                        { return "treasury" }
func (*chain) FeePayer() string                        { return "feepayer" }
func (c *chain) CheckPayment(tx string, terms crtx.PaymentTerms) (crtx.CheckedPayment, error) {
	c.checked = append(c.checked, terms)
	return crtx.CheckedPayment{Payer: "payer", Amount: terms.Amount}, nil
}

func x402Scheme(t *testing.T) payment.X402 {
	t.Helper()
	s, ok := exact.New(nil).(payment.X402)
	if !ok {
		t.Fatal("exact is not an x402 scheme")
	}
	return s
}

// The requirements a 402 offers are the terms Terms accepts, and each
// field a payer changes is refused with x402's reason; Check reads the
// transaction for the agent's price.
func TestCheckAcceptsWhatRequirementsOffer(t *testing.T) {
	s := x402Scheme(t)
	if s.Name() != x402.SchemeExact {
		t.Fatalf("name %q", s.Name())
	}
	a := crtx.Agent{ID: "agt_1", Price: 20_000, TimeoutSeconds: 30}
	c := &chain{}
	req, err := s.Requirements(context.Background(), c, a)
	if err != nil {
		t.Fatal(err)
	}
	want := x402.PaymentRequirements{Scheme: "exact", Network: "solana:local", Amount: "20000", Asset: "mint", PayTo: "treasury",
		MaxTimeoutSeconds: 30, Extra: x402.PaymentExtra{FeePayer: "feepayer"}}
	if req != want {
		t.Fatalf("requirements %+v, want %+v", req, want)
	}
	resource := "http://127.0.0.1/v1/agents/agt_1/execute"
	payload := func(edit func(*x402.PaymentPayload)) x402.PaymentPayload {
		p := x402.PaymentPayload{X402Version: x402.Version, Accepted: req, Resource: &x402.ResourceInfo{URL: resource}}
		p.Payload.Transaction = "tx"
		edit(&p)
		return p
	}
	ok := payload(func(*x402.PaymentPayload) {})
	if err := s.Terms(ok, resource, a, c); err != nil {
		t.Fatalf("the offered payment's terms: %v", err)
	}
	cp, err := s.Check(ok, a, c)
	if err != nil || cp.Amount != a.Price || len(c.checked) != 1 || c.checked[0].Amount != a.Price {
		t.Fatalf("the offered payment: %+v, %v; checked %v", cp, err, c.checked)
	}
	for reason, edit := range map[string]func(*x402.PaymentPayload){
		"invalid_payload_resource_mismatch":            func(p *x402.PaymentPayload) { p.Resource.URL = "http://127.0.0.1/v1/agents/agt_2/execute" },
		"invalid_exact_svm_payload_mint_mismatch":      func(p *x402.PaymentPayload) { p.Accepted.Asset = "other" },
		"invalid_exact_svm_payload_recipient_mismatch": func(p *x402.PaymentPayload) { p.Accepted.PayTo = "other" },
		"fee_payer_not_managed_by_facilitator":         func(p *x402.PaymentPayload) { p.Accepted.Extra.FeePayer = "other" },
		"invalid_exact_svm_payload_amount_mismatch":    func(p *x402.PaymentPayload) { p.Accepted.Amount = "19999" },
	} {
		err := s.Terms(payload(edit), resource, a, c)
		var pe *crtx.PaymentError
		if !errors.As(err, &pe) || pe.Reason != reason {
			t.Errorf("%s: %v", reason, err)
		}
	}
	var ce *crtx.Error
	if err := s.Cancellable(crtx.Execution{ID: "exe_1"}); !errors.As(err, &ce) || ce.Code != crtx.CodeNotCancellable || ce.ExecutionID != "exe_1" {
		t.Fatalf("cancelling an x402 call: %v", err)
	}
}
