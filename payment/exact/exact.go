// Package exact is x402's exact scheme on Solana: one call is paid by a
// TransferChecked of its price to the treasury, which the payer signs and
// the marketplace, its own facilitator, checks, simulates, co-signs as fee
// payer and sends (docs/x402.md).
//
// The payer pays for a verified result or not at all. A synchronous call
// that ends within the marketplace's SettleAfter is settled after the
// creator's signed result is verified, and the result is returned once the
// transfer is confirmed; a failed call is never sent, and costs nothing. A
// call that can outlive the transaction's blockhash (asynchronous, or
// longer) is settled first into the escrow, then dispatched; if it fails,
// the escrow goes back to the payer's token account by a withdrawal, once.
//
// On the ledger a settled payment is a Deposit from the chain (issuance to
// the payer's wallet), then the same EscrowOpened, ExecutionRecord or
// EscrowRefunded as any execution: reserves, receipts and ledger
// verification need nothing special.
package exact

import (
	"context"
	"net/url"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/x402"
)

type scheme struct{ h payment.Host }

// New is the exact scheme over h.
func New(h payment.Host) payment.Scheme { return scheme{h} }

func (scheme) Name() string { return x402.SchemeExact }

func (scheme) Requirements(ctx context.Context, c crtx.Chain, a crtx.Agent) (x402.PaymentRequirements, error) {
	network, err := c.Network(ctx)
	if err != nil {
		return x402.PaymentRequirements{}, err
	}
	return x402.PaymentRequirements{Scheme: x402.SchemeExact, Network: network, Amount: strconv.FormatInt(int64(a.Hold()), 10),
		Asset: c.Mint(), PayTo: c.Treasury(), MaxTimeoutSeconds: a.TimeoutSeconds,
		Extra: x402.PaymentExtra{FeePayer: c.FeePayer()}}, nil
}

// Terms refuses a payment whose accepted requirements are not this call's:
// another agent's, price, asset, recipient or fee payer.
func (scheme) Terms(p x402.PaymentPayload, resource string, a crtx.Agent, c crtx.Chain) error {
	acc := p.Accepted
	if r := p.Resource; r != nil && resource != "" {
		got, err1 := url.Parse(r.URL)
		want, err2 := url.Parse(resource)
		if err1 != nil || err2 != nil || got.Path != want.Path {
			return crtx.PaymentRefused("invalid_payload_resource_mismatch", "the payment was made for %s, not for this agent (%s)", r.URL, resource)
		}
	}
	switch {
	case acc.Asset != c.Mint():
		return crtx.PaymentRefused("invalid_exact_svm_payload_mint_mismatch", "the payment is in %s; this marketplace takes USDC, %s", acc.Asset, c.Mint())
	case acc.PayTo != c.Treasury():
		return crtx.PaymentRefused("invalid_exact_svm_payload_recipient_mismatch", "the payment is to %s; payTo is the treasury, %s", acc.PayTo, c.Treasury())
	case acc.Extra.FeePayer != c.FeePayer():
		return crtx.PaymentRefused("fee_payer_not_managed_by_facilitator", "the fee payer %s is not this marketplace's (%s)", acc.Extra.FeePayer, c.FeePayer())
	case acc.Amount != strconv.FormatInt(int64(a.Hold()), 10):
		return crtx.PaymentRefused("invalid_exact_svm_payload_amount_mismatch", "the payment is of %s base units; a call of %s costs %d (%s USDC)", acc.Amount, a.ID, int64(a.Hold()), a.Hold())
	}
	return nil
}

// Check reads the transaction: a TransferChecked of the price to the
// treasury, the fee payer's to sign (chain.CheckPayment).
func (scheme) Check(p x402.PaymentPayload, a crtx.Agent, c crtx.Chain) (crtx.CheckedPayment, error) {
	return c.CheckPayment(p.Payload.Transaction, crtx.PaymentTerms{Amount: a.Hold()})
}

func (scheme) Cancellable(e crtx.Execution) error {
	// Its payment is on the chain, or on its way: it ends as it was paid,
	// and a failure is refunded there (Close).
	return &crtx.Error{Code: crtx.CodeNotCancellable, ExecutionID: e.ID,
		Message: "a call paid with x402 cannot be cancelled: if it fails, its payment goes back to the payer's token account"}
}
