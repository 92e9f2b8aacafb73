package crtx

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"testing"
)

func TestResultHashVector(t *testing.T) {
	// sha256("hello") and a multi-byte result, hashed over its UTF-8 bytes.
	if got := ResultHash("hello"); got != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatal(got)
	}
	if got := ResultHash("héllo ✓"); got != "sha256:5657cdef8a85a584e0e961e6f8247cf5d3f8ed21496ed6fdbcfd43a761e94245" {
		t.Fatal(got)
	}
}

func TestCheckReply(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	req := CreatorRequest{ExecutionID: "e1"}
	str := func(s string) *string { return &s }
	good := func() CreatorReply {
		res := "42 ✓"
		h := ResultHash(res)
		return CreatorReply{ExecutionID: "e1", Status: "completed", Result: &res, ResultHash: &h, Signature: str(SignResult(key, h))}
	}
	if err := CheckReply(req, good(), pub); err != nil {
		t.Fatalf("good reply: %v", err)
	}
	if err := CheckReply(req, CreatorReply{ExecutionID: "e1", Status: "failed", Error: str("no")}, pub); err != nil {
		t.Fatalf("good failure: %v", err)
	}
	if err := CheckReply(req, CreatorReply{ExecutionID: "e1", Status: "failed", Error: str("no"), ErrorCode: str(CodeInvalidInput)}, pub); err != nil {
		t.Fatalf("a refusal of the input: %v", err)
	}
	cases := map[string]struct {
		mutate func(*CreatorReply)
		kind   string
	}{
		"wrong id":        {func(r *CreatorReply) { r.ExecutionID = "e2" }, CodeInvalidAgentResponse},
		"unknown status":  {func(r *CreatorReply) { r.Status = "done" }, CodeInvalidAgentResponse},
		"no result":       {func(r *CreatorReply) { r.Result = nil }, CodeInvalidAgentResponse},
		"failed no error": {func(r *CreatorReply) { r.Status = "failed"; r.Result, r.ResultHash, r.Signature = nil, nil, nil }, CodeInvalidAgentResponse},
		"failed w result": {func(r *CreatorReply) { r.Status = "failed"; r.Error = str("x") }, CodeInvalidAgentResponse},
		"unknown failure code": {func(r *CreatorReply) {
			r.Status, r.Error, r.ErrorCode = "failed", str("x"), str("bad_input")
			r.Result, r.ResultHash, r.Signature = nil, nil, nil
		}, CodeInvalidAgentResponse},
		"completed with a code": {func(r *CreatorReply) { r.ErrorCode = str(CodeInvalidInput) }, CodeInvalidAgentResponse},
		"hash of other":         {func(r *CreatorReply) { r.ResultHash = str(ResultHash("43")) }, CodeInvalidSignature},
		"other key":             {func(r *CreatorReply) { r.Signature = str(SignResult(other, *r.ResultHash)) }, CodeInvalidSignature},
		"no prefix":             {func(r *CreatorReply) { r.Signature = str(SignBase58(key, []byte(*r.ResultHash))) }, CodeInvalidSignature},
		"too big": {func(r *CreatorReply) {
			big := string(make([]byte, MaxResultBytes+1))
			h := ResultHash(big)
			r.Result, r.ResultHash, r.Signature = &big, &h, str(SignResult(key, h))
		}, CodeInvalidAgentResponse},
	}
	for name, tc := range cases {
		r := good()
		tc.mutate(&r)
		var p *ReplyProblem
		if err := CheckReply(req, r, pub); !errors.As(err, &p) || p.Kind != tc.kind {
			t.Errorf("%s: %v, want %s", name, err, tc.kind)
		}
	}
}

