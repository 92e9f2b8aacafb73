package crtx

import (
	"errors"
	"reflect"
	"testing"
)

const (
	mvines = "mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN"
	usdc   = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

// TestTransferRequestSpecExamples: the spec's examples parse to their
// fields and are written back byte for byte.
func TestTransferRequestSpecExamples(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want TransferRequest
	}{
		{
			"solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=1&label=Michael&message=Thanks%20for%20all%20the%20fish&memo=OrderId12345",
			TransferRequest{Recipient: mvines, Amount: 1_000_000, Label: "Michael", Message: "Thanks for all the fish", Memo: "OrderId12345"},
		},
		{
			"solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
			TransferRequest{Recipient: mvines, Amount: 10_000, SPLToken: usdc},
		},
		{
			"solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?label=Michael",
			TransferRequest{Recipient: mvines, Label: "Michael"},
		},
		{
			"solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN",
			TransferRequest{Recipient: mvines},
		},
	} {
		got, err := ParseTransferRequest(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", tc.url, got, tc.want)
		}
		if u := tc.want.URL(); u != tc.url {
			t.Fatalf("URL() = %s, want %s", u, tc.url)
		}
	}
}

// TestTransferRequestURL writes a deposit's request: every field in the
// spec's order, references in order, values escaped as
// encodeURIComponent escapes them.
func TestTransferRequestURL(t *testing.T) {
	r := TransferRequest{
		Recipient:  mvines,
		Amount:     2_500_001,
		SPLToken:   usdc,
		References: []string{usdc, mvines},
		Label:      "crtx market",
		Message:    "Deposit & credit: 100% (yes)",
		Memo:       "dep_1+é/?#",
	}
	want := "solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=2.500001&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" +
		"&reference=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&reference=mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN" +
		"&label=crtx%20market&message=Deposit%20%26%20credit%3A%20100%25%20(yes)&memo=dep_1%2B%C3%A9%2F%3F%23"
	if got := r.URL(); got != want {
		t.Fatalf("URL() =\n%s\nwant\n%s", got, want)
	}
	back, err := ParseTransferRequest(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("parsed back %+v, want %+v", back, r)
	}
	// A wallet reads '+' in a query as a space; the amount's leading zero
	// is the spec's.
	if got := (TransferRequest{Recipient: mvines, Amount: 5}).URL(); got != "solana:"+mvines+"?amount=0.000005" {
		t.Fatalf("URL() = %s", got)
	}
	p, err := ParseTransferRequest("solana:" + mvines + "?label=a+b&amount=007.50")
	if err != nil || p.Label != "a b" || p.Amount != 7_500_000 {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}

// TestTransferRequestMalformed: what the spec forbids is refused.
func TestTransferRequestMalformed(t *testing.T) {
	for _, s := range []string{
		"",
		"bitcoin:" + mvines,
		"solana:",
		"solana:notakey",
		"solana:" + mvines + "&label=Michael", // a query without '?'
		"solana:https%3A%2F%2Fexample.com%2Fpay",
		"solana:" + mvines + "?amount=1e3",
		"solana:" + mvines + "?amount=.5",
		"solana:" + mvines + "?amount=-1",
		"solana:" + mvines + "?amount=1.",
		"solana:" + mvines + "?amount=",
		"solana:" + mvines + "?amount=1.0000001",
		"solana:" + mvines + "?amount=1&amount=2",
		"solana:" + mvines + "?amount=10000000000000",
		"solana:" + mvines + "?spl-token=xyz",
		"solana:" + mvines + "?reference=" + usdc + "&reference=bad",
		"solana:" + mvines + "?label=a&label=b",
		"solana:" + mvines + "?memo=%FF",
		"solana:" + mvines + "?memo=%zz",
		"solana:" + mvines + "?memo=a#b",
	} {
		if r, err := ParseTransferRequest(s); !errors.Is(err, ErrTransferRequest) {
			t.Errorf("ParseTransferRequest(%q) = %+v, %v; want ErrTransferRequest", s, r, err)
		}
	}
}

// FuzzParseTransferRequest: whatever parses is written back to a URL that
// parses to the same request.
func FuzzParseTransferRequest(f *testing.F) {
	f.Add("solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=1&label=Michael&message=Thanks%20for%20all%20the%20fish&memo=OrderId12345")
	f.Add("solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	f.Add("solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?reference=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&label=a+b&x=y")
	f.Add("SOLANA:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=00.100000&memo=%C3%A9")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseTransferRequest(s)
		if err != nil {
			if !errors.Is(err, ErrTransferRequest) {
				t.Fatalf("ParseTransferRequest(%q) error %v does not wrap ErrTransferRequest", s, err)
			}
			return
		}
		u := r.URL()
		back, err := ParseTransferRequest(u)
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose URL %q does not parse: %v", s, r, u, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("%q parsed to %+v; its URL %q parses to %+v", s, r, u, back)
		}
		if again := back.URL(); again != u {
			t.Fatalf("URL not stable: %q then %q", u, again)
		}
	})
}
