package crtx

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func sampleMessage() SignInMessage {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	return SignInMessage{Domain: "127.0.0.1:8080", Wallet: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T",
		URI: "http://127.0.0.1:8080", Nonce: "abcDEF123456", IssuedAt: now, ExpirationTime: now.Add(5 * time.Minute)}
}

func TestSignInMessageRoundTrip(t *testing.T) {
	m := sampleMessage()
	got, err := ParseSignInMessage(m.String())
	if err != nil {
		t.Fatal(err)
	}
	if got != m {
		t.Fatalf("round trip changed the message:\n%+v\n%+v", got, m)
	}
}

// TestSignInMessageText pins the exact text, in the field order of
// @solana/wallet-standard-util's createSignInMessageText.
func TestSignInMessageText(t *testing.T) {
	want := "127.0.0.1:8080 wants you to sign in with your Solana account:\n" +
		"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T\n" +
		"\n" +
		"Sign in to the crtx marketplace.\n" +
		"\n" +
		"URI: http://127.0.0.1:8080\n" +
		"Version: 1\n" +
		"Chain ID: crtx:marketplace\n" +
		"Nonce: abcDEF123456\n" +
		"Issued At: 2026-11-22T09:00:00Z\n" +
		"Expiration Time: 2026-11-22T09:05:00Z"
	if got := sampleMessage().String(); got != want {
		t.Fatalf("message:\n%s\nwant:\n%s", got, want)
	}
}

// TestSignInChainIDIsCAIP2 checks the chain id against CAIP-2's syntax.
func TestSignInChainIDIsCAIP2(t *testing.T) {
	if !regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`).MatchString(SignInChainID) {
		t.Fatalf("%q is not a CAIP-2 chain id", SignInChainID)
	}
}

func TestSignInMessageRejects(t *testing.T) {
	good := sampleMessage().String()
	cases := map[string]string{
		"empty":        "",
		"crlf":         strings.ReplaceAll(good, "\n", "\r\n"),
		"extra line":   good + "\n",
		"short nonce":  strings.Replace(good, "Nonce: abcDEF123456", "Nonce: abc", 1),
		"odd nonce":    strings.Replace(good, "Nonce: abcDEF123456", "Nonce: abc-DEF-123456", 1),
		"version":      strings.Replace(good, "Version: 1", "Version: 2", 1),
		"local time":   strings.Replace(good, "T09:00:00Z", "T09:00:00+01:00", 1),
		"no domain":    strings.Replace(good, "127.0.0.1:8080 wants", " wants", 1),
		"statement":    strings.Replace(good, signInStatement, "Send all funds.", 1),
		"missing uri":  strings.Replace(good, "URI: ", "URL: ", 1),
		"bad time":     strings.Replace(good, "2026-11-22T09:05:00Z", "tomorrow", 1),
		"domain space": strings.Replace(good, "127.0.0.1:8080 wants", "a b wants", 1),
		"no chain id":  strings.Replace(good, "Chain ID: "+SignInChainID+"\n", "", 1),
		"empty chain":  strings.Replace(good, "Chain ID: "+SignInChainID, "Chain ID: ", 1),
		"solana chain": strings.Replace(good, "Chain ID: "+SignInChainID, "Chain ID: mainnet", 1),
		"environment":  strings.Replace(good, "Chain ID: "+SignInChainID, "Chain ID: crtx:devnet", 1),
		"chain spaced": strings.Replace(good, "Chain ID: "+SignInChainID, "Chain ID: "+SignInChainID+" ", 1),
		"chain case":   strings.Replace(good, "Chain ID: "+SignInChainID, "Chain Id: "+SignInChainID, 1),
		"chain moved": strings.Replace(strings.Replace(good, "Chain ID: "+SignInChainID+"\n", "", 1),
			"Nonce: abcDEF123456\n", "Nonce: abcDEF123456\nChain ID: "+SignInChainID+"\n", 1),
	}
	for name, text := range cases {
		if _, err := ParseSignInMessage(text); !errors.Is(err, ErrSignInMessage) {
			t.Errorf("%s: got %v, want ErrSignInMessage", name, err)
		}
	}
}

func FuzzParseSignInMessage(f *testing.F) {
	f.Add(sampleMessage().String())
	f.Add("x wants you to sign in with your Solana account:\n")
	// The layout before the Chain ID line, which must not parse.
	f.Add(strings.Replace(sampleMessage().String(), "Chain ID: "+SignInChainID+"\n", "", 1))
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseSignInMessage(text)
		if err != nil {
			return
		}
		// Whatever parses must print back to the very bytes that were signed.
		if m.String() != text {
			t.Fatalf("parsed message prints differently:\n%q\n%q", text, m.String())
		}
	})
}