// A request's signature covers whom it is for, its environment and test
// flag: changing any of them, or the timestamp or body, breaks it.
func TestRequestSignature(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	s := RequestScope{AgentID: "agt_a", SigningKey: "KeyA", Environment: Devnet}
	body := []byte(`{"a":1}`)
	sig := RequestSignature(key, s, "1700000000", body)
	if !VerifyRequestSignature(pub, s, "1700000000", body, sig) {
		t.Fatal("does not verify")
	}
	for name, other := range map[string]RequestScope{
		"agent":       {AgentID: "agt_b", SigningKey: "KeyA", Environment: Devnet},
		"no agent":    {SigningKey: "KeyA", Environment: Devnet},
		"key":         {AgentID: "agt_a", SigningKey: "KeyB", Environment: Devnet},
		"environment": {AgentID: "agt_a", SigningKey: "KeyA", Environment: Mainnet},
		"test":        {AgentID: "agt_a", SigningKey: "KeyA", Environment: Devnet, Test: true},
		"moved field": {AgentID: "agt_a\nKeyA", Environment: Devnet},
	} {
		if VerifyRequestSignature(pub, other, "1700000000", body, sig) {
			t.Errorf("verifies with another %s", name)
		}
	}
	if VerifyRequestSignature(pub, s, "1700000001", body, sig) || VerifyRequestSignature(pub, s, "1700000000", []byte(`{"a":2}`), sig) {
		t.Fatal("verifies another timestamp or body")
	}
	// A webhook's signature over "<timestamp>.<body>" is no request's.
	if VerifyRequestSignature(pub, s, "1700000000", body, TimestampSignature(key, "1700000000", body)) {
		t.Fatal("a timestamp signature passes for a request's")
	}
}

// The bytes signed, as docs/creators.md shows them for implementers in
// other languages: the marketplace key from the seed of 32 bytes 0x03.
func TestRequestSigningBytesExample(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	s := RequestScope{AgentID: "agt_8zmONHevjO0ED8RI", SigningKey: "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu", Environment: Mainnet}
	body := []byte(`{"execution_id":"e1","task":"hi","parameters":{},"user_pubkey":"U","timeout_seconds":60}`)
	want := "crtx-request-v2\n1700000000\nagt_8zmONHevjO0ED8RI\n9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu\nmainnet\nfalse\n" + string(body)
	if got := string(RequestSigningBytes(s, "1700000000", body)); got != want {
		t.Fatalf("signed bytes:\n%s\nwant\n%s", got, want)
	}
	if got := Address(key.Public().(ed25519.PublicKey)); got != "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse" {
		t.Errorf("marketplace key %s", got)
	}
	if got := RequestSignature(key, s, "1700000000", body); got != "ed25519:5qsstjTAMLcq3BYU9hHeo4WLaBefBuE1Yk8TC2JJYxAUmBVZSe5upmz5PsL7dpAwjf6yFqHY1DQoSWVZduX3YR53" {
		t.Errorf("X-Crtx-Signature: %s", got)
	}
}

// A creator's reply, whatever its bytes, decodes and is judged without
// panicking; what passes is a reply the marketplace can settle.
func FuzzCreatorReply(f *testing.F) {
	pub, key, _ := ed25519.GenerateKey(nil)
	res := "ok ✓"
	h := ResultHash(res)
	good, _ := json.Marshal(CreatorReply{ExecutionID: "e1", Status: "completed", Result: &res, ResultHash: &h, Signature: ptrTo(SignResult(key, h))})
	f.Add(good)
	f.Add([]byte(`{"execution_id":"e1","status":"failed","error":"no"}`))
	f.Add([]byte(`{"execution_id":"e1","status":"completed","result":null}`))
	f.Add([]byte(`[[[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r CreatorReply
		if json.Unmarshal(b, &r) != nil {
			return
		}
		if err := CheckReply(CreatorRequest{ExecutionID: "e1"}, r, pub); err == nil && r.Status == "completed" {
			if r.Result == nil || ResultHash(*r.Result) != *r.ResultHash || !VerifyBase58(pub, []byte(*r.ResultHash), *r.Signature) {
				t.Fatalf("an unverifiable reply passed: %s", b)
			}
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
