package chain

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// x402Rig is a treasury (also the fee payer), a mint and a payer, with the
// check of scheme_exact_svm.md's rules over them.
type x402Rig struct {
	treasury    solana.PrivateKey
	mint        solana.PublicKey
	destination solana.PublicKey
	payer       ed25519.PrivateKey
	blockhash   solana.Hash
}

func newX402Rig(t *testing.T) *x402Rig {
	r := &x402Rig{treasury: solana.PrivateKey(chaintest.NewKey(t)), payer: chaintest.NewKey(t)}
	r.mint = solana.PrivateKey(chaintest.NewKey(t)).PublicKey()
	var err error
	if r.destination, _, err = solana.FindAssociatedTokenAddress(r.treasury.PublicKey(), r.mint); err != nil {
		t.Fatal(err)
	}
	r.blockhash = solana.Hash(solana.PrivateKey(chaintest.NewKey(t)).PublicKey())
	return r
}

func (r *x402Rig) payment(t *testing.T, amount uint64) *chaintest.Payment {
	return chaintest.NewPayment(t, r.treasury.PublicKey().String(), r.payer, r.mint.String(), r.treasury.PublicKey().String(), amount)
}

func (r *x402Rig) check(t *testing.T, p *chaintest.Payment, price crtx.USDC) (crtx.CheckedPayment, error) {
	raw, err := base64.StdEncoding.DecodeString(p.Encode(t, r.blockhash))
	if err != nil {
		t.Fatal(err)
	}
	return checkPayment(raw, r.treasury, r.mint, r.destination, crtx.PaymentTerms{Amount: price})
}

// TestCheckPaymentAcceptsTheClientsLayout: the transaction the official
// client builds passes, and the fee payer's signature is added in place:
// the signed transaction verifies for both signers and names the payer.
func TestCheckPaymentAcceptsTheClientsLayout(t *testing.T) {
	r := newX402Rig(t)
	got, err := r.check(t, r.payment(t, 20_000), 20_000)
	if err != nil {
		t.Fatal(err)
	}
	if got.Payer != chaintest.Address(r.payer) {
		t.Errorf("payer %s, want %s", got.Payer, chaintest.Address(r.payer))
	}
	tx, err := solana.TransactionFromBytes(got.Signed)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.VerifySignatures(); err != nil {
		t.Fatalf("the signed payment does not verify: %v", err)
	}
	if tx.Signatures[0].String() != got.Signature {
		t.Errorf("signature %s, want the fee payer's %s", got.Signature, tx.Signatures[0])
	}
	if len(got.Keys) != 0 {
		t.Errorf("extra keys %v in the client's layout", got.Keys)
	}
}

