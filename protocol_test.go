package crtx

import (
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
	cases := map[string]struct {
		mutate func(*CreatorReply)
		kind   string
	}{
		"wrong id":        {func(r *CreatorReply) { r.ExecutionID = "e2" }, CodeInvalidAgentResponse},
		"unknown status":  {func(r *CreatorReply) { r.Status = "done" }, CodeInvalidAgentResponse},
		"no result":       {func(r *CreatorReply) { r.Result = nil }, CodeInvalidAgentResponse},
		"failed no error": {func(r *CreatorReply) { r.Status = "failed"; r.Result, r.ResultHash, r.Signature = nil, nil, nil }, CodeInvalidAgentResponse},
		"failed w result": {func(r *CreatorReply) { r.Status = "failed"; r.Error = str("x") }, CodeInvalidAgentResponse},
		"hash of other":   {func(r *CreatorReply) { r.ResultHash = str(ResultHash("43")) }, CodeInvalidSignature},
		"other key":       {func(r *CreatorReply) { r.Signature = str(SignResult(other, *r.ResultHash)) }, CodeInvalidSignature},
		"no prefix":       {func(r *CreatorReply) { r.Signature = str(SignBase58(key, []byte(*r.ResultHash))) }, CodeInvalidSignature},
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

func TestRequestSignature(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	sig := RequestSignature(key, "1700000000", []byte(`{"a":1}`))
	if !VerifyRequestSignature(pub, "1700000000", []byte(`{"a":1}`), sig) {
		t.Fatal("does not verify")
	}
	if VerifyRequestSignature(pub, "1700000001", []byte(`{"a":1}`), sig) || VerifyRequestSignature(pub, "1700000000", []byte(`{"a":2}`), sig) {
		t.Fatal("verifies another timestamp or body")
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
