package crtx

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// x402's sign-in-with-x extension (specs/extensions/sign-in-with-x.md):
// a wallet that paid with x402 proves it is that wallet by signing a
// Sign-In-With-Solana message, and so reads its executions without an
// account or an API key.

// SignInWithX is the extension's key and its header's name.
const SignInWithX = "sign-in-with-x"

// HeaderSignInWithX carries the proof (base64 JSON of a SIWxPayload).
const HeaderSignInWithX = "SIGN-IN-WITH-X"

// SIWxMaxAge is how long after its issuedAt a proof is taken: the
// extension's default ("MUST be recent (default: < 5 minutes)").
const SIWxMaxAge = 5 * time.Minute

// SIWxInfo is what the server declares (the extension's info): the
// message's fields but the address and the chain.
type SIWxInfo struct {
	Domain         string   `json:"domain"`
	URI            string   `json:"uri"`
	Version        string   `json:"version"`
	Nonce          string   `json:"nonce"`
	IssuedAt       string   `json:"issuedAt"`
	ExpirationTime string   `json:"expirationTime,omitempty"`
	Statement      string   `json:"statement,omitempty"`
	Resources      []string `json:"resources,omitempty"`
}

// SIWxChain is one way to sign in: a CAIP-2 chain and its signature type.
type SIWxChain struct {
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	SignatureScheme string `json:"signatureScheme,omitempty"`
}

// SIWxExtension is the extension as declared in a PaymentRequired.
type SIWxExtension struct {
	Info            SIWxInfo        `json:"info"`
	SupportedChains []SIWxChain     `json:"supportedChains"`
	Schema          json.RawMessage `json:"schema"`
}

// SIWxPayload is the client's proof: the info it echoes, its address and
// chain, and its signature (base58 for Solana).
type SIWxPayload struct {
	SIWxInfo
	Address         string `json:"address"`
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	SignatureScheme string `json:"signatureScheme,omitempty"`
	NotBefore       string `json:"notBefore,omitempty"`
	RequestID       string `json:"requestId,omitempty"`
	Signature       string `json:"signature"`
}

// DecodeSIWx reads a SIGN-IN-WITH-X header; anything else is
// invalid_request naming the header.
func DecodeSIWx(header string) (SIWxPayload, error) {
	var p SIWxPayload
	bad := func(format string, args ...any) (SIWxPayload, error) {
		return SIWxPayload{}, InvalidField(HeaderSignInWithX, format, args...)
	}
	if len(header) > MaxPaymentHeader {
		return bad("at most %d bytes", MaxPaymentHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(header); err != nil {
			return bad("not base64")
		}
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&p); err != nil {
		return bad("not a sign-in-with-x payload in JSON: %v", err)
	}
	if !strings.HasPrefix(p.ChainID, "solana:") || p.Type != "ed25519" {
		return bad("only Solana wallets (chainId solana:…, type ed25519) sign in here")
	}
	return p, nil
}

// Message is the Sign-In-With-Solana text the wallet signed, as the
// extension's Solana client writes it (CAIP-122; the Chain ID line is the
// CAIP-2 reference alone).
func (p SIWxPayload) Message() string {
	lines := []string{p.Domain + " wants you to sign in with your Solana account:", p.Address, ""}
	if p.Statement != "" {
		lines = append(lines, p.Statement, "")
	}
	_, ref, _ := strings.Cut(p.ChainID, ":")
	lines = append(lines, "URI: "+p.URI, "Version: "+p.Version, "Chain ID: "+ref, "Nonce: "+p.Nonce, "Issued At: "+p.IssuedAt)
	if p.ExpirationTime != "" {
		lines = append(lines, "Expiration Time: "+p.ExpirationTime)
	}
	if p.NotBefore != "" {
		lines = append(lines, "Not Before: "+p.NotBefore)
	}
	if p.RequestID != "" {
		lines = append(lines, "Request ID: "+p.RequestID)
	}
	if len(p.Resources) > 0 {
		lines = append(lines, "Resources:")
		for _, r := range p.Resources {
			lines = append(lines, "- "+r)
		}
	}
	return strings.Join(lines, "\n")
}

// Verify checks the proof's signature by its address over Message.
func (p SIWxPayload) Verify() error {
	pub, err := ParseAddress("address", p.Address)
	if err != nil {
		return err
	}
	if !VerifyBase58(pub, []byte(p.Message()), p.Signature) {
		return Errorf(CodeInvalidSignature, "the sign-in-with-x signature does not verify for %s", p.Address)
	}
	return nil
}
