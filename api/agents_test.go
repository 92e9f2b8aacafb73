package api

import (
	"sync/atomic"
	"testing"
)

// A kept page (and every copy of it) is encoded and compressed once; a page
// that is not kept is compressed on each call.
func TestKeptPageCompressedOnce(t *testing.T) {
	var calls atomic.Int32
	compress := func(b []byte) []byte { calls.Add(1); return append([]byte("z:"), b...) }
	kept := AgentPage{Agents: []AgentSummary{{AgentFacts: AgentFacts{AgentID: "agt_1"}}}, Page: Page{Total: 1, Limit: 20}}.Kept()
	for _, p := range []AgentPage{kept, kept} {
		b, err := p.CompressedJSON(compress)
		if err != nil || string(b[:2]) != "z:" {
			t.Fatalf("CompressedJSON = %q, %v", b, err)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("kept page compressed %d times", calls.Load())
	}
	kept.encoded = nil
	kept.CompressedJSON(compress)
	kept.CompressedJSON(compress)
	if calls.Load() != 3 {
		t.Fatalf("page not kept: compressed %d times in all, want 3", calls.Load())
	}
}
