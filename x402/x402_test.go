package x402

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/crtx-market/crtx"
)

// FuzzDecodePaymentPayload: any header is a PaymentPayload of version 2,
// the exact scheme and a transaction, or an invalid_request naming the
// header; never a panic.
func FuzzDecodePaymentPayload(f *testing.F) {
	f.Add(EncodeHeader(PaymentPayload{X402Version: Version, Accepted: PaymentRequirements{Scheme: SchemeExact}}))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{"transaction":"AA=="}}`)))
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := DecodePaymentPayload(header)
		var e *crtx.Error
		switch {
		case err != nil && (!errors.As(err, &e) || e.Code != crtx.CodeInvalidRequest || e.Field != HeaderPaymentSignature):
			t.Fatalf("not an invalid_request of the header: %v", err)
		case err == nil && (p.X402Version != Version || p.Accepted.Scheme != SchemeExact || p.Payload.Transaction == ""):
			t.Fatalf("accepted %+v", p)
		}
	})
}
