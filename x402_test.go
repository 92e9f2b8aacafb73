package crtx

import (
	"encoding/base64"
	"errors"
	"testing"
)

// FuzzDecodePaymentPayload: any header is a PaymentPayload of version 2,
// the exact scheme and a transaction, or an invalid_request naming the
// header; never a panic.
func FuzzDecodePaymentPayload(f *testing.F) {
	f.Add(EncodeHeader(PaymentPayload{X402Version: 2, Accepted: PaymentRequirements{Scheme: SchemeExact}}))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{"transaction":"AA=="}}`)))
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := DecodePaymentPayload(header)
		var e *Error
		switch {
		case err != nil && (!errors.As(err, &e) || e.Code != CodeInvalidRequest || e.Field != HeaderPaymentSignature):
			t.Fatalf("not an invalid_request of the header: %v", err)
		case err == nil && (p.X402Version != X402Version || p.Accepted.Scheme != SchemeExact || p.Payload.Transaction == ""):
			t.Fatalf("accepted %+v", p)
		}
	})
}

// FuzzDecodeSIWx: any header is a Solana sign-in-with-x proof or an
// invalid_request naming the header; a decoded proof's message and
// verification never panic.
func FuzzDecodeSIWx(f *testing.F) {
	f.Add(EncodeHeader(SIWxPayload{ChainID: "solana:abc", Type: "ed25519", Address: "x", Signature: "y"}))
	f.Add("")
	f.Add("e30=")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := DecodeSIWx(header)
		var e *Error
		if err != nil {
			if !errors.As(err, &e) || e.Code != CodeInvalidRequest || e.Field != HeaderSignInWithX {
				t.Fatalf("not an invalid_request of the header: %v", err)
			}
			return
		}
		_ = p.Message()
		if p.Verify() == nil && p.Signature == "" {
			t.Fatal("a proof without a signature verified")
		}
	})
}
