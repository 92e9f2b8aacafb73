// Package siwx is x402's sign-in-with-x extension
// (specs/extensions/sign-in-with-x.md): a wallet that paid with x402 proves
// it is that wallet by signing a Sign-In-With-Solana message, and so reads
// its executions without an account or an API key. It holds the
// extension's documents, its header's codec and the proof's signature
// check; which challenges a server takes is the server's.
package siwx

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// Key is the extension's key in a PaymentRequired's extensions.
const Key = "sign-in-with-x"

// Header carries the proof (base64 JSON of a Payload).
const Header = "SIGN-IN-WITH-X"

// MaxAge is how long after its issuedAt a proof is taken: the
// extension's default ("MUST be recent (default: < 5 minutes)").
const MaxAge = 5 * time.Minute

// TimeLayout is how issuedAt and expirationTime are written: ISO 8601 in
// UTC with milliseconds, as JavaScript's toISOString writes them.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Schema is the JSON Schema of the proof, as the extension declares it.
var Schema = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"domain":{"type":"string"},"address":{"type":"string"},"statement":{"type":"string"},` +
	`"uri":{"type":"string","format":"uri"},"version":{"type":"string"},"chainId":{"type":"string"},"type":{"type":"string"},` +
	`"nonce":{"type":"string"},"issuedAt":{"type":"string","format":"date-time"},"expirationTime":{"type":"string","format":"date-time"},` +
	`"notBefore":{"type":"string","format":"date-time"},"requestId":{"type":"string"},"resources":{"type":"array","items":{"type":"string","format":"uri"}},` +
	`"signature":{"type":"string"}},"required":["domain","address","uri","version","chainId","type","nonce","issuedAt","signature"]}`)

// Info is what the server declares (the extension's info): the
// message's fields but the address and the chain.
type Info struct {
	Domain         string   `json:"domain"`
	URI            string   `json:"uri"`
	Version        string   `json:"version"`
	Nonce          string   `json:"nonce"`
	IssuedAt       string   `json:"issuedAt"`
	ExpirationTime string   `json:"expirationTime,omitempty"`
	Statement      string   `json:"statement,omitempty"`
	Resources      []string `json:"resources,omitempty"`
}

// Chain is one way to sign in: a CAIP-2 chain and its signature type.
type Chain struct {
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	SignatureScheme string `json:"signatureScheme,omitempty"`
}

// Extension is the extension as declared in a PaymentRequired.
type Extension struct {
	Info            Info            `json:"info"`
	SupportedChains []Chain         `json:"supportedChains"`
	Schema          json.RawMessage `json:"schema"`
}

// Payload is the client's proof: the info it echoes, its address and
// chain, and its signature (base58 for Solana).
type Payload struct {
	Info
	Address         string `json:"address"`
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	SignatureScheme string `json:"signatureScheme,omitempty"`
	NotBefore       string `json:"notBefore,omitempty"`
	RequestID       string `json:"requestId,omitempty"`
	Signature       string `json:"signature"`
}

// Decode reads a SIGN-IN-WITH-X header; anything else is
// invalid_request naming the header.
func Decode(header string) (Payload, error) {
	var p Payload
	bad := func(format string, args ...any) (Payload, error) {
		return Payload{}, crtx.InvalidField(Header, format, args...)
	}
	if len(header) > x402.MaxHeader {
		return bad("at most %d bytes", x402.MaxHeader)
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
func (p Payload) Message() string {
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
func (p Payload) Verify() error {
	pub, err := crtx.ParseAddress("address", p.Address)
	if err != nil {
		return err
	}
	if !crtx.VerifyBase58(pub, []byte(p.Message()), p.Signature) {
		return crtx.Errorf(crtx.CodeInvalidSignature, "the sign-in-with-x signature does not verify for %s", p.Address)
	}
	return nil
}
