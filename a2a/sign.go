package a2a

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// signer signs agent cards with the marketplace's signing key, the one
// published as signing_public_key at /.well-known/crtx.json, as A2A 1.0
// §8.4 says: a JWS whose payload, the RFC 8785 form of the card without
// its signatures, is detached (the card itself is the payload).
type signer struct {
	key ed25519.PrivateKey
	// kid is the key's RFC 7638 thumbprint: derived from the key alone,
	// so it names the same key on every replica and changes with it.
	kid string
	// protected is the encoded protected header, the same for every card.
	protected string
	// jwks is the key set at /.well-known/jwks.json, encoded once.
	jwks []byte
}

// jwk is an Ed25519 public key as RFC 8037 writes it.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

func newSigner(key ed25519.PrivateKey, publicURL string) *signer {
	pub := jwk{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(key.Public().(ed25519.PublicKey))}
	// RFC 7638: the hash of the required members in lexicographic order,
	// without whitespace; x is base64url, so nothing needs escaping.
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + pub.X + `"}`))
	pub.Kid, pub.Alg, pub.Use = base64.RawURLEncoding.EncodeToString(sum[:]), "EdDSA", "sig"
	header, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
		Jku string `json:"jku"`
	}{"EdDSA", "JOSE", pub.Kid, publicURL + "/.well-known/jwks.json"})
	set, _ := json.Marshal(struct {
		Keys []jwk `json:"keys"`
	}{[]jwk{pub}})
	return &signer{key: key, kid: pub.Kid, protected: base64.RawURLEncoding.EncodeToString(header), jwks: set}
}

// sign returns the card's JSON with its signature. What is signed is the
// JSON sent, canonicalized, so a verifier that canonicalizes what it
// received (without "signatures") reproduces the payload byte for byte.
func (s *signer) sign(card *a2a.AgentCard) ([]byte, error) {
	card.Signatures = nil
	unsigned, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	payload, err := crtx.CanonicalJSON(unsigned)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	input := s.protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	card.Signatures = []a2a.AgentCardSignature{{Protected: s.protected, Signature: base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, []byte(input)))}}
	signed, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	return signed, nil
}

// jwks serves the key set a card's jku names.
func (s *server) jwks(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(s.signer.jwks)
}
