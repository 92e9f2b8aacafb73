package crtx

import (
	"crypto/ed25519"
	"math/bits"
	"strconv"
	"strings"
)

// PricingMetered is the pricing model of a listing priced per token
// (CONTRACT §8, "Metered listings"); PricingPerCall the one of a fixed
// price a call.
const (
	PricingPerCall = "pay_per_use"
	PricingMetered = "metered"
)

// Metered is a metered listing's prices: a call costs Base and Per1k for
// each 1,000 tokens the creator signs it used, and never more than Max,
// which the escrow holds while the call runs.
type Metered struct {
	Base, Per1k, Max USDC
}

// Charge is what a call that used tokens costs: Base plus tokens × Per1k
// / 1,000, the part of a micro-USDC dropped (rounded in the caller's
// favour), capped at Max. Tokens below zero count as none.
func (m Metered) Charge(tokens int64) USDC {
	if tokens <= 0 || m.Per1k <= 0 {
		return min(m.Base, m.Max)
	}
	// tokens × Per1k may pass 2^63: multiplied in 128 bits.
	hi, lo := bits.Mul64(uint64(tokens), uint64(m.Per1k))
	if hi >= 1000 {
		return m.Max // the quotient would not fit 64 bits
	}
	usage, _ := bits.Div64(hi, lo, 1000)
	if usage >= uint64(m.Max) || uint64(m.Base) >= uint64(m.Max)-usage {
		return m.Max
	}
	return m.Base + USDC(usage)
}

// MaxTokens is the most tokens Max pays for: at more, the charge stays
// at Max.
func (m Metered) MaxTokens() int64 {
	if m.Per1k <= 0 || m.Max <= m.Base {
		return 0
	}
	// At most 10,000 USDC: 10^10 micro-USDC × 1,000 fits 64 bits.
	return int64(m.Max-m.Base) * 1000 / int64(m.Per1k)
}

// String says the prices as pages and the CLI show them: "0.001 USDC a
// call + 0.0025 per 1,000 tokens, at most 0.5 USDC".
func (m Metered) String() string {
	return m.Base.String() + " USDC a call + " + m.Per1k.String() + " per 1,000 tokens, at most " + m.Max.String() + " USDC"
}

// SplitCharge is Split for a metered charge: the platform's fee is
// rounded up, so that a call that costs anything pays the platform
// something (bps of a few micro-USDC would otherwise round to nothing).
func SplitCharge(charge USDC, bps int) (creator, platform USDC) {
	if charge <= 0 || bps <= 0 {
		return charge, 0
	}
	platform = USDC((int64(charge)*int64(bps) + 9999) / 10000)
	return charge - platform, platform
}

// usagePreamble starts the usage statement; versioned so that a later
// statement cannot be read as this one.
const usagePreamble = "crtx-usage-v1\n"

// UsageStatement is the bytes a creator signs for a metered call's usage:
// "crtx-usage-v1", the execution id, the result hash and the tokens used
// in decimal, apart by newlines (docs/creators.md).
func UsageStatement(executionID, resultHash string, tokens int64) []byte {
	return []byte(usagePreamble + executionID + "\n" + resultHash + "\n" + strconv.FormatInt(tokens, 10))
}

// SignUsage returns the "ed25519:"-prefixed base58 signature of a usage
// statement, as a creator of a metered listing signs it.
func SignUsage(key ed25519.PrivateKey, executionID, resultHash string, tokens int64) string {
	return "ed25519:" + SignBase58(key, UsageStatement(executionID, resultHash, tokens))
}

// VerifyUsage checks a usage signature made by SignUsage. An execution id
// or result hash that holds a newline, or a negative count, is refused: it
// would move the fields.
func VerifyUsage(pub ed25519.PublicKey, executionID, resultHash string, tokens int64, sig string) bool {
	if !strings.HasPrefix(sig, "ed25519:") || tokens < 0 || strings.ContainsAny(executionID+resultHash, "\n") {
		return false
	}
	return VerifyBase58(pub, UsageStatement(executionID, resultHash, tokens), sig)
}

// CheckUsage checks the usage of a completed reply to a metered call,
// checked already by CheckReply: its tokens_used, signed by key in its
// usage_signature. A reply without them is malformed; a signature that
// does not verify is invalid_signature, as a result's is.
func CheckUsage(r CreatorReply, key ed25519.PublicKey) error {
	if r.TokensUsed == nil || r.UsageSignature == nil {
		return &ReplyProblem{Kind: CodeInvalidAgentResponse,
			Message: "a metered agent's completed reply must carry tokens_used and usage_signature"}
	}
	if !VerifyUsage(key, r.ExecutionID, *r.ResultHash, *r.TokensUsed, *r.UsageSignature) {
		return &ReplyProblem{Kind: CodeInvalidSignature,
			Message: "the usage_signature does not verify against the listing's signing key"}
	}
	return nil
}
