package crtx

import (
	"crypto/ed25519"
	"math"
	"testing"
)

// A metered call costs its base and its tokens' price, the part of a
// micro-USDC dropped in the caller's favour, never more than its most.
func TestMeteredCharge(t *testing.T) {
	m := Metered{Base: 1_000, Per1k: 2_500, Max: 50_000} // 0.001 + 0.0025 per 1k tokens, at most 0.05
	for _, c := range []struct {
		tokens int64
		want   USDC
	}{
		{0, 1_000}, {-5, 1_000}, {1, 1_002}, // 2.5 micro dropped to 2
		{399, 1_997}, {400, 2_000}, {1_000, 3_500}, {19_600, 50_000}, {19_599, 49_997},
		{1 << 40, 50_000}, {math.MaxInt64, 50_000},
	} {
		if got := m.Charge(c.tokens); got != c.want {
			t.Errorf("Charge(%d) = %d, want %d", c.tokens, got, c.want)
		}
	}
	if got := (Metered{Base: 60_000, Per1k: 1, Max: 50_000}).Charge(0); got != 50_000 {
		t.Errorf("a base over the most: %d", got)
	}
	if got := (Metered{Base: 10, Per1k: MaxUSDC, Max: MaxUSDC}).Charge(math.MaxInt64); got != MaxUSDC {
		t.Errorf("an overflowing usage: %d", got)
	}
}

// The platform's fee on a metered charge is rounded up: a call that costs
// anything pays it something.
func TestSplitCharge(t *testing.T) {
	for _, c := range []struct {
		charge            USDC
		bps               int
		creator, platform USDC
	}{{3, 100, 2, 1}, {10_000, 100, 9_900, 100}, {10_001, 100, 9_900, 101}, {0, 100, 0, 0}, {5, 0, 5, 0}} {
		if cr, pl := SplitCharge(c.charge, c.bps); cr != c.creator || pl != c.platform {
			t.Errorf("SplitCharge(%d, %d) = %d, %d; want %d, %d", c.charge, c.bps, cr, pl, c.creator, c.platform)
		}
	}
}

// usageVector is the signature of TestUsageStatementVector's statement, as
// Python's cryptography package (48.0.0) makes it from the same key.
const usageVector = "ed25519:41qsc12ym9JRV5yy6gGtuwuSg3XkoxZcEBdMYsP5FB4CE7BHb56ut2Bqr3drNdr1Yc4CSshVBNTGgF1bmY8jtEBv"

// The usage statement byte for byte, and a signature over it from a fixed
// key: the test vector docs/creators.md gives creators' own code.
func TestUsageStatementVector(t *testing.T) {
	const id, hash = "01a2367e-0871-71f3-9730-8341caea378f", "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if got := string(UsageStatement(id, hash, 1234)); got != "crtx-usage-v1\n"+id+"\n"+hash+"\n1234" {
		t.Fatalf("statement %q", got)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)) // 32 zero bytes
	pub := key.Public().(ed25519.PublicKey)
	sig := SignUsage(key, id, hash, 1234)
	t.Logf("public key %s, signature %s", Address(pub), sig)
	if sig != usageVector {
		t.Errorf("signature %s, want %s", sig, usageVector)
	}
	if !VerifyUsage(pub, id, hash, 1234, sig) {
		t.Fatal("the signature does not verify")
	}
	for _, bad := range []struct {
		id, hash string
		tokens   int64
		sig      string
	}{{id, hash, 1235, sig}, {id + "x", hash, 1234, sig}, {id, hash, -1, sig}, {id, hash, 1234, sig[len("ed25519:"):]}, {id + "\n", hash, 1234, sig}} {
		if VerifyUsage(pub, bad.id, bad.hash, bad.tokens, bad.sig) {
			t.Errorf("verified %+v", bad)
		}
	}
}

// The most tokens a hold pays for: beyond them, the charge stays at the
// most.
func TestMeteredMaxTokens(t *testing.T) {
	m := Metered{Base: 1_000, Per1k: 2_500, Max: 50_000}
	if n := m.MaxTokens(); n != 19_600 || m.Charge(n) != 50_000 || m.Charge(n-1) >= 50_000 {
		t.Errorf("MaxTokens = %d (charge %d, one fewer %d)", n, m.Charge(n), m.Charge(n-1))
	}
	if n := (Metered{Base: 5, Per1k: 1, Max: 5}).MaxTokens(); n != 0 {
		t.Errorf("a most at the base pays for %d tokens", n)
	}
	if n := (Metered{Base: 100, Per1k: 1, Max: MaxPrice}).MaxTokens(); n != int64(MaxPrice-100)*1000 {
		t.Errorf("the largest: %d", n)
	}
}
