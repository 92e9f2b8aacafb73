package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// FuzzReadReceipt: a receipt read is one whose members are all the
// layout's, each named once in any case, and whose signed bytes are the
// canonical form of what it returns, so a signature over them covers all
// it states.
func FuzzReadReceipt(f *testing.F) {
	hash, done := "sha256:00", time.Date(2026, 11, 25, 18, 0, 0, 123, time.UTC)
	genuine, err := json.Marshal(Receipt{Version: 1, Issuer: "https://crtx.example", ExecutionID: "e1",
		Environment: crtx.Devnet, Status: crtx.ExecCompleted, Cost: 50_000, ResultHash: &hash, InitiatedAt: done,
		CompletedAt: &done, Signature: "ed25519:x"})
	if err != nil {
		f.Fatal(err)
	}
	if _, _, _, err := ReadReceipt(genuine); err != nil {
		f.Fatalf("a genuine receipt is refused: %v", err)
	}
	f.Add(genuine)
	for _, s := range []string{`{"COST_USDC":50,`, `{"note":1,`, `{"cost_usdc":50,`, `{"cost_uſdc":50,`, `{"signature":"a",`} {
		f.Add([]byte(s + string(genuine[1:])))
	}
	f.Add([]byte(`{}`))
	known := membersOf[Receipt]()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, signed, signature, err := ReadReceipt(data)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.Token() // {
		var seen []string
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				t.Fatalf("accepted %q, which encoding/json cannot read: %v", data, err)
			}
			for _, s := range seen {
				if strings.EqualFold(s, name.(string)) {
					t.Fatalf("accepted %q, which names %q twice", data, s)
				}
			}
			seen = append(seen, name.(string))
			if !slices.Contains(known, name.(string)) {
				t.Fatalf("accepted %q, which has the unknown member %q", data, name)
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("accepted %q: %v", data, err)
			}
		}
		if again, err := r.SignedBytes(); err != nil || !bytes.Equal(again, signed) {
			t.Fatalf("signed bytes %s are not those of the receipt read, %s (%v)", signed, again, err)
		}
		r.Signature = signature
		back, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if r2, signed2, _, err := ReadReceipt(back); err != nil || !bytes.Equal(signed2, signed) || !reflect.DeepEqual(r2, r) {
			t.Fatalf("the receipt read from %q does not read back: %v", data, err)
		}
	})
}
