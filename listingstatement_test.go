package crtx

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"testing"
)

// The example of docs/creators.md, "The listing statement": the creator's
// key has the seed of 32 bytes 0x01, the agent's 32 bytes 0x02. Ed25519 is
// deterministic, so the signatures are fixed too, for other implementations
// to check themselves against.
func TestListingStatementExample(t *testing.T) {
	creatorKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	agentKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))
	creator, key := Address(creatorKey.Public().(ed25519.PublicKey)), Address(agentKey.Public().(ed25519.PublicKey))
	if creator != "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9" || key != "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu" {
		t.Fatalf("keys %s, %s", creator, key)
	}
	for _, tc := range []struct {
		kind              TxKind
		data              map[string]string
		stmt, sig, keySig string // keySig "": none (written before key signatures)
	}{
		// As written today: the marketplace's nonce and host in the
		// statement, and for a key change the key transaction it replaces,
		// signed by the wallet and by the agent's key.
		{TxAgentListed, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "name": "Word counter",
			"price_per_call_usdc": "0.05", "signing_public_key": key, "listing_nonce": "lst_4fQx9ZbT2mKpW7sLrN3vYc", "marketplace": "crtx.example.com", "status": "active"},
			`{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed","listing_nonce":"lst_4fQx9ZbT2mKpW7sLrN3vYc","marketplace":"crtx.example.com","name":"Word counter","price_per_call_usdc":"0.05","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"4o25uJmrJEQbHLFgA2HzoFhUmLkc4AprU6m18UeWfGhEYZ6mUMQiYoPPGsZgrvcZKsmJojSQj33tE6EREKch1gmq",
			"YjDLAxbNWVn3i5TnVfK52GJwbR6DNESfo3idFqDpnAwPhASYdBpN4iEQk7jsN5RYN7K3rcCjYtppYChCSdYcWFX"},
		{TxListingUpdated, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "signing_public_key": key,
			"listing_nonce": "lst_8HdN2kVq5TzR1wLmXp7bJe", "marketplace": "crtx.example.com", "replaces": "3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5", "changed": "signing_public_key"},
			`{"agent_id":"agt_8zmONHevjO0ED8RI","creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"ListingUpdated","listing_nonce":"lst_8HdN2kVq5TzR1wLmXp7bJe","marketplace":"crtx.example.com","replaces":"3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"4BBpMvqPyYo6y9aXASoWNMZq4VTYkzkTGopsLGRR3KfgDpMpTfycrSXoD3EKjHbEyyuTsNjhp8896pKKb3XvFz6Y",
			"4jZ7emfPtT3mcnsZm99XN2ZvggLSDW5azqdxqEegM5LxuutcFgumM5Z7qbjoZzhndwUmHVNdLPjEUGwJuVtszwGU"},
		// Written with nonces, before statements named the marketplace and
		// the key they replace: still checked as signed.
		{TxAgentListed, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "name": "Word counter",
			"price_per_call_usdc": "0.05", "signing_public_key": key, "listing_nonce": "lst_4fQx9ZbT2mKpW7sLrN3vYc", "status": "active"},
			`{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed","listing_nonce":"lst_4fQx9ZbT2mKpW7sLrN3vYc","name":"Word counter","price_per_call_usdc":"0.05","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"2ZjwHTX29hAtenTPDEaG9pNvXHfwpv6WaUggtt6LxjECzd6NXk6cFuZH83ZCC3vF6tsrkysWAYGUYeY6Ehemvddg",
			"3eQ5j8CsaEHYEh1xMFfKQn2qC1GGpDjB3cdVFZYdv4amucyK8JLr3QTF3tLUcxZ4eo78CNKBuNSFgqpRXD6NF9i4"},
		{TxListingUpdated, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "signing_public_key": key,
			"listing_nonce": "lst_8HdN2kVq5TzR1wLmXp7bJe", "changed": "signing_public_key"},
			`{"agent_id":"agt_8zmONHevjO0ED8RI","creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"ListingUpdated","listing_nonce":"lst_8HdN2kVq5TzR1wLmXp7bJe","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"5i8GgJoHSb4SHVMbPmevBi5ZQP8gqCWvt2hx1obc1RihALq9FppYe692DEfxotjCn37KcRYWoyDQgZ4grncCGAvM",
			"3siUH3VKX83xaiWMekTfhEhQKQjCmbEgEomK5ikscS3V9cipFARpcMA91pMPtSGnXFbVfXUdHX3YvxyAGv5cn69C"},
		// Written before nonces and key signatures: still checked as signed.
		// The data of an AgentListed as written: members outside the
		// statement (agent_id, status, metadata_hash) are not signed.
		{TxAgentListed, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "name": "Word counter",
			"price_per_call_usdc": "0.05", "signing_public_key": key, "status": "active", "metadata_hash": "sha256:00"},
			`{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed","name":"Word counter","price_per_call_usdc":"0.05","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"2tMCMUvaAsc3GNG6zNSTJZaW8h74MNAoZzc9FjUpwCEvGbtYvYmpvgeH95qAdEkr978AULz5MhaVLNzrujQwJErw", ""},
		{TxListingUpdated, map[string]string{"agent_id": "agt_8zmONHevjO0ED8RI", "creator": creator, "signing_public_key": key,
			"name": "Word counter", "changed": "signing_public_key"},
			`{"agent_id":"agt_8zmONHevjO0ED8RI","creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"ListingUpdated","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}`,
			"2rzTKuRXpPEPLGWA83eAQnE8MqXHBmB4WLvh4EukAqYzWSgMLzt8ZJvguHKcgkBNPeSR4tLk7WetT8LB6RnhoyHr", ""},
	} {
		got, err := ListingStatement(tc.kind, tc.data)
		if err != nil || string(got) != tc.stmt {
			t.Errorf("%s statement:\n got %s, %v\nwant %s", tc.kind, got, err, tc.stmt)
		}
		if sig := SignBase58(creatorKey, got); sig != tc.sig {
			t.Errorf("%s signature %s, want %s", tc.kind, sig, tc.sig)
		}
		if !VerifyBase58(creatorKey.Public().(ed25519.PublicKey), got, tc.sig) {
			t.Errorf("%s signature does not verify", tc.kind)
		}
		if sig := SignBase58(agentKey, got); tc.keySig != "" && sig != tc.keySig {
			t.Errorf("%s key signature %s, want %s", tc.kind, sig, tc.keySig)
		}
	}
}

// The statement is the RFC 8785 form, whatever the text holds: no HTML
// escapes as encoding/json writes them, characters beyond ASCII as they are,
// control characters in RFC 8785's escapes. It is also what sorting the
// members and JSON.stringify give, which is how the dashboard signs.
func TestListingStatementIsCanonical(t *testing.T) {
	for _, name := range []string{"Word counter", `Q&A <fast> "quoted" \ back`, "Café ☕ 😀", "tab\there\u2028", "\u007f\u0001"} {
		data := map[string]string{"creator": "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9", "name": name,
			"price_per_call_usdc": "1.000001", "signing_public_key": "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}
		got, err := ListingStatement(TxAgentListed, data)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		canon, err := CanonicalJSON(got)
		if err != nil || !bytes.Equal(canon, got) {
			t.Errorf("%q: statement %s is not canonical (%s, %v)", name, got, canon, err)
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || back["name"] != name || back["kind"] != "AgentListed" || len(back) != 5 {
			t.Errorf("%q: statement %s reads back as %v, %v", name, got, back, err)
		}
		if bytes.Contains(got, []byte(`\u003c`)) || bytes.Contains(got, []byte(`\u0026`)) {
			t.Errorf("%q: statement %s has encoding/json's HTML escapes", name, got)
		}
	}
}

func TestListingStatementRefusals(t *testing.T) {
	good := map[string]string{"agent_id": "agt_1", "creator": "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9", "name": "N",
		"price_per_call_usdc": "0.05", "signing_public_key": "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range good {
			out[kk] = vv
		}
		out[k] = v
		return out
	}
	for name, tc := range map[string]struct {
		kind TxKind
		data map[string]string
	}{
		"delisting":           {TxAgentDelisted, good},
		"no creator":          {TxAgentListed, with("creator", "")},
		"no key":              {TxListingUpdated, with("signing_public_key", "")},
		"no agent id":         {TxListingUpdated, with("agent_id", "")},
		"price spelled 0.050": {TxAgentListed, with("price_per_call_usdc", "0.050")},
		"price as a float":    {TxAgentListed, with("price_per_call_usdc", "5e-2")},
		"price not a number":  {TxAgentListed, with("price_per_call_usdc", "five cents")},
		"name not UTF-8":      {TxAgentListed, with("name", "caf\xe9")},
		"empty marketplace":   {TxAgentListed, with("marketplace", "")},
		"marketplace a URL":   {TxAgentListed, with("marketplace", "https://crtx.example.com/")},
		"empty replaces":      {TxListingUpdated, with("replaces", "")},
	} {
		if b, err := ListingStatement(tc.kind, tc.data); !errors.Is(err, ErrListingStatement) {
			t.Errorf("%s: %s, %v", name, b, err)
		}
	}
	// An AgentListed replaces nothing: a replaces in its data is not signed.
	if b, err := ListingStatement(TxAgentListed, with("replaces", "x")); err != nil || bytes.Contains(b, []byte("replaces")) {
		t.Errorf("an AgentListed with replaces: %s, %v", b, err)
	}
	// A ListingUpdated signs neither the name nor the price.
	if _, err := ListingStatement(TxListingUpdated, with("price_per_call_usdc", "")); err != nil {
		t.Errorf("a key change without a price: %v", err)
	}
}