// TestCheckPaymentRefusesEachRule breaks one of the scheme's MUST rules
// at a time (and crtx's stricter bounds) and expects its reason.
func TestCheckPaymentRefusesEachRule(t *testing.T) {
	r := newX402Rig(t)
	fee := r.treasury.PublicKey()
	other := solana.PrivateKey(chaintest.NewKey(t)).PublicKey().String()
	cases := []struct {
		name   string
		change func(p *chaintest.Payment)
		price  crtx.USDC
		reason string
	}{
		{"amount below the price", func(p *chaintest.Payment) {}, 20_001, "invalid_exact_svm_payload_amount_mismatch"},
		{"another destination", func(p *chaintest.Payment) { p.Instructions[2] = p.Transfer(t, other, 20_000) }, 20_000, "invalid_exact_svm_payload_recipient_mismatch"},
		{"another mint", func(p *chaintest.Payment) {
			p.Mint = solana.PrivateKey(chaintest.NewKey(t)).PublicKey().String()
			p.Instructions[2] = p.Transfer(t, fee.String(), 20_000)
		}, 20_000, "invalid_exact_svm_payload_mint_mismatch"},
		{"fee payer as source", func(p *chaintest.Payment) {
			p.Instructions[2] = token.NewTransferCheckedInstruction(20_000, Decimals, fee, r.mint, r.destination, solana.PrivateKey(r.payer).PublicKey(), nil).Build()
		}, 20_000, "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"},
		{"fee payer as authority", func(p *chaintest.Payment) {
			p.Instructions[2] = token.NewTransferCheckedInstruction(20_000, Decimals, r.destination, r.mint, r.destination, fee, nil).Build()
		}, 20_000, "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"},
		{"fee payer in the memo's accounts", func(p *chaintest.Payment) {
			p.Instructions[3] = solana.NewInstruction(chaintest.MemoProgram, solana.AccountMetaSlice{solana.Meta(fee)}, []byte("hi"))
		}, 20_000, "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"},
		{"an extra instruction", func(p *chaintest.Payment) {
			p.Instructions = append(p.Instructions, solana.NewInstruction(solana.SystemProgramID, nil, []byte{2, 0, 0, 0}))
		}, 20_000, "invalid_exact_svm_payload_unknown_fifth_instruction"},
		{"a second transfer", func(p *chaintest.Payment) {
			p.Instructions = append(p.Instructions, p.Transfer(t, fee.String(), 20_000))
		}, 20_000, "invalid_exact_svm_payload_unknown_fifth_instruction"},
		{"no memo", func(p *chaintest.Payment) { p.Instructions = p.Instructions[:3] }, 20_000, "invalid_exact_svm_payload_memo_count"},
		{"two instructions", func(p *chaintest.Payment) { p.Instructions = p.Instructions[1:3] }, 20_000, "invalid_exact_svm_payload_transaction_instructions_length"},
		{"compute price too high", func(p *chaintest.Payment) { p.Instructions[1] = chaintest.ComputeBudget(3, 5_000_001, 8) }, 20_000,
			"invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"},
		{"priority fee too high", func(p *chaintest.Payment) {
			p.Instructions[0] = chaintest.ComputeBudget(2, 200_000, 4)
			p.Instructions[1] = chaintest.ComputeBudget(3, 5_000_000, 8)
		}, 20_000, "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"},
		{"limit and price swapped", func(p *chaintest.Payment) {
			p.Instructions[0], p.Instructions[1] = p.Instructions[1], p.Instructions[0]
		}, 20_000, "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"},
		{"another fee payer", func(p *chaintest.Payment) { p.FeePayer = other }, 20_000, "invalid_exact_svm_payload_missing_fee_payer"},
		{"Token-2022's program", func(p *chaintest.Payment) {
			ix := p.Instructions[2]
			data, _ := ix.Data()
			p.Instructions[2] = solana.NewInstruction(solana.Token2022ProgramID, ix.Accounts(), data)
		}, 20_000, "invalid_exact_svm_payload_no_transfer_instruction"},
		{"a multisig signer after the four accounts", func(p *chaintest.Payment) {
			ix := p.Instructions[2]
			data, _ := ix.Data()
			p.Instructions[2] = solana.NewInstruction(solana.TokenProgramID, append(ix.Accounts(), solana.Meta(solana.MustPublicKeyFromBase58(other))), data)
		}, 20_000, "invalid_exact_svm_payload_no_transfer_instruction"},
		{"other decimals", func(p *chaintest.Payment) {
			ix := p.Instructions[2]
			data, _ := ix.Data()
			data = append([]byte(nil), data...)
			data[9] = 9
			p.Instructions[2] = solana.NewInstruction(solana.TokenProgramID, ix.Accounts(), data)
		}, 20_000, "invalid_exact_svm_payload_mint_mismatch"},
		{"a memo over 256 bytes", func(p *chaintest.Payment) {
			p.Instructions[3] = solana.NewInstruction(chaintest.MemoProgram, nil, bytes.Repeat([]byte("m"), 257))
		}, 20_000, "invalid_exact_svm_payload_memo_mismatch"},
		{"a memo that is not UTF-8", func(p *chaintest.Payment) {
			p.Instructions[3] = solana.NewInstruction(chaintest.MemoProgram, nil, []byte{0xff, 0xfe})
		}, 20_000, "invalid_exact_svm_payload_memo_mismatch"},
		{"two memos", func(p *chaintest.Payment) {
			p.Instructions = append(p.Instructions, solana.NewInstruction(chaintest.MemoProgram, nil, []byte("again")))
		}, 20_000, "invalid_exact_svm_payload_memo_count"},
		{"Lighthouse sixth", func(p *chaintest.Payment) {
			p.Instructions = append(p.Instructions[:3], lighthouse(), lighthouse(), lighthouse())
		}, 20_000, "invalid_exact_svm_payload_unknown_sixth_instruction"},
		{"a delegate's transfer from another account", func(p *chaintest.Payment) {
			ix := p.Instructions[2]
			accts := ix.Accounts()
			data, _ := ix.Data()
			p.Instructions[2] = solana.NewInstruction(solana.TokenProgramID, solana.AccountMetaSlice{solana.Meta(solana.MustPublicKeyFromBase58(other)).WRITE(),
				accts[1], accts[2], accts[3]}, data)
		}, 20_000, "invalid_exact_svm_payload_transaction_could_not_be_decoded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := r.payment(t, 20_000)
			c.change(p)
			_, err := r.check(t, p, c.price)
			var pe *crtx.PaymentError
			if !errors.As(err, &pe) || pe.Reason != c.reason {
				t.Fatalf("got %v, want the reason %s", err, c.reason)
			}
		})
	}
}

