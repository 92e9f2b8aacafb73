package a2a

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/protobuf/encoding/protojson"

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

// jwkOf is key as a JWK, named by its RFC 7638 thumbprint.
func jwkOf(key ed25519.PublicKey) jwk {
	pub := jwk{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(key)}
	// RFC 7638: the hash of the required members in lexicographic order,
	// without whitespace; x is base64url, so nothing needs escaping.
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + pub.X + `"}`))
	pub.Kid, pub.Alg, pub.Use = base64.RawURLEncoding.EncodeToString(sum[:]), "EdDSA", "sig"
	return pub
}

// newSigner signs with key; the key set also holds the other keys of a
// rotation of the marketplace key (rotating: the next, or the previous), so
// that a card signed by a replica that switched, or did not yet, verifies
// against the set any replica serves.
func newSigner(key ed25519.PrivateKey, publicURL string, rotating ...ed25519.PublicKey) *signer {
	pub := jwkOf(key.Public().(ed25519.PublicKey))
	keys := []jwk{pub}
	for _, k := range rotating {
		if k != nil {
			keys = append(keys, jwkOf(k))
		}
	}
	header, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
		Jku string `json:"jku"`
	}{"EdDSA", "JOSE", pub.Kid, publicURL + "/.well-known/jwks.json"})
	set, _ := json.Marshal(struct {
		Keys []jwk `json:"keys"`
	}{keys})
	return &signer{key: key, kid: pub.Kid, protected: base64.RawURLEncoding.EncodeToString(header), jwks: set}
}

// sign returns the card's JSON with its signature. What is signed is the
// JSON sent, canonicalized as §8.4.1 says, so a verifier that
// canonicalizes what it received (without "signatures") reproduces the
// payload byte for byte.
func (s *signer) sign(card *a2a.AgentCard) ([]byte, error) {
	card.Signatures = nil
	unsigned, err := cardJSON(card)
	if err != nil {
		return nil, err
	}
	payload, err := signedPayload(unsigned)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	input := s.protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	card.Signatures = []a2a.AgentCardSignature{{Protected: s.protected, Signature: base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, []byte(input)))}}
	return cardJSON(card)
}

// cardJSON is a card in A2A 1.0's normative form, the JSON mapping of its
// a2a.proto (§5, as protojson writes it): a security requirement's scopes
// are a StringList, {"list": [...]}, where the SDK's own Go JSON writes a
// bare list. Compacted: protojson varies its whitespace on purpose.
func cardJSON(card *a2a.AgentCard) ([]byte, error) {
	pc, err := pbconv.ToProtoAgentCard(card)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	b, err := protojson.Marshal(pc)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	return out.Bytes(), nil
}

// ParseCard reads an agent card in A2A 1.0's JSON form, as crtx serves it:
// an agentcard.Parser for the Go SDK's resolver, whose default parser reads
// the SDK's own Go JSON instead (agentcard.Resolver{CardParser: ParseCard}).
// Members a newer version adds are skipped.
func ParseCard(body []byte) (*a2a.AgentCard, error) {
	var pc a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &pc); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	return pbconv.FromProtoAgentCard(&pc)
}

// signedPayload is the card's JSON as A2A 1.0 §8.4.1 canonicalizes it:
// values left at their default are excluded (a null, an empty string, an
// empty list or object, and so a member holding only such values), then
// RFC 8785. The SDKs do the same (the JavaScript SDK's
// canonicalizeAgentCard, the Python SDK's _clean_empty): a card that
// signs its null members is refused by them.
func signedPayload(card []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(card))
	d.UseNumber() // numbers pass through as written, for RFC 8785 to spell
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	v, _ = withoutDefaults(v)
	if v == nil {
		v = map[string]any{}
	}
	kept, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return crtx.CanonicalJSON(kept)
}

// withoutDefaults drops the default-valued members of v; ok is false when
// nothing of v is left. Numbers and booleans stay, zero and false too:
// where they are a message's fields the card already omits them at their
// default, and in a free-form value (an extension's params) they mean
// something.
func withoutDefaults(v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		return nil, false
	case string:
		return v, v != ""
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if e, ok := withoutDefaults(e); ok {
				out = append(out, e)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if e, ok := withoutDefaults(e); ok {
				out[k] = e
			}
		}
		return out, len(out) > 0
	}
	return v, true
}

// jwks serves the key set a card's jku names.
func (s *server) jwks(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(s.signer.jwks)
}
