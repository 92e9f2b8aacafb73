package siwx

import (
	"errors"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// FuzzDecodeSIWx: any header is a Solana sign-in-with-x proof or an
// invalid_request naming the header; a decoded proof's message and
// verification never panic.
func FuzzDecodeSIWx(f *testing.F) {
	f.Add(x402.EncodeHeader(Payload{ChainID: "solana:abc", Type: "ed25519", Address: "x", Signature: "y"}))
	f.Add("")
	f.Add("e30=")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := Decode(header)
		var e *crtx.Error
		if err != nil {
			if !errors.As(err, &e) || e.Code != crtx.CodeInvalidRequest || e.Field != Header {
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