// lighthouse is a wallet's Lighthouse assertion, as Phantom and Solflare
// add to a transaction they sign.
func lighthouse() solana.Instruction {
	return solana.NewInstruction(lighthouseProgram, solana.AccountMetaSlice{solana.Meta(solana.SysVarClockPubkey)}, []byte{1, 2, 3})
}

// TestCheckPaymentAcceptsWalletsLayouts: the layouts the scheme MUST
// allow, Phantom's (one Lighthouse instruction before the memo) and
// Solflare's (two), pass; the Lighthouse accounts are reported.
func TestCheckPaymentAcceptsWalletsLayouts(t *testing.T) {
	r := newX402Rig(t)
	for name, n := range map[string]int{"Phantom": 1, "Solflare": 2} {
		p := r.payment(t, 20_000)
		memo := p.Instructions[3]
		p.Instructions = p.Instructions[:3]
		for range n {
			p.Instructions = append(p.Instructions, lighthouse())
		}
		p.Instructions = append(p.Instructions, memo)
		got, err := r.check(t, p, 20_000)
		if err != nil {
			t.Errorf("%s's layout: %v", name, err)
			continue
		}
		if len(got.Keys) != 1 || got.Keys[0] != solana.SysVarClockPubkey.String() {
			t.Errorf("%s's layout: extra keys %v", name, got.Keys)
		}
	}
}

// TestCheckPaymentRefusesAForgedSignature: a transaction whose payer's
// signature does not verify is refused before any RPC call could be made.
func TestCheckPaymentRefusesAForgedSignature(t *testing.T) {
	r := newX402Rig(t)
	raw, _ := base64.StdEncoding.DecodeString(r.payment(t, 20_000).Encode(t, r.blockhash))
	raw[1+64+3] ^= 1 // the payer's signature
	_, err := checkPayment(raw, r.treasury, r.mint, r.destination, crtx.PaymentTerms{Amount: 20_000})
	var pe *crtx.PaymentError
	if !errors.As(err, &pe) || pe.Reason != "invalid_exact_svm_payload_signature" {
		t.Fatalf("got %v, want a signature refusal", err)
	}
}

// FuzzCheckPayment: any bytes are refused with a *PaymentError or
// accepted as a payment of the price, never a panic.
func FuzzCheckPayment(f *testing.F) {
	r := newX402Rig(&testing.T{})
	good, _ := base64.StdEncoding.DecodeString(r.payment(&testing.T{}, 20_000).Encode(&testing.T{}, r.blockhash))
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := checkPayment(raw, r.treasury, r.mint, r.destination, crtx.PaymentTerms{Amount: 20_000})
		var pe *crtx.PaymentError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("not a payment refusal: %v", err)
		}
		if err == nil && (p.Payer == "" || len(p.Signed) != len(raw)) {
			t.Fatalf("accepted without a payer or with other bytes: %+v", p)
		}
	})
}
